//! `prober serve --config FILE --listen ADDR`: blackbox_exporter's `/probe` interface
//! (`prober_blackbox`) over HTTP.
//!
//! The HTTP side is `prober_httpd`'s server, set up as `prober watch --metrics`'s is
//! (`prober_watch::endpoints`): one poll loop, bounded per connection, protected by
//! `--web-config`. `/probe` is a deferred route: the request is checked and its probe
//! started on the loop, whose thread also drives the engine (a [`prober_httpd::Companion`]):
//! the answer is made and sent there when the outcome is in, so the loop never waits for a
//! probe, any number of requests share the one engine, and no `/probe` wakes another thread.
//! The main thread then reloads the module file when asked ([`crate::serve_reload`]).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use prober_blackbox::{EngineDriver, Exporter, Request};
use prober_watch::endpoints;

use crate::args::{Failure, Parser};
use crate::duration;
use crate::flags::{Command, Flag, Operands, Section, help, path, put, set, switch, text};
use crate::serve_reload::parse_interval;
use crate::serve_reload::{ConfigFile, DEFAULT_AUTO_RELOAD_SECONDS, Reloader};
use prober_watch::metrics::parse_addr;

/// What `prober serve` was asked.
#[derive(Debug)]
pub struct ServeArgs {
    config: PathBuf,
    listen: SocketAddr,
    timeout_offset: Duration,
    web_config: Option<PathBuf>,
    /// `--config.enable-auto-reload`: reload every `auto_reload_seconds`.
    auto_reload: bool,
    auto_reload_seconds: u64,
    /// `--history.limit`: probes whose debug output `/logs` keeps.
    history_limit: usize,
}

/// The largest `--history.limit`: twice that many outputs of at most 64 KiB are kept.
const MAX_HISTORY_LIMIT: usize = 10_000;

/// The options of `prober serve` as given: the required ones may still be missing.
#[derive(Debug)]
pub struct Given {
    config: Option<PathBuf>,
    listen: Option<SocketAddr>,
    timeout_offset: Duration,
    web_config: Option<PathBuf>,
    auto_reload: bool,
    auto_reload_seconds: u64,
    history_limit: usize,
}

impl Operands for Given {
    fn operand(&mut self, p: &Parser, v: OsString) -> Result<(), Failure> {
        Err(p.usage(format!("unexpected argument '{}'", v.to_string_lossy())))
    }
}

/// Parses `prober serve` options; `None` after `--help`.
pub fn parse(mut p: Parser) -> Result<Option<ServeArgs>, Failure> {
    let mut g = Given {
        config: None,
        listen: None,
        timeout_offset: prober_blackbox::DEFAULT_TIMEOUT_OFFSET,
        web_config: None,
        auto_reload: false,
        auto_reload_seconds: DEFAULT_AUTO_RELOAD_SECONDS,
        history_limit: prober_blackbox::DEFAULT_HISTORY_LIMIT,
    };
    if !SERVE.parse(&mut p, &mut g)? {
        return Ok(None);
    }
    let config = g.config.ok_or_else(|| p.usage("missing --config FILE"))?;
    let listen = g.listen.ok_or_else(|| p.usage("missing --listen ADDR"))?;
    Ok(Some(ServeArgs {
        config,
        listen,
        timeout_offset: g.timeout_offset,
        web_config: g.web_config,
        auto_reload: g.auto_reload,
        auto_reload_seconds: g.auto_reload_seconds,
        history_limit: g.history_limit,
    }))
}

/// `prober serve`.
pub static SERVE: Command<Given> = Command {
    name: "serve",
    head: HEAD,
    sections: &[Section { title: "Options:", flags: FLAGS, note: "" }],
    tail: "",
    column: 25,
    unknown_names_command: false,
};

const HEAD: &str = "\
Usage: prober serve --config FILE --listen ADDR [--timeout-offset DUR] [--web-config FILE]
                    [--config.enable-auto-reload] [--config.auto-reload-interval SECONDS]
                    [--history.limit N]

Serves blackbox_exporter's interface: /probe?target=T&module=M (add &debug=true for an
explanation), /metrics (its own), /config (the modules loaded, credentials as <secret>),
/logs?target=T (the explanation of a recent probe) and a status page at /. FILE is a
blackbox_exporter module file (modules with prober http, tcp, grpc, unix, icmp or dns); a
module may add an allow-list of targets:

  modules:
    http_2xx:
      prober: http
      allow: {hosts: ['*.example.com'], networks: ['10.0.0.0/8'], ports: [80, 443]}
    unix_socket:
      prober: unix
      allow: {paths: ['/run/app/']}

A refused target is answered 403. Each probe's timeout is the module's, or the scrape's
(X-Prometheus-Scrape-Timeout-Seconds) less the offset (default 500ms) when smaller.

