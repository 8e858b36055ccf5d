//! Building the server: one `build` for `main`, the tests and the benches.

use crate::import::Fetcher;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::UrlencodedError;
use actix_web::middleware::from_fn;
use actix_web::web::{Data, FormConfig, QueryConfig};
use actix_web::{App, HttpServer};

use crate::domain::Recipes;
use crate::web::caches::CacheBudget;
use crate::web::client_address::TrustedProxies;
use crate::web::{middleware, read_your_writes, routes, Site, WebError};

/// How to serve.
#[derive(Debug, Clone)]
pub struct Config {
    /// `host:port`; port 0 picks a free one.
    pub addr: String,
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// The site's public address, for absolute links; by default
    /// `http://` and the bound address.
    pub base_url: Option<String>,
    /// The budgets of the page cache and the Markdown memos (its entities'
    /// share was the store's when it was opened).
    pub cache_budget: CacheBudget,
    /// The resident memory, in bytes, near which the caches are shrunk
    /// (`web::memory_limit`): down to an eighth of their budgets, and no
    /// further, so the process may still go past it. None: the caches keep
    /// their budgets whatever the process holds.
    pub memory_limit: Option<u64>,
    /// Whether imports may fetch from this machine and private networks
    /// (for tests; never on a public site).
    pub allow_private_fetch: bool,
    /// Reverse proxies whose word on a client's address is believed.
    pub trusted_proxies: TrustedProxies,
    /// How long a client may take over each part of a request.
    pub timeouts: Timeouts,
    /// When `/healthz` calls a node that follows a log unhealthy.
    pub health: crate::web::health::HealthLimits,
    /// How long a session checked in the log's database is believed.
    pub session_recheck: std::time::Duration,
    /// How many nodes serve the site: each takes its share of the rate
    /// limits (`Site::with_nodes`).
    pub nodes: u32,
    /// How the site federates with others (ActivityPub).
    pub federation: crate::federation::Settings,
}

/// How long a slow client may take: past these, the request is answered
/// (408) or the connection closed. Workers are asynchronous, so a slow
/// client costs a socket, never a worker. What actix leaves unbounded: the
/// head of a kept-alive connection's second and later requests (its head
/// timer covers only the first), and a client that stops reading its
/// answers (there is no write deadline); a reverse proxy's header and send
/// timeouts cover both (docs/SECURITY.md).
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From a connection's first byte to the end of the request head.
    pub request_head: Duration,
    /// From the request head to the end of its body.
    pub request_body: Duration,
    /// An idle kept-alive connection between requests.
    pub keep_alive: Duration,
    /// For a client to acknowledge the end of a closed connection.
    pub disconnect: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            request_head: Duration::from_secs(5),
            request_body: crate::web::DEFAULT_BODY_DEADLINE,
            keep_alive: Duration::from_secs(5),
            disconnect: Duration::from_secs(1),
        }
    }
}

/// A server that is listening, and the address it got.
pub struct Running {
    pub server: Server,
    pub addr: SocketAddr,
    /// The thread that sends deliveries to other sites: stop it once the
    /// server has stopped, so that none is left claimed.
    pub deliveries: Option<crate::federation::delivery::Deliverer>,
}

/// The application: routes, shared state, error pages for bad query
/// strings, and the middleware, innermost first: compression, security
/// headers, the body deadline, the request log.
pub fn app(
    site: Data<Site>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let https = site.is_https();
    let body_deadline = site.body_deadline();
    crate::web::metrics::install();
    App::new()
        .app_data(site)
        .app_data(QueryConfig::default().error_handler(|error, _| {
            WebError::BadRequest(format!("This page does not take that query: {error}.")).into()
        }))
        .app_data(
            FormConfig::default()
                .limit(MAX_FORM_BYTES)
                .error_handler(|error, _| form_refused(error).into()),
        )
        .wrap(from_fn(crate::web::personal::on_error_pages))
        .wrap(from_fn(middleware::compress_unencoded))
        .wrap(middleware::security_headers(https))
        .wrap(from_fn(crate::web::session::look_up_session))
        .wrap(from_fn(read_your_writes::read_your_writes))
        .wrap(from_fn(move |req, next| {
            middleware::body_deadline(req, next, body_deadline)
        }))
        .wrap(from_fn(middleware::log_request))
        .configure(routes)
}

