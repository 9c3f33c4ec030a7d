//! The servers of a watch's endpoints (`--metrics`, `--health-listen`), and the set-up every
//! endpoint server shares, `prober serve`'s too: the web config read, bound, and spawned.

use std::fmt;
use std::net::SocketAddr;
use std::path::Path;

use prober_httpd::{Running, Server, WebConfig};

use crate::health::Health;
use crate::metrics::{self, Metrics};
use crate::target_state::TargetState;

/// Why a web config could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebConfigError {
    /// The file cannot be read (the `prober` command exits 66).
    Unreadable(String),
    /// The file is wrong: the message names the field (the `prober` command exits 64).
    Invalid(String),
}

impl fmt::Display for WebConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebConfigError::Unreadable(m) | WebConfigError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for WebConfigError {}

/// Reads `--web-config FILE`; the messages start with `--web-config: `.
///
/// # Errors
///
/// [`WebConfigError::Unreadable`] when the file cannot be read, [`WebConfigError::Invalid`]
/// naming the field when it is wrong.
pub fn load_web_config(path: &Path) -> Result<WebConfig, WebConfigError> {
    std::fs::metadata(path).map_err(|e| {
        WebConfigError::Unreadable(format!("--web-config: {}: {e}", path.display()))
    })?;
    WebConfig::load(path).map_err(|e| WebConfigError::Invalid(format!("--web-config: {e}")))
}

/// The scheme of the endpoints' addresses: `https` when the web config has TLS.
pub fn scheme(web: Option<&WebConfig>) -> &'static str {
    if web.is_some_and(WebConfig::tls) { "https" } else { "http" }
}

/// A server bound to `addr`, protected as `web` says; `option` names the address in the
/// error (`--listen: cannot listen on ...`).
///
/// # Errors
///
/// The message of a bind that failed.
pub fn bind(addr: SocketAddr, web: Option<&WebConfig>, option: &str) -> Result<Server, String> {
    let server =
        Server::bind(addr).map_err(|e| format!("{option}: cannot listen on {addr}: {e}"))?;
    Ok(match web {
        Some(web) => server.with_web_config(web.clone()),
        None => server,
    })
}

/// The running endpoints of a watch: served until dropped.
#[derive(Debug)]
pub struct Endpoints {
    /// The metrics the watch updates, when `--metrics` was given.
    pub metrics: Option<Metrics>,
    /// The health table the watch updates, when `--health-listen` was given.
    pub health: Option<Health>,
    servers: Vec<Running>,
}

/// Starts the metrics and health servers when asked for (one listener when both name the
/// same address), protected as `web` says, over `states`. Each is announced as it starts
/// (`metrics at http://127.0.0.1:41234/metrics`), so that a port the system chose (`:0`) can
/// be found.
///
/// # Errors
///
/// A message naming the option whose server could not be bound or started.
pub fn start(
    metrics_addr: Option<SocketAddr>,
    health_addr: Option<SocketAddr>,
    web: Option<&WebConfig>,
    states: &[TargetState],
    mut announce: impl FnMut(String),
) -> Result<Endpoints, String> {
    let scheme = scheme(web);
    let health = health_addr.map(|_| Health::new(states));
    let mut servers = Vec::new();
    let mut spawn = |server: Server, option: &str| {
        let running =
            server.spawn("http").map_err(|e| format!("{option}: cannot start its server: {e}"))?;
        let bound = running.local_addr();
        servers.push(running);
        Ok::<_, String>(bound)
    };
    let mut metrics = None;
    if let Some(addr) = metrics_addr {
        let (m, registry) = Metrics::new();
        metrics = Some(m);
        let mut server = bind(addr, web, "--metrics")?;
        metrics::route(&mut server, registry);
        let shared = health_addr == Some(addr);
        if let (true, Some(h)) = (shared, &health) {
            h.route(&mut server);
        }
        let bound = spawn(server, "--metrics")?;
        announce(format!("metrics at {scheme}://{bound}/metrics"));
        if shared {
            announce(format!("health at {scheme}://{bound}/readyz"));
        }
    }
    if let (Some(addr), Some(h)) = (health_addr, &health) {
        if metrics_addr != Some(addr) {
            let mut server = bind(addr, web, "--health-listen")?;
            h.route(&mut server);
            let bound = spawn(server, "--health-listen")?;
            announce(format!("health at {scheme}://{bound}/readyz"));
        }
    }
    Ok(Endpoints { metrics, health, servers })
}

impl Endpoints {
    /// The servers, served until dropped; the metrics and health go to the tracker.
    pub fn split(self) -> (Option<Metrics>, Option<Health>, Vec<Running>) {
        (self.metrics, self.health, self.servers)
    }
}