FILE is read again on SIGHUP and on POST /-/reload; a file that is not valid leaves the
modules in force (blackbox_exporter_config_last_reload_successful 0 on /metrics).
";

#[rustfmt::skip]
const FLAGS: &[Flag<Given>] = &[
    path("--config", "FILE", |g, _, v| set(&mut g.config, v), "the module file"),
    text("--listen", "ADDR",
        |g, p, o, v| set(&mut g.listen, parse_addr(&v).map_err(p.named(o))?),
        "IP:PORT, [IPV6]:PORT or :PORT"),
    text("--timeout-offset", "DUR",
        |g, p, o, v| put(&mut g.timeout_offset, duration::parse(&v).map_err(p.named(o))?),
        "kept from the scrape's timeout for the answer (default 500ms)"),
    path("--web-config", "FILE", |g, _, v| set(&mut g.web_config, v),
        "TLS, client certificates and basic auth for every endpoint, in the\n\
         Prometheus exporter-toolkit's format (as prober watch --web-config)"),
    switch("--config.enable-auto-reload", |g| g.auto_reload = true,
        "also read FILE again every --config.auto-reload-interval"),
    text("--config.auto-reload-interval", "SECONDS",
        |g, p, o, v| put(&mut g.auto_reload_seconds, parse_interval(&v).map_err(p.named(o))?),
        "whole seconds between automatic reloads (default 30; 30s, 1m too)"),
    text("--history.limit", "N", |g, p, o, v| put(&mut g.history_limit, history_limit(p, o, &v)?),
        "probes /logs keeps (default 100; as many failures more)"),
    help(),
];

/// `--history.limit N`: a whole number up to [`MAX_HISTORY_LIMIT`].
fn history_limit(p: &Parser, opt: &str, v: &str) -> Result<usize, Failure> {
    let n = v.trim().parse().ok().filter(|n| *n <= MAX_HISTORY_LIMIT);
    n.ok_or_else(|| p.usage(format!("{opt}: {v:?}: a whole number up to {MAX_HISTORY_LIMIT}")))
}

/// Loads the modules, starts the engine and serves until the process is ended, reloading the
/// modules when asked.
pub fn run(a: &ServeArgs) -> Result<i32, Failure> {
    let (file, modules) = ConfigFile::load(&a.config)?;
    let auto = a.auto_reload.then(|| Duration::from_secs(a.auto_reload_seconds));
    let (reloader, reload_route) = Reloader::new(file, auto)
        .map_err(|e| Failure::software(format!("cannot catch SIGHUP: {e}")))?;
    let (mut exporter, engine) = Exporter::start_driven(modules)
        .map_err(|e| Failure::software(format!("cannot start the engine: {e}")))?;
    exporter.set_timeout_offset(a.timeout_offset);
    exporter.set_history_limit(a.history_limit);
    let web = a.web_config.as_deref().map(endpoints::load_web_config).transpose()?;
    let scheme = endpoints::scheme(web.as_ref());
    let mut server = endpoints::bind(a.listen, web.as_ref(), "--listen")
        .map_err(Failure::software)?
        .with_companion(Box::new(ProbeEngine(engine)));
    let exporter = Arc::new(exporter);
    let ex = exporter.clone();
    server.route_deferred("/probe", move |req, reply| {
        // A client that goes before its answer frees its probe at once: at most
        // `Limits::max_deferred` probes are in flight, however many clients hang up.
        let gone = reply.cancel_signal();
        let probe = ex.handle_with(&request(req), move |r| reply.send(response(r)));
        gone.on_cancel(move || probe.cancel());
    });
    server.route_deferred_any_method("/-/reload", reload_route);
    for path in ["/metrics", "/", "/config", "/logs"] {
        let ex = exporter.clone();
        server.route(path, move |req| response(ex.handle(&request(req))));
    }
    let running = server
        .spawn("serve")
        .map_err(|e| Failure::software(format!("cannot start the server: {e}")))?;
    eprintln!("prober serve: listening on {scheme}://{}", running.local_addr());
    // Served until the process is ended (SIGTERM, SIGINT: their default action).
    reloader.run(&exporter)
}

/// The exporter's engine, turned on the HTTP server's thread.
struct ProbeEngine(EngineDriver);

impl prober_httpd::Companion for ProbeEngine {
    fn fd(&self) -> std::os::fd::RawFd {
        self.0.fd()
    }

    fn timeout(&self) -> Option<Duration> {
        self.0.timeout()
    }

    fn turn(&mut self) -> std::io::Result<()> {
        self.0.turn()
    }
}

fn request(req: &prober_httpd::Request) -> Request<'_> {
    Request { path: &req.path, query: &req.query, headers: &req.headers }
}

fn response(r: prober_blackbox::Response) -> prober_httpd::Response {
    prober_httpd::Response::new(r.status, r.content_type, r.body)
}