/// Connections a worker serves at once; past it, new ones wait in the
/// listen queue instead of taking memory and file descriptors (actix's
/// default is 25,000 per worker).
pub const MAX_CONNECTIONS_PER_WORKER: usize = 2_048;

pub use crate::web::form_handling::MAX_FORM_BYTES;

/// A form that cannot be read: too large, or not what the page takes.
fn form_refused(error: UrlencodedError) -> WebError {
    match error {
        UrlencodedError::Overflow { .. } => crate::web::submission::too_large_form(MAX_FORM_BYTES),
        UrlencodedError::Payload(error) => crate::web::submission::payload_refused(error),
        other => WebError::BadRequest(format!(
            "This page cannot read that form ({other}): nothing was changed."
        )),
    }
}

/// Binds `config.addr` and makes the server over `recipes`; it runs once
/// awaited (on an actix system), and stops gracefully on SIGINT or SIGTERM,
/// finishing the requests in flight.
pub fn build(config: &Config, recipes: Recipes) -> io::Result<Running> {
    let listener = TcpListener::bind(&config.addr)?;
    let addr = listener.local_addr()?;
    let base_url = config
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let fetcher = if config.allow_private_fetch {
        Fetcher::allowing_private()
    } else {
        Fetcher::public_only()
    };
    let site = Data::new(
        Site::new(recipes, &base_url)
            .with_caches(config.cache_budget)
            .with_fetcher(fetcher)
            .with_trusted_proxies(config.trusted_proxies.clone())
            .with_body_deadline(config.timeouts.request_body)
            .with_health_limits(config.health)
            .with_session_recheck(config.session_recheck)
            .with_nodes(config.nodes)
            .with_federation(config.federation.clone()),
    );
    // Deliveries to other sites go out from a thread of their own, from
    // the start: what was queued before a restart is sent again.
    let deliveries = match site.federated() {
        Ok(federated) => Some(crate::federation::delivery::start(
            std::sync::Arc::downgrade(federated),
        )?),
        Err(error) => {
            tracing::error!(%error, "federation is not available");
            None
        }
    };
    crate::web::sweep(std::sync::Arc::downgrade(&site.clone().into_inner()))?;
    // The search index follows the store from the start, not from the
    // first search (which would wait for its catching up).
    if let Err(error) = site.search() {
        tracing::error!(%error, "search is not available");
    }
    // The catalog's orders are read into memory before a visitor asks
    // for the catalog, on a thread of their own so serving starts at once.
    let warming = site.recipes().clone();
    std::thread::Builder::new()
        .name("catalog-warm".into())
        .spawn(move || {
            if let Err(error) = warming.snapshot().warm_catalog() {
                tracing::warn!(%error, "the catalog could not be read ahead");
            }
        })?;
    if let Some(limit) = config.memory_limit {
        crate::web::memory_limit::keep(
            std::sync::Arc::downgrade(&site.clone().into_inner()),
            limit,
        )?;
    }
    let timeouts = config.timeouts;
    let mut server = HttpServer::new(move || app(site.clone()))
        .client_request_timeout(timeouts.request_head)
        .client_disconnect_timeout(timeouts.disconnect)
        .keep_alive(timeouts.keep_alive)
        .shutdown_timeout(30)
        .max_connections(MAX_CONNECTIONS_PER_WORKER)
        .listen(listener)?;
    if config.workers > 0 {
        server = server.workers(config.workers);
    }
    Ok(Running {
        server: server.run(),
        addr,
        deliveries,
    })
}
