//! Building the server: one `build` for `main`, the tests and the benches.

use crate::import::Fetcher;
use std::io;
use std::net::{SocketAddr, TcpListener};

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::UrlencodedError;
use actix_web::middleware::{from_fn, Compress};
use actix_web::web::{Data, FormConfig, QueryConfig};
use actix_web::{App, HttpServer};

use crate::domain::Recipes;
use crate::web::{middleware, routes, Site, WebError};

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
    /// The page cache's budget in bytes.
    pub page_cache_bytes: u64,
    /// Whether imports may fetch from this machine and private networks
    /// (for tests; never on a public site).
    pub allow_private_fetch: bool,
}

/// A server that is listening, and the address it got.
pub struct Running {
    pub server: Server,
    pub addr: SocketAddr,
}

/// The application: routes, shared state, error pages for bad query
/// strings, and the middleware, innermost first: compression, security
/// headers, the request log.
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
        .wrap(Compress::default())
        .wrap(middleware::security_headers(https))
        .wrap(from_fn(middleware::log_request))
        .configure(routes)
}

/// Connections a worker serves at once; past it, new ones wait in the
/// listen queue instead of taking memory and file descriptors (actix's
/// default is 25,000 per worker).
pub const MAX_CONNECTIONS_PER_WORKER: usize = 2_048;

pub use crate::web::forms::MAX_FORM_BYTES;

/// A form that cannot be read: too large, or not what the page takes.
fn form_refused(error: UrlencodedError) -> WebError {
    match error {
        UrlencodedError::Overflow { .. } => WebError::TooLarge(format!(
            "The form is larger than the {} KiB a form may be: nothing was changed.",
            MAX_FORM_BYTES / 1024
        )),
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
            .with_page_cache(config.page_cache_bytes)
            .with_fetcher(fetcher),
    );
    let mut server = HttpServer::new(move || app(site.clone()))
        .shutdown_timeout(30)
        .max_connections(MAX_CONNECTIONS_PER_WORKER)
        .listen(listener)?;
    if config.workers > 0 {
        server = server.workers(config.workers);
    }
    Ok(Running {
        server: server.run(),
        addr,
    })
}
