//! `/metrics`: what this node has done since it started, as Prometheus
//! text: requests and their latency by route, the page cache's hits and
//! misses, the basis shown, and with a log its head, the lag and the
//! writes decided again. Recorded through the `metrics` facade where each
//! thing happens; rendered by its Prometheus exporter.

use std::sync::OnceLock;

use actix_web::http::{header, Method};
use actix_web::{web, HttpResponse};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use super::Site;
use crate::domain::{FollowReport, Recipes};

/// The latency histogram's name, and its buckets in seconds: a cached page
/// is tens of microseconds, a made one hundreds, a write milliseconds.
const REQUEST_SECONDS: &str = "forkful_request_seconds";
const BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5,
];

/// The process's recorder, installed on first use. `metrics` has one
/// global recorder a process, so every server of one process (the tests
/// make many) shares it, and its figures are the process's.
fn recorder() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(REQUEST_SECONDS.into()), &BUCKETS)
            .expect("a list of buckets")
            .build_recorder();
        let handle = recorder.handle();
        // Fails only if another recorder came first, which nothing here
        // installs: then this one renders nothing recorded.
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics will be empty");
        }
        keep_up(handle.clone());
        handle
    })
}

/// How often the histograms' samples are folded into their buckets.
const UPKEEP: std::time::Duration = std::time::Duration::from_secs(5);
/// The thread that does it, by name.
const UPKEEP_THREAD: &str = "metrics-upkeep";

/// Folds the histograms' samples into their buckets every `UPKEEP`, on a
/// thread of its own. The exporter keeps each sample until a scrape or an
/// upkeep drains it, and a recorder built rather than installed runs no
/// upkeep of its own: a node nobody scraped grew by every request's
/// sample, some 15 MiB for each 10 s of 80,000 requests a second
/// (docs/journal/55-million.md).
fn keep_up(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new()
        .name(UPKEEP_THREAD.into())
        .spawn(move || loop {
            std::thread::sleep(UPKEEP);
            handle.run_upkeep();
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "the metrics' upkeep could not start: histograms grow until scraped");
    }
}

/// Installs the recorder, so that what happens from now on is counted.
pub fn install() {
    recorder();
}

