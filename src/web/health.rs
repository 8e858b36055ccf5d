//! `/healthz`: how this node is, for a proxy deciding whether to send it
//! cooks, and for the operator reading why not. Answered from what the
//! node keeps in memory (`Store::follow_report`, the log's reachability):
//! no call to PostgreSQL on a worker that serves pages.
//!
//! 503 when the node should be taken out of the pool: its store refuses
//! writes (a failed flush), the log is known out of reach, its follower
//! has failed for longer than `HealthLimits::failing_for`, has not read
//! the log to its end for longer than that, or lags the log by more than
//! `HealthLimits::max_lag` transactions. Reads go on being served in
//! every case, at the basis the answer gives.

use std::time::Duration;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpResponse};
use serde_json::json;

use super::Site;
use crate::domain::FollowReport;

/// When a node following a log calls itself unhealthy.
#[derive(Debug, Clone, Copy)]
pub struct HealthLimits {
    /// How long the follower may fail (or go without reading the log to
    /// its end) before health says 503: a blip shorter than this is
    /// reported, not acted on.
    pub failing_for: Duration,
    /// How many transactions the node may lag the log by.
    pub max_lag: u64,
}

impl Default for HealthLimits {
    /// Five seconds, five times the follower's poll; a thousand
    /// transactions, a few seconds of writes at the busiest the project
    /// has measured.
    fn default() -> HealthLimits {
        HealthLimits {
            failing_for: Duration::from_secs(5),
            max_lag: 1_000,
        }
    }
}

/// How long past `failing_for` a read of the log to its end may be
/// overdue: the follower reads it every second, and a read takes a moment.
const CHECK_SLACK: Duration = Duration::from_secs(2);

/// Why a node that follows a log should leave the pool, if it should.
fn trouble(
    report: &FollowReport,
    out_of_reach: Option<(Duration, String)>,
    limits: HealthLimits,
) -> Option<String> {
    // Past the same grace as a failing follower: every node shares the
    // one PostgreSQL, and a blip must not take them all out of the pool
    // at once (reads go on meanwhile; `log.reachable` says so).
    if let Some((down_for, why)) =
        out_of_reach.filter(|(down_for, _)| *down_for >= limits.failing_for)
    {
        return Some(format!(
            "log unreachable for {}s: serving reads, refusing writes ({why})",
            down_for.as_secs()
        ));
    }
    if let Some((failing, why)) = &report.failing {
        if *failing >= limits.failing_for {
            return Some(format!(
                "not following the log for {}s: {why}",
                failing.as_secs()
            ));
        }
    }
    if let Some(ago) = report.checked_ago {
        if ago > limits.failing_for + CHECK_SLACK {
            return Some(format!(
                "the log was last read to its end {}s ago",
                ago.as_secs()
            ));
        }
    }
    (report.behind > limits.max_lag).then(|| {
        format!(
            "{} transactions behind the log (more than {})",
            report.behind, limits.max_lag
        )
    })
}

pub async fn healthz(site: web::Data<Site>) -> HttpResponse {
    let recipes = site.recipes();
    let shown = recipes.snapshot().basis().get();
    let (status, body) = match (recipes.refuses_writes(), recipes.follow_report()) {
        // A node that can take no write falls behind: out of the pool.
        (Some(why), _) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": format!("refusing writes: {why}"), "basis": shown }),
        ),
        (None, None) => (StatusCode::OK, json!({ "status": "ok", "basis": shown })),
        (None, Some(report)) => following(&site, &report, shown),
    };
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .content_type("application/json")
        .body(body.to_string())
}

/// How a node that follows a log is, as `report` says and the log's
/// reachability: its status and body, with the log's figures.
fn following(site: &Site, report: &FollowReport, shown: u64) -> (StatusCode, serde_json::Value) {
    let out_of_reach = site.recipes().log_out_of_reach();
    let reachable = out_of_reach.is_none();
    let trouble = trouble(report, out_of_reach, site.health_limits());
    let millis = |ago: Option<Duration>| ago.map(|ago| ago.as_millis() as u64);
    let log = json!({
        "head": report.head,
        "lag": report.behind,
        "read_to_end_ms_ago": millis(report.checked_ago),
        "applied_ms_ago": millis(report.applied_ago),
        "error": report.failing.as_ref().map(|(_, why)| why),
        "failing_ms": millis(report.failing.as_ref().map(|(failing, _)| *failing)),
        "reachable": reachable,
    });
    match trouble {
        Some(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": why, "basis": shown, "log": log }),
        ),
        None => (
            StatusCode::OK,
            json!({ "status": "ok", "basis": shown, "log": log }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn well() -> FollowReport {
        FollowReport {
            head: 100,
            behind: 0,
            checked_ago: Some(Duration::from_millis(300)),
            applied_ago: None,
            failing: None,
        }
    }

    #[test]
    fn a_node_is_unhealthy_when_out_of_reach_failing_stale_or_behind_and_not_for_a_blip() {
        let limits = HealthLimits {
            failing_for: Duration::from_secs(5),
            max_lag: 10,
        };
        assert_eq!(trouble(&well(), None, limits), None);
        let blip = Some((Duration::from_secs(2), "refused".to_owned()));
        assert_eq!(
            trouble(&well(), blip, limits),
            None,
            "a blip is not acted on"
        );
        let unreachable = Some((Duration::from_secs(6), "refused".to_owned()));
        let said = trouble(&well(), unreachable, limits).unwrap();
        assert!(said.starts_with("log unreachable for 6s"), "{said}");

        let blip = FollowReport {
            failing: Some((Duration::from_secs(1), "a row".into())),
            ..well()
        };
        assert_eq!(trouble(&blip, None, limits), None, "a blip is not acted on");
        let failing = FollowReport {
            failing: Some((Duration::from_secs(6), "permission denied".into())),
            ..well()
        };
        let said = trouble(&failing, None, limits).unwrap();
        assert_eq!(said, "not following the log for 6s: permission denied");

        let stale = FollowReport {
            checked_ago: Some(Duration::from_secs(8)),
            ..well()
        };
        let said = trouble(&stale, None, limits).unwrap();
        assert_eq!(said, "the log was last read to its end 8s ago");

        let at_the_limit = FollowReport {
            behind: 10,
            ..well()
        };
        assert_eq!(trouble(&at_the_limit, None, limits), None);
        let behind = FollowReport {
            behind: 11,
            ..well()
        };
        let said = trouble(&behind, None, limits).unwrap();
        assert_eq!(said, "11 transactions behind the log (more than 10)");
    }
}
