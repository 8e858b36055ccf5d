//! The web: the URL table, thin handlers, and how pages are answered.
//!
//! A handler parses its request into typed values (a `Slug`, a version
//! number), reads a model from one pinned database value through the
//! domain, and hands it to a view. `respond::page` wraps that in the
//! conditional GET, ETag, Last-Modified and Server-Timing every page has;
//! `middleware` adds the security headers, compression and request logs.

mod account;
pub mod blocking;
pub mod caches;
pub mod catalog;
pub mod client_address;
pub mod error;
pub mod federation;
mod feeds;
mod following;
pub mod form_handling;
pub mod health;
pub mod memory_limit;
mod merge_forms;
mod merges;
pub mod metrics;
pub mod middleware;
pub mod page_cache;
mod pages;
pub mod personal;
mod pictures;
pub mod rate_limits;
pub mod read_your_writes;
mod recipe_import;
mod recipe_writes;
pub mod recipes;
pub mod respond;
mod reviews;
pub mod session;
pub(crate) mod submission;

use std::hash::Hasher as _;

use actix_web::{guard, web, HttpRequest, HttpResponse, Route};

use crate::domain::{Accounts, Recipes, Snapshot};
pub use error::WebError;

/// What every handler shares: the recipes and the site's public address.
pub struct Site {
    recipes: Recipes,
    /// The site's absolute URL without a trailing slash, for links that
    /// leave the page (JSON-LD, Atom, the sitemap, canonical links).
    base_url: String,
    /// What a page's bytes depend on besides the data: the build (its
    /// sources and assets) and the base URL. Part of every ETag.
    edition: u64,
    /// Cooks' accounts, opened on first use (opening hashes a password,
    /// which pages that nobody logs in to need not pay for).
    accounts: std::sync::OnceLock<Accounts>,
    /// Password attempts per client address and per account.
    attempts: rate_limits::AttemptLimit,
    /// Whose word on a client's address is believed.
    trusted_proxies: client_address::TrustedProxies,
    /// Argon2 runs, off the workers and a few at once.
    password_work: blocking::Gate,
    /// Imports per cook.
    imports: rate_limits::CookLimit,
    /// Pictures sent per cook.
    pictures: rate_limits::CookLimit,
    /// Suggestions per cook and per recipe.
    suggestions: rate_limits::SuggestionLimit,
    /// Pictures being decoded, across the server.
    picture_decodes: rate_limits::PictureDecodes,
    /// The page cache and the Markdown memos.
    caches: caches::Caches,
    /// How pages to import are fetched (public addresses only, unless the
    /// server was started to allow private ones).
    fetcher: crate::import::Fetcher,
    /// How long a request's body may take to arrive after its head.
    body_deadline: std::time::Duration,
    /// The search index, opened on first use (`serve` opens it at start,
    /// so that it follows the store from then on); why not, if it cannot be.
    search: std::sync::OnceLock<Result<crate::domain::search::SearchIndex, String>>,
    /// When `/healthz` calls a node that follows a log unhealthy.
    health_limits: health::HealthLimits,
    /// How long a session checked in the log's database is believed
    /// before it is checked again (`domain::session_memo`).
    session_recheck: std::time::Duration,
    /// ActivityPub, opened on first use (`serve` opens it at start, and
    /// starts its deliveries); why not, if it cannot be.
    federated: std::sync::OnceLock<Result<std::sync::Arc<crate::federation::Federated>, String>>,
    federation_settings: crate::federation::Settings,
    /// Inboxes' checks (which may fetch a sender's key), off the workers.
    federation_work: blocking::Gate,
    /// Cooks' key pairs being made, off the workers, at a gate of their
    /// own: a sender whose key server is slow cannot hold up the actors.
    key_work: blocking::Gate,
    /// Cooks' follows and forks of what is elsewhere, which fetch from
    /// other sites: a gate apart from the inboxes', so that cooks pointing
    /// at slow sites cannot hold up what other sites send.
    lookup_work: blocking::Gate,
}

/// How long a request's body may take after its head unless told
/// otherwise: long enough for a 10 MiB picture at about 2 Mbit/s.
pub const DEFAULT_BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

pub use caches::DEFAULT_PAGE_CACHE_BYTES;

