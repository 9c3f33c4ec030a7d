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

use crate::args::{Failure, Parser, Token};
use crate::serve_reload::{ConfigFile, DEFAULT_AUTO_RELOAD_SECONDS, Reloader};

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

/// Parses `prober serve` options; `None` after `--help`.
pub fn parse(mut p: Parser) -> Result<Option<ServeArgs>, Failure> {
    let (mut config, mut listen, mut offset, mut web_config) =
        (None, None, prober_blackbox::DEFAULT_TIMEOUT_OFFSET, None);
    let (mut auto_reload, mut auto_reload_seconds) = (false, DEFAULT_AUTO_RELOAD_SECONDS);
    let mut history_limit = prober_blackbox::DEFAULT_HISTORY_LIMIT;
    while let Some(tok) = p.next()? {
        match tok {
            Token::Option(o) if o == "-h" || o == "--help" => {
                print!("{}", crate::usage::SERVE);
                return Ok(None);
            }
            Token::Option(o) if o == "--config" => config = Some(PathBuf::from(p.value(&o)?)),
            Token::Option(o) if o == "--web-config" => web_config = Some(p.path(&o)?),
            Token::Option(o) if o == "--config.enable-auto-reload" => auto_reload = true,
            Token::Option(o) if o == "--history.limit" => {
                let v = p.text(&o)?;
                history_limit =
                    v.trim().parse().ok().filter(|n| *n <= MAX_HISTORY_LIMIT).ok_or_else(|| {
                        p.usage(format!("{o}: {v:?}: a whole number up to {MAX_HISTORY_LIMIT}"))
                    })?;
            }
            Token::Option(o) if o == "--config.auto-reload-interval" => {
                let v = p.text(&o)?;
                auto_reload_seconds = crate::serve_reload::parse_interval(&v)
                    .map_err(|e| p.usage(format!("{o}: {e}")))?;
            }
            Token::Option(o) if o == "--listen" => {
                let v = p.value(&o)?;
                let v = v.to_string_lossy();
                listen = Some(
                    prober_watch::metrics::parse_addr(&v)
                        .map_err(|e| p.usage(format!("--listen: {e}")))?,
                );
            }
            Token::Option(o) if o == "--timeout-offset" => {
                let v: OsString = p.value(&o)?;
                offset = crate::duration::parse(&v.to_string_lossy())
                    .map_err(|e| p.usage(format!("--timeout-offset: {e}")))?;
            }
            Token::Option(o) => return Err(p.usage(format!("unknown option '{o}'"))),
            Token::Value(v) => {
                return Err(p.usage(format!("unexpected argument '{}'", v.to_string_lossy())));
            }
        }
    }
    let config = config.ok_or_else(|| p.usage("missing --config FILE"))?;
    let listen = listen.ok_or_else(|| p.usage("missing --listen ADDR"))?;
    Ok(Some(ServeArgs {
        config,
        listen,
        timeout_offset: offset,
        web_config,
        auto_reload,
        auto_reload_seconds,
        history_limit,
    }))
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