/// The pattern of the route a resource answers (`/recipes/{slug}`), kept
/// in each resource's data (`web::routes`): read back after the request,
/// with no second match of the path and no allocation.
#[derive(Debug, Clone, Copy)]
pub struct Route(pub &'static str);

/// What a request that matched no route is counted under.
pub const UNMATCHED: Route = Route("unmatched");

/// A request's series: its counter by route, method and status, and its
/// route's latency histogram.
type Series = (metrics::Counter, metrics::Histogram);

thread_local! {
    /// Each worker's handles on the series it has recorded into, so that a
    /// request costs a lookup and two atomic updates, not the labels'
    /// strings and the registry's hashing: a cached page is a few
    /// microseconds in all (measured: those made a hit 48% slower). The
    /// routes, methods and statuses are few, so this stays small.
    static SERIES: std::cell::RefCell<rustc_hash::FxHashMap<(&'static str, Method, u16), Series>> =
        Default::default();
}

/// One request answered: its route's pattern (never the path, which would
/// make a series per recipe), method and status, and how long it took.
pub fn request(route: Route, method: &Method, status: u16, seconds: f64) {
    // actix takes any method name: the series are for the site's own, and
    // one for all the rest, so that made-up methods make no new series.
    let method = match *method {
        Method::GET | Method::HEAD | Method::POST => method.clone(),
        _ => Method::OPTIONS,
    };
    let method = &method;
    SERIES.with(|series| {
        let mut series = series.borrow_mut();
        let (requests, latency) = series
            .entry((route.0, method.clone(), status))
            .or_insert_with(|| {
                (
                    metrics::counter!(
                        "forkful_requests_total",
                        "route" => route.0,
                        "method" => match *method {
                            Method::OPTIONS => "other".to_owned(),
                            _ => method.as_str().to_owned(),
                        },
                        "status" => status.to_string()
                    ),
                    metrics::histogram!(REQUEST_SECONDS, "route" => route.0),
                )
            });
        requests.increment(1);
        latency.record(seconds);
    });
}

/// Which pages a page cache figure counts: the long ones (the sitemap and
/// its files, the tags, a tag's recipes: `respond::long_page`, made off
/// the workers, a few at once) apart from the rest, since a miss of one
/// costs far more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    Long,
    Other,
}

/// A page asked of the page cache: found there, or made.
pub fn page_cache(hit: bool, kind: PageKind) {
    // The four series' handles, made once: looking one up by its labels
    // in the registry was 1% of the server's CPU on a kept page.
    static SERIES: OnceLock<[metrics::Counter; 4]> = OnceLock::new();
    let series = SERIES.get_or_init(|| {
        // Installed first, so that the handles are the recorder's.
        recorder();
        let counter = |outcome: &'static str, page: &'static str| {
            metrics::counter!("forkful_page_cache_total", "outcome" => outcome, "page" => page)
        };
        [
            counter("miss", "other"),
            counter("hit", "other"),
            counter("miss", "long"),
            counter("hit", "long"),
        ]
    });
    let long = match kind {
        PageKind::Long => 2,
        PageKind::Other => 0,
    };
    series[long + usize::from(hit)].increment(1);
}

/// The route: the recorded figures, then this site's position read now
/// (written here, not recorded: a process may serve more than one site,
/// as the tests do, and each shows its own). Never cached.
pub async fn serve(site: web::Data<Site>) -> HttpResponse {
    let recipes = site.recipes();
    let mut text = recorder().render();
    let text = &mut text;
    gauge(
        text,
        "forkful_basis",
        "The newest transaction this node shows.",
        "gauge",
        recipes.snapshot().basis().get(),
    );
    // From memory, as the follower last found the log: no call to it here.
    if let Some(report) = recipes.follow_report() {
        follower_figures(text, &report);
        log_figures(text, recipes);
    }
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(std::mem::take(text))
}

/// How the follower last found the log: its head, the lag, when it last
/// read it to its end and applied a row, and how long it has failed, why.
fn follower_figures(text: &mut String, report: &FollowReport) {
    gauge(
        text,
        "forkful_log_head",
        "The newest transaction in the log, when the follower last read it to its end.",
        "gauge",
        report.head,
    );
    gauge(
        text,
        "forkful_log_lag",
        "Transactions in the log this node did not show, when the follower last read it to its end.",
        "gauge",
        report.behind,
    );
    let seconds = |ago: Option<std::time::Duration>| {
        ago.map_or("-1".to_owned(), |ago| format!("{:.3}", ago.as_secs_f64()))
    };
    gauge(
        text,
        "forkful_log_read_to_end_seconds_ago",
        "How long ago the follower last read the log to its end (-1: not yet).",
        "gauge",
        seconds(report.checked_ago),
    );
    gauge(
        text,
        "forkful_log_applied_seconds_ago",
        "How long ago this node last applied a row of the log (-1: not since it started).",
        "gauge",
        seconds(report.applied_ago),
    );
    gauge(
        text,
        "forkful_log_failing_seconds",
        "How long the follower has been failing (0: its last read succeeded).",
        "gauge",
        seconds(Some(
            report
                .failing
                .as_ref()
                .map_or_else(Default::default, |f| f.0),
        )),
    );
    if let Some((_, error)) = &report.failing {
        gauge(
            text,
            &format!("forkful_log_last_error{{error=\"{}\"}}", label_value(error)),
            "The follower's last error, while it fails.",
            "gauge",
            1,
        );
    }
}

/// This node's own dealings with the log: whether it is within reach, and
/// the writes decided again.
fn log_figures(text: &mut String, recipes: &Recipes) {
    gauge(
        text,
        "forkful_log_reachable",
        "1 unless the log is known out of reach (its calls then fail at once until a probe reaches it).",
        "gauge",
        u64::from(recipes.log_out_of_reach().is_none()),
    );
    gauge(
        text,
        "forkful_log_write_retries_total",
        "Writes decided again because another node's reached the log first.",
        "counter",
        recipes.write_retries(),
    );
}

/// One figure of this site, with its help and type lines. `series` may
/// carry labels (`name{label="value"}`); the lines name the metric alone.
fn gauge(text: &mut String, series: &str, help: &str, kind: &str, value: impl std::fmt::Display) {
    let name = series.split('{').next().unwrap_or(series);
    text.push_str(&format!(
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{series} {value}\n"
    ));
}

/// `text` as a Prometheus label value: backslashes, quotes and line
/// breaks escaped, and cut to a length a scraper keeps.
fn label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().take(200) {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of this process's threads.
    fn threads() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .map(|name| name.trim().to_owned())
            .collect()
    }

    #[test]
    fn the_recorder_drains_its_histograms_whether_or_not_anyone_scrapes() {
        install();
        install();
        // A new thread names itself once it runs: until then it carries
        // the name of the thread that spawned it (seen in a CI run).
        let upkeep = || threads().iter().filter(|t| *t == UPKEEP_THREAD).count();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while upkeep() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(upkeep(), 1, "{:?}", threads());
    }
}