impl Site {
    pub fn new(recipes: Recipes, base_url: &str) -> Site {
        let base_url = base_url.trim_end_matches('/').to_owned();
        // Part of every ETag, so it must be the same in every process and on
        // every run that serves this build at this address: FxHasher is
        // unkeyed and deterministic (SipHash's `RandomState` would not be).
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write_u64(crate::assets::VERSION);
        hasher.write(base_url.as_bytes());
        let edition = hasher.finish();
        Site {
            recipes,
            base_url,
            edition,
            accounts: std::sync::OnceLock::new(),
            attempts: rate_limits::AttemptLimit::per_minute(rate_limits::ATTEMPTS_PER_MINUTE),
            trusted_proxies: client_address::TrustedProxies::default(),
            password_work: blocking::Gate::passwords(),
            imports: rate_limits::CookLimit::imports(),
            pictures: rate_limits::CookLimit::pictures(),
            suggestions: rate_limits::SuggestionLimit::standard(),
            picture_decodes: rate_limits::PictureDecodes::standard(),
            caches: caches::Caches::default(),
            fetcher: crate::import::Fetcher::public_only(),
            body_deadline: DEFAULT_BODY_DEADLINE,
            search: std::sync::OnceLock::new(),
            health_limits: health::HealthLimits::default(),
            session_recheck: crate::domain::accounts::SESSION_RECHECK,
            federated: std::sync::OnceLock::new(),
            federation_settings: crate::federation::Settings::default(),
            federation_work: blocking::Gate::new(
                4,
                std::time::Duration::from_secs(10),
                "taking activities from other sites",
            ),
            key_work: blocking::Gate::new(
                2,
                std::time::Duration::from_secs(10),
                "making cooks' keys",
            ),
            lookup_work: blocking::Gate::new(
                2,
                std::time::Duration::from_secs(10),
                "looking up other sites",
            ),
        }
    }

    /// This site federating as `settings` say.
    pub fn with_federation(mut self, settings: crate::federation::Settings) -> Site {
        self.federation_settings = settings;
        self
    }

    /// What the site federates with, opened (with the fetcher it has
    /// then) on first use.
    pub fn federated(&self) -> Result<&std::sync::Arc<crate::federation::Federated>, WebError> {
        self.federated
            .get_or_init(|| {
                crate::federation::Federated::new(
                    &self.recipes,
                    &self.base_url,
                    &self.fetcher,
                    self.federation_settings.clone(),
                )
                .map(std::sync::Arc::new)
                .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|why| WebError::Busy(format!("Federation is not available: {why}.")))
    }

    /// The gate inboxes' work off the workers waits at.
    pub fn federation_work(&self) -> &blocking::Gate {
        &self.federation_work
    }

    /// The gate key pairs being made wait at.
    pub fn key_work(&self) -> &blocking::Gate {
        &self.key_work
    }

    /// The gate cooks' look-ups of other sites wait at.
    pub fn lookup_work(&self) -> &blocking::Gate {
        &self.lookup_work
    }

    /// This site as one of `nodes` nodes serving one log: each of its
    /// rate limits (password attempts, imports, pictures, suggestions)
    /// takes its share, so the site as a whole allows what one node would.
    pub fn with_nodes(mut self, nodes: u32) -> Site {
        self.attempts = rate_limits::AttemptLimit::per_minute(rate_limits::share(
            rate_limits::ATTEMPTS_PER_MINUTE,
            nodes,
        ));
        self.imports = rate_limits::CookLimit::imports_on(nodes);
        self.pictures = rate_limits::CookLimit::pictures_on(nodes);
        self.suggestions = rate_limits::SuggestionLimit::on(nodes);
        self
    }

    /// This site judging its health by `limits`.
    pub fn with_health_limits(mut self, limits: health::HealthLimits) -> Site {
        self.health_limits = limits;
        self
    }

    /// This site checking a session kept in the log's database again once
    /// `after` has passed.
    pub fn with_session_recheck(mut self, after: std::time::Duration) -> Site {
        self.session_recheck = after;
        self
    }

    pub fn health_limits(&self) -> health::HealthLimits {
        self.health_limits
    }

    /// The search index of the site's store, opened (and following the
    /// store) from the first call on.
    pub fn search(&self) -> Result<&crate::domain::search::SearchIndex, WebError> {
        self.search
            .get_or_init(|| {
                crate::domain::search::SearchIndex::open(&self.recipes).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|why| WebError::Busy(format!("Search is not available: {why}.")))
    }

    /// This site fetching pages to import with `fetcher`.
    pub fn with_fetcher(mut self, fetcher: crate::import::Fetcher) -> Site {
        self.fetcher = fetcher;
        self
    }

    pub fn fetcher(&self) -> &crate::import::Fetcher {
        &self.fetcher
    }

    pub fn with_body_deadline(mut self, deadline: std::time::Duration) -> Site {
        self.body_deadline = deadline;
        self
    }

    pub fn body_deadline(&self) -> std::time::Duration {
        self.body_deadline
    }

    /// This site decoding pictures in `decodes`' places (tests give it a
    /// short wait).
    pub fn with_picture_decodes(mut self, decodes: rate_limits::PictureDecodes) -> Site {
        self.picture_decodes = decodes;
        self
    }

    /// This site with a page cache of at most `bytes` (0 keeps no page).
    pub fn with_page_cache(mut self, bytes: u64) -> Site {
        self.caches = self.caches.with_page_cache(bytes);
        self
    }

    /// This site with caches of `budget`'s sizes (the store was given its
    /// entities' share when it was opened).
    pub fn with_caches(mut self, budget: caches::CacheBudget) -> Site {
        self.caches = caches::Caches::of(budget);
        self
    }

    /// Pages as sent, bounded in bytes.
    pub fn pages(&self) -> &page_cache::PageCache {
        self.caches.pages()
    }

    /// The Markdown memos, for the views.
    pub fn memos(&self) -> &crate::views::markdown::Memos {
        self.caches.memos()
    }

    /// Lets the page cache, the entity cache and the Markdown memos hold
    /// `share` (0 to 1) of their budgets: see `memory_limit`.
    pub fn set_cache_share(&self, share: f64) {
        self.caches.set_share(&self.recipes, share);
    }

    /// How full those caches are together (0 to 1): see `Caches::fill`.
    pub fn cache_fill(&self) -> f64 {
        self.caches.fill(&self.recipes)
    }

    /// See `edition`.
    pub fn edition(&self) -> u64 {
        self.edition
    }

    pub fn recipes(&self) -> &Recipes {
        &self.recipes
    }

    /// Runs `write` on the site's recipes off the workers where a write
    /// waits on the log's database (`blocking::off_workers`): a stalled
    /// PostgreSQL holds the writer, never a worker serving pages.
    pub async fn write<T: Send + 'static>(
        &self,
        write: impl FnOnce(&Recipes) -> T + Send + 'static,
    ) -> Result<T, WebError> {
        let recipes = self.recipes.clone();
        blocking::off_workers(self, move || write(&recipes)).await
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Cooks' accounts on this site's store.
    pub fn accounts(&self) -> Result<&Accounts, WebError> {
        if let Some(accounts) = self.accounts.get() {
            return Ok(accounts);
        }
        let opened = Accounts::open(&self.recipes)?.with_session_recheck(self.session_recheck);
        Ok(self.accounts.get_or_init(|| opened))
    }

    /// Password attempts per client address and per account.
    pub fn attempts(&self) -> &rate_limits::AttemptLimit {
        &self.attempts
    }

    /// This site believing what `proxies` say of their clients' addresses.
    pub fn with_trusted_proxies(mut self, proxies: client_address::TrustedProxies) -> Site {
        self.trusted_proxies = proxies;
        self
    }

    /// The address of the client that sent `req` (`None` over no socket).
    pub fn client_address(&self, req: &HttpRequest) -> Option<std::net::IpAddr> {
        self.trusted_proxies
            .client(req.peer_addr().map(|a| a.ip()), req.headers())
    }

    /// Where password hashing runs: off the workers, a few at once.
    pub fn password_work(&self) -> &blocking::Gate {
        &self.password_work
    }

    /// Imports per cook.
    pub fn imports(&self) -> &rate_limits::CookLimit {
        &self.imports
    }

    /// Pictures sent per cook.
    pub fn pictures_sent(&self) -> &rate_limits::CookLimit {
        &self.pictures
    }

    /// Suggestions per cook and per recipe.
    pub fn suggestions_sent(&self) -> &rate_limits::SuggestionLimit {
        &self.suggestions
    }

    /// Pictures being decoded, across the server.
    pub fn picture_decodes(&self) -> &rate_limits::PictureDecodes {
        &self.picture_decodes
    }

    /// The site's origin (`https://host:port`), as browsers send it.
    pub fn origin(&self) -> &str {
        let after_scheme = self.base_url.find("://").map_or(0, |i| i + 3);
        let end = self.base_url[after_scheme..]
            .find('/')
            .map_or(self.base_url.len(), |i| after_scheme + i);
        &self.base_url[..end]
    }

    /// Whether the site is served over https (its cookies are then Secure).
    pub fn is_https(&self) -> bool {
        self.base_url.starts_with("https://")
    }

    /// The latest database value, pinned for one request, counting its own
    /// index reads.
    pub fn snapshot(&self) -> Snapshot {
        self.recipes.snapshot()
    }
}

/// Sweeps the site's dead sessions, and collects the pictures no version
/// named in their day of grace, when the server starts and then every
/// `SESSION_SWEEP_EVERY`, on a thread of its own that ends once the site
/// is gone. At start too: a server restarted more often than that (a
/// deploy a day, a node a crash loop killed) would otherwise never sweep.
pub fn sweep(site: std::sync::Weak<Site>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("sweep".into())
        .spawn(move || loop {
            let Some(site) = site.upgrade() else { return };
            match site.accounts().map(|a| a.sweep_sessions()) {
                Ok(Ok(swept)) => tracing::info!(swept, "dead sessions swept"),
                Ok(Err(error)) => tracing::warn!(%error, "sweeping sessions failed"),
                Err(error) => tracing::warn!(%error, "sweeping sessions failed"),
            }
            match site.recipes().collect_unsaved_pictures() {
                Ok(collected) => tracing::info!(collected, "unsaved pictures collected"),
                Err(error) => tracing::warn!(%error, "collecting unsaved pictures failed"),
            }
            drop(site);
            std::thread::sleep(crate::domain::accounts::SESSION_SWEEP_EVERY);
        })
        .map(drop)
}

/// A route for GET, and HEAD (the same response without its body).
fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// The site's map: every address it answers, in one place, by area.
pub fn routes(cfg: &mut web::ServiceConfig) {
    // actix tries the table in order, matching each pattern in turn, so the
    // pages read most come first.
    recipe_pages(cfg);
    site_pages(cfg);
    writing(cfg);
    accounts(cfg);
    federating(cfg);
    cfg.default_service(web::to(not_found));
}

/// Where a recipe's own addresses start: they are one scope, so that the
/// slug is matched once. Each of actix's patterns is a regex tried in turn:
/// with a resource each, `/recipes/x/forks` matched the slug seven times
/// before it was found, 6.5% of a kept page's CPU (perf, against 2.5% for
/// a tag, docs/journal/55-million.md).
const RECIPE: &str = "/recipes/{slug}";

/// The recipes' pages, read most: the catalog, a recipe, its history,
/// versions, diffs, forks and lineage; and, in the same scope, a cook's
/// writes to a recipe (`writes_to_a_recipe`).
fn recipe_pages(cfg: &mut web::ServiceConfig) {
    // `/recipes/new` before the slug pattern that would take it, and
    // `.json` before the scope (its slug would be `x.json`).
    cfg.service(page("/", catalog::index))
        .service(get_post(
            "/recipes/new",
            recipe_writes::new_page,
            recipe_writes::create,
        ))
        .service(page("/recipes/{slug}.json", recipes::json))
        .service(
            web::scope(RECIPE)
                .service(page("/recipes/{slug}", recipes::show))
                .service(page("/recipes/{slug}/history", recipes::history))
                .service(page("/recipes/{slug}/versions/{n}", recipes::version))
                .service(page("/recipes/{slug}/diff", recipes::diff))
                .service(page("/recipes/{slug}/compare", recipes::compare))
                .service(page("/recipes/{slug}/forks", recipes::forks))
                .service(page("/recipes/{slug}/lineage", recipes::lineage))
                .configure(writes_to_a_recipe),
        );
}

/// The rest of what is read: tags, search, files, feeds, the service's
/// own addresses and cooks' pages.
fn site_pages(cfg: &mut web::ServiceConfig) {
    cfg.service(page("/tags", pages::tags))
        .service(page("/tags/{tag}", catalog::tag))
        .service(page("/search", pages::search))
        .service(page("/static/{name}", pages::asset))
        .service(page("/images/{file}", pictures::picture))
        .service(page("/feed.xml", feeds::atom))
        .service(page("/sitemap.xml", feeds::sitemap))
        .service(page("/sitemaps/{file}", feeds::sitemap_file))
        .service(page("/robots.txt", feeds::robots))
        .service(page("/about", pages::about))
        .service(plain("/healthz", health::healthz))
        .service(plain("/metrics", metrics::serve))
        .service(page("/cooks/{handle}", pages::cook))
        .service(page("/cooks/{handle}/outbox", federation::outbox))
        .service(plain("/cooks/{handle}/followers", federation::followers))
        .service(page(
            "/cooks/{handle}/suggestions.xml",
            feeds::cook_suggestions,
        ))
        .service(page("/cooks/{handle}/suggested.xml", feeds::cook_suggested));
}

/// A cook's writes to a recipe, in its scope (`recipe_pages`): edits,
/// forks, merges and suggestions.
fn writes_to_a_recipe(cfg: &mut web::ServiceConfig) {
    cfg.service(get_post(
        "/recipes/{slug}/edit",
        recipe_writes::edit_page,
        recipe_writes::edit,
    ))
    .service(get_post(
        "/recipes/{slug}/fork",
        recipe_writes::fork_page,
        recipe_writes::fork,
    ))
    .service(form_post("/recipes/{slug}/retire", recipe_writes::retire))
    .service(get_post(
        "/recipes/{slug}/bring-in",
        merges::bring_in_page,
        merges::bring_in,
    ))
    .service(form_post(
        "/recipes/{slug}/bring-in/preview",
        merges::bring_in_preview,
    ))
    .service(get_post(
        "/recipes/{slug}/suggest",
        merges::suggest_page,
        merges::suggest,
    ))
    .service(page("/recipes/{slug}/suggestions", reviews::suggestions))
    .service(get_post(
        "/recipes/{slug}/suggestions/{n}",
        reviews::suggestion,
        reviews::review,
    ))
    .service(form_post(
        "/recipes/{slug}/suggestions/{n}/preview",
        reviews::review_preview,
    ))
    .service(get_post(
        "/recipes/{slug}/offer",
        reviews::offer,
        reviews::withdraw_offer,
    ));
}

/// A cook's other writes (new recipes are with the recipes' pages):
/// previews and imports.
fn writing(cfg: &mut web::ServiceConfig) {
    cfg.service(form_post("/preview", recipe_writes::preview))
        .service(get_post(
            "/import",
            recipe_import::page,
            recipe_import::submit,
        ))
        .service(form_post("/import/save", recipe_writes::import_save));
}

/// Accounts: signing up, logging in and out, a cook's account page.
fn accounts(cfg: &mut web::ServiceConfig) {
    cfg.service(get_post("/signup", account::sign_up_page, account::sign_up))
        .service(get_post("/login", account::log_in_page, account::log_in))
        .service(form_post("/logout", account::log_out))
        .service(form_post("/logout/everywhere", account::log_out_everywhere))
        .service(page("/account", account::account_page))
        .service(form_post("/account/password", account::change_password))
        .service(get_post(
            "/following",
            following::following_page,
            following::follow,
        ))
        .service(form_post("/following/stop", following::stop))
        .service(form_post("/following/fork", following::fork));
}

/// Other sites' addresses: discovery, the site's actor, the inboxes.
fn federating(cfg: &mut web::ServiceConfig) {
    let activity = || web::PayloadConfig::new(crate::federation::inbox::MAX_ACTIVITY_BYTES);
    cfg.service(plain("/.well-known/webfinger", federation::webfinger))
        .service(plain("/.well-known/nodeinfo", federation::nodeinfo_links))
        .service(plain("/nodeinfo/2.1", federation::nodeinfo))
        .service(plain("/actor", federation::site_actor))
        .service(inbox("/inbox").app_data(activity()))
        .service(inbox("/cooks/{handle}/inbox").app_data(activity()));
}

/// An inbox: POST only, no form token (other sites sign what they send).
fn inbox(path: &'static str) -> actix_web::Resource {
    resource(path)
        .route(web::post().to(federation::inbox))
        .default_service(web::to(|req: HttpRequest| refuse_method(req, "POST")))
}

/// One address with a page (GET, and HEAD) and a form handler (POST): one
/// pattern to match, not two.
fn get_post<G, GArgs, P, PArgs>(path: &'static str, page: G, post: P) -> actix_web::Resource
where
    G: actix_web::Handler<GArgs>,
    GArgs: actix_web::FromRequest + 'static,
    G::Output: actix_web::Responder + 'static,
    P: actix_web::Handler<PArgs>,
    PArgs: actix_web::FromRequest + 'static,
    P::Output: actix_web::Responder + 'static,
{
    resource(path)
        .route(get().to(page))
        .route(web::post().to(post))
        .default_service(web::to(|req: HttpRequest| {
            refuse_method(req, "GET, HEAD, POST")
        }))
}

/// One address answered the same whatever the visitor: GET and HEAD,
/// outside the page cache (`/healthz`, `/metrics`).
fn plain<G, GArgs>(path: &'static str, page: G) -> actix_web::Resource
where
    G: actix_web::Handler<GArgs>,
    GArgs: actix_web::FromRequest + 'static,
    G::Output: actix_web::Responder + 'static,
{
    resource(path).route(get().to(page))
}

/// One address with a page: GET, and HEAD.
fn page<G, GArgs>(path: &'static str, page: G) -> actix_web::Resource
where
    G: actix_web::Handler<GArgs>,
    GArgs: actix_web::FromRequest + 'static,
    G::Output: actix_web::Responder + 'static,
{
    resource(path)
        .route(get().to(page))
        .default_service(web::to(|req: HttpRequest| refuse_method(req, "GET, HEAD")))
}

/// One address that only takes a form: POST.
fn form_post<P, PArgs>(path: &'static str, post: P) -> actix_web::Resource
where
    P: actix_web::Handler<PArgs>,
    PArgs: actix_web::FromRequest + 'static,
    P::Output: actix_web::Responder + 'static,
{
    resource(path)
        .route(web::post().to(post))
        .default_service(web::to(|req: HttpRequest| refuse_method(req, "POST")))
}

/// The resource for `path`, whose full pattern names it in `/metrics`: a
/// recipe's own addresses are matched inside its scope (`RECIPE`), by the
/// rest of the path.
fn resource(path: &'static str) -> actix_web::Resource {
    let pattern = match path.strip_prefix(RECIPE) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => path,
    };
    web::resource(pattern).app_data(metrics::Route(path))
}

/// A method an address does not take: 405, with the ones it does.
async fn refuse_method(req: HttpRequest, allow: &'static str) -> Result<HttpResponse, WebError> {
    Err(WebError::MethodNotAllowed {
        allow,
        message: format!(
            "{} takes {}, not {}.",
            req.path(),
            in_words(allow),
            req.method()
        ),
    })
}

/// `GET, HEAD, POST` as a sentence says it: `GET, HEAD and POST`.
fn in_words(methods: &str) -> String {
    let all: Vec<&str> = methods.split(", ").collect();
    match all.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Anything not in the table.
async fn not_found(req: HttpRequest) -> Result<HttpResponse, WebError> {
    Err(WebError::NotFound(format!(
        "There is no page at {}.",
        req.path()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edition_depends_only_on_the_build_and_the_address() {
        // Two sites stand for two processes serving one build: a keyed hash
        // would give each its own ETags.
        let recipes = Recipes::temporary().unwrap();
        let one = Site::new(recipes.clone(), "http://forkful.test/");
        let other = Site::new(recipes.clone(), "http://forkful.test");
        let elsewhere = Site::new(recipes, "http://forkful.example");
        assert_eq!(one.edition(), other.edition());
        assert_ne!(one.edition(), elsewhere.edition());
    }
}
