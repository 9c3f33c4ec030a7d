//! The `/probe`, `/metrics` and `/` answers: a plain function from a request (path, query,
//! headers) to a response, so that any HTTP server can carry it.
//!
//! Every probe runs on one engine as a one-shot check with a completion
//! (`Engine::submit_with`); the completion turns the outcome into the answer and hands it to
//! the request waiting for it ([`Exporter::handle_with`]: a callback, so that an HTTP server's
//! loop never waits for a probe), so any number of concurrent requests share the engine. The
//! engine has a thread of its own ([`Exporter::start`]), or is driven by the HTTP server's
//! loop on its thread ([`Exporter::start_driven`], what `prober serve` does: no `/probe` then
//! wakes another thread).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prober::{CheckPlan, Engine, EngineError, Handle, Outcome, Reason};
use prober_exposition::{Format, Kind, family, finish, sample};

use crate::answer::{explain, render};
use crate::budget::{PROBE_OUTPUT_BUDGET, Reservation};
use crate::driven::{EngineDriver, Probing};
use crate::history::{History, Output};
use crate::module::TargetError;
use crate::modules::Modules;
use crate::numbers::push_secs;
use crate::plans::{PlanKey, Planned, Plans};
use crate::reload::{Loaded, Reload};
use crate::request::{DEFAULT_TIMEOUT_OFFSET, Request, Response, query_pairs, timeout};
use crate::unprobed;

const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Room made at once for a probe's log (its lines for an HTTP probe: about 400 bytes).
const LOG_CAPACITY: usize = 512;
const PLAIN: &str = "text/plain; charset=utf-8";

/// What receives an answer.
type Done = Box<dyn FnOnce(Response) + Send>;

/// The exporter: modules, the engine thread, and its own counters. Dropping it stops the
/// engine thread; requests still waiting are then answered 500.
#[derive(Debug)]
pub struct Exporter {
    inner: Arc<Inner>,
    /// The engine thread, which holds `inner` only weakly, so that dropping the exporter stops
    /// it; none when the caller's loop drives the engine ([`Exporter::start_driven`]).
    _engine: Option<EngineThread>,
}

#[derive(Debug)]
struct Inner {
    modules: Loaded,
    probing: Probing,
    next_tag: AtomicU64,
    /// blackbox_exporter's `--timeout-offset`, in nanoseconds.
    offset_nanos: AtomicU64,
    started: SystemTime,
    counts: Counters,
    /// The debug output of the last probes, for `/logs`.
    history: History,
    /// Bytes of [`PROBE_OUTPUT_BUDGET`] reserved by the probes in flight.
    output_held: Arc<AtomicU64>,
    /// The checks of the module and target pairs last asked for.
    plans: Plans,
}

/// A `/probe` request checked: what its answer needs.
struct Begun {
    /// The modules in force when the probe started: a reload meanwhile does not change it.
    modules: Arc<Modules>,
    module: String,
    target: String,
    /// The `hostname` parameter, which the debug page shows in the module.
    hostname: Option<String>,
    debug: bool,
    log: String,
}

/// A `/probe` request's check, and what its answer needs of its spec.
struct Check {
    /// The check to submit, or why the engine refused its spec.
    plan: Result<CheckPlan, EngineError>,
    timeout: Duration,
    output_limit: usize,
    /// The address family it resolves for (`ip4`, `ip6`), for the log.
    family: &'static str,
}

impl Check {
    /// The check of `spec`, its plan handed to `keep` when the engine takes the spec.
    fn new(spec: prober::ProbeSpec, keep: impl FnOnce(&Planned)) -> Check {
        let (timeout, output_limit) = (spec.timeout, spec.output_limit);
        let family = spec.ip_family().name();
        let plan = CheckPlan::new(spec);
        if let Ok(plan) = &plan {
            keep(&Planned { plan: plan.clone(), timeout, output_limit, family });
        }
        Check { plan, timeout, output_limit, family }
    }

    fn kept(p: Planned) -> Check {
        Check {
            plan: Ok(p.plan),
            timeout: p.timeout,
            output_limit: p.output_limit,
            family: p.family,
        }
    }
}

/// A `/probe` request waiting for its outcome.
struct Waiting {
    begun: Begun,
    started: Instant,
    /// When the probe's timeout ends: also the end of its CEL expressions' evaluation.
    deadline: Instant,
    done: Done,
    /// The output this probe may hold, counted in [`PROBE_OUTPUT_BUDGET`] until it is
    /// answered or cancelled (dropped).
    _output: Reservation,
}

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiting").field("module", &self.begun.module).finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Counters {
    probes: AtomicU64,
    unknown_module: AtomicU64,
    denied: AtomicU64,
    bad_target: AtomicU64,
    cancelled: AtomicU64,
    over_budget: AtomicU64,
}

impl Exporter {
    /// Starts the engine thread for `modules`.
    ///
    /// # Errors
    ///
    /// The error of creating the engine or its thread.
    pub fn start(modules: Modules) -> std::io::Result<Exporter> {
        let engine = Engine::new()?;
        let handle = engine.handle();
        let inner = Inner::new(modules, Probing::Thread(handle.clone()));
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("prober-serve-engine".into())
            .spawn(move || run_engine_or_abort(engine, &s))?;
        Ok(Exporter { inner, _engine: Some(EngineThread { handle, stop, thread: Some(thread) }) })
    }

    /// Makes the exporter with an engine that the caller's poll loop drives ([`EngineDriver`]:
    /// poll its descriptor, turn it when readable or when its timeout passes) on the thread
    /// that calls [`Exporter::handle_with`]: a `/probe` is then checked, probed and answered on
    /// that one thread, without a wake-up between threads (what `prober serve` does with its
    /// HTTP server's loop).
    ///
    /// [`Exporter::handle`] waits for its answer, so it must not be asked for a `/probe` on the
    /// thread that turns the engine (the other paths answer at once).
    ///
    /// # Errors
    ///
    /// The error of creating the engine.
    pub fn start_driven(modules: Modules) -> std::io::Result<(Exporter, EngineDriver)> {
        let (probing, driver) = Probing::driven(Engine::new()?);
        Ok((Exporter { inner: Inner::new(modules, probing), _engine: None }, driver))
    }

    /// Sets the timeout offset (blackbox_exporter's `--timeout-offset`).
    pub fn set_timeout_offset(&mut self, offset: Duration) {
        let nanos = u64::try_from(offset.as_nanos()).unwrap_or(u64::MAX);
        self.inner.offset_nanos.store(nanos, Ordering::Relaxed);
    }

    /// How many probes `/logs` keeps the debug output of (blackbox_exporter's
    /// `--history.limit`, 100), and as many failures that have left them.
    pub fn set_history_limit(&mut self, limit: usize) {
        self.inner.history.set_limit(limit);
    }

    /// Records a reload of the module file: new `/probe` requests use the modules it brings,
    /// probes in flight finish with the ones they started with, and `/metrics` says how the
    /// last reload went (blackbox_exporter's `config_last_reload_*` gauges).
    pub fn reload(&self, reload: Reload) {
        self.inner.modules.apply(reload);
    }

    /// Answers one request, waiting for a probe's outcome on this thread.
    pub fn handle(&self, req: &Request<'_>) -> Response {
        let (tx, rx) = sync_channel(1);
        self.handle_with(req, move |r| {
            let _ = tx.send(r);
        });
        // Every submitted probe ends within its timeout; the sender is dropped unsent only
        // when the engine has stopped.
        rx.recv().unwrap_or_else(|_| plain(500, "the engine stopped\n"))
    }

    /// Answers one request through `done`, at once or (for `/probe`) from the engine
    /// thread when the probe's outcome is in: the caller never waits. What it returns cancels
    /// the probe, for a client that has gone ([`ProbeCancel::cancel`]).
    pub fn handle_with(
        &self,
        req: &Request<'_>,
        done: impl FnOnce(Response) + Send + 'static,
    ) -> ProbeCancel {
        let inner = &self.inner;
        let tag = match req.path {
            "/probe" => inner.probe(req, Box::new(done)),
            "/metrics" => {
                done(inner.own_metrics(Format::negotiate(req.header("accept"))));
                None
            }
            "/" => {
                done(inner.status_page());
                None
            }
            "/logs" => {
                done(inner.history.answer(req.query));
                None
            }
            "/config" => {
                let yaml = inner.modules.current().config_yaml().to_string();
                done(Response { status: 200, content_type: PLAIN, body: yaml });
                None
            }
            _ => {
                done(plain(404, "Not Found\n"));
                None
            }
        };
        ProbeCancel { inner: Arc::downgrade(&self.inner), tag }
    }
}

/// Cancels the probe a `/probe` request started ([`Exporter::handle_with`]), for a client that
/// has gone: the engine stops it at its next turn (its socket closed, its buffers freed) and
/// its answer is never made. A no-op once the probe has ended, or for a request answered at
/// once.
#[derive(Debug, Clone)]
pub struct ProbeCancel {
    inner: Weak<Inner>,
    tag: Option<u64>,
}

impl ProbeCancel {
    /// Cancels the probe without waiting for the engine (it may be called on an HTTP server's
    /// loop). `done` is dropped unsent.
    pub fn cancel(&self) {
        if let (Some(inner), Some(tag)) = (self.inner.upgrade(), self.tag) {
            inner.cancel(tag);
        }
    }
}

/// The engine thread's body: it waits in the engine and turns each check's outcome into its
/// request's answer there, so that an answer costs no hand-off to another thread (a
/// dispatcher thread did that until issue 37). It ends when the exporter is dropped; should it
/// end otherwise (the engine's poll failing, or a panic outside one answer), every later
/// `/probe` would wait for an answer that never comes while the process lives on, and a live
/// process with dead endpoints is never restarted by a supervisor: the process is aborted,
/// with a message saying why.
fn run_engine_or_abort(engine: Engine, stop: &AtomicBool) {
    let run = std::panic::AssertUnwindSafe(|| run_engine(engine, stop));
    let why = match std::panic::catch_unwind(run) {
        Ok(Ok(())) => return,
        Ok(Err(e)) => format!("the engine's poll failed: {e}"),
        Err(_) => "it panicked (the message is above)".to_string(),
    };
    eprintln!(
        "prober: the /probe engine thread stopped: {why}; aborting the process so that it is \
         restarted rather than left running with a dead /probe"
    );
    std::process::abort();
}

fn run_engine(mut engine: Engine, stop: &AtomicBool) -> std::io::Result<()> {
    while !stop.load(Ordering::Acquire) {
        // Each probe's outcome goes to its own completion (`Inner::submit`) from within the
        // wait; the engine queues no event for them, and serve makes no others.
        engine.wait(Some(Duration::from_secs(1)))?;
        while engine.next_event().is_some() {}
    }
    Ok(())
}

/// Stops the engine thread when the exporter is dropped (the engine with it: probes in flight
/// are cancelled, requests still waiting are answered 500 as their replies are dropped).
#[derive(Debug)]
struct EngineThread {
    handle: Handle,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for EngineThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.handle.wakeup();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Inner {
    fn new(modules: Modules, probing: Probing) -> Arc<Inner> {
        Arc::new(Inner {
            modules: Loaded::new(modules),
            probing,
            next_tag: AtomicU64::new(1),
            offset_nanos: AtomicU64::new(DEFAULT_TIMEOUT_OFFSET.as_nanos() as u64),
            started: SystemTime::now(),
            counts: Counters::default(),
            history: History::new(),
            output_held: Arc::default(),
            plans: Plans::new(),
        })
    }

    /// Answers the request `w` waits for with its probe's `outcome`, on the engine thread; a
    /// probe cancelled because its client went is counted and never answered.
    fn answer_check(&self, mut w: Waiting, outcome: &Outcome) {
        if outcome.reason == Reason::Cancelled {
            self.counts.cancelled.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // A panic while one answer is written costs that answer only (500), never the
        // engine thread that every other `/probe` waits on.
        let written =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.answer(&mut w, outcome)));
        let response = written.unwrap_or_else(|_| Response {
            status: 500,
            content_type: TEXT,
            body: "internal error: writing this probe's answer panicked\n".to_string(),
        });
        (w.done)(response);
    }

    /// Starts the probe of a `/probe` request (its tag), or answers at once (`None`).
    fn probe(self: &Arc<Self>, req: &Request<'_>, done: Done) -> Option<u64> {
        match self.prepare(req) {
            Ok((check, begun)) => {
                let Some(output) = Reservation::take(&self.output_held, check.output_limit as u64)
                else {
                    self.counts.over_budget.fetch_add(1, Ordering::Relaxed);
                    done(Response {
                        status: 503,
                        content_type: TEXT,
                        body: format!(
                            "too much probe output held by the probes in flight (at most {} \
                             MiB in total); try again\n",
                            PROBE_OUTPUT_BUDGET >> 20
                        ),
                    });
                    return None;
                };
                let started = Instant::now();
                let deadline = started + check.timeout;
                let w = Waiting { begun, started, deadline, done, _output: output };
                Some(self.submit(check.plan, w))
            }
            Err(response) => {
                done(response);
                None
            }
        }
    }

    /// A probe whose request nobody waits for any more: stopped, never answered (its
    /// completion gets the outcome of reason Cancelled, counts it and drops the request; a
    /// probe that has ended already is not affected).
    fn cancel(&self, tag: u64) {
        self.probing.cancel_check(tag);
    }

    /// Checks a `/probe` request and builds its probe (with its module's name, `debug` and
    /// the log begun), or the answer to give at once.
    fn prepare(&self, req: &Request<'_>) -> Result<(Check, Begun), Response> {
        let started = Instant::now();
        let params = query_pairs(req.query);
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_ref());
        let name = get("module").unwrap_or("http_2xx");
        let debug = get("debug") == Some("true");
        let modules = self.modules.current();
        let Some(module) = modules.by_name.get(name) else {
            self.counts.unknown_module.fetch_add(1, Ordering::Relaxed);
            return Err(plain(400, &format!("Unknown module {name:?}\n")));
        };
        let Some(target) = get("target").filter(|t| !t.is_empty()) else {
            return Err(plain(400, "Target parameter is missing\n"));
        };
        let header = req
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("X-Prometheus-Scrape-Timeout-Seconds"))
            .map(|(_, v)| v.as_str());
        let offset = Duration::from_nanos(self.offset_nanos.load(Ordering::Relaxed));
        let timeout = timeout(header, module.timeout, offset).map_err(|e| {
            plain(500, &format!("Failed to parse timeout from Prometheus header: {e}\n"))
        })?;
        // Sized for the lines every probe writes, so that they are not copied as they grow.
        let mut log = String::with_capacity(LOG_CAPACITY);
        // Pushed piece by piece: through the formatting machinery this line cost more.
        let target_shown = prober_core::redact_target(target);
        for piece in [
            "Beginning probe: probe=",
            module.prober.as_str(),
            " target=",
            &target_shown,
            " module=",
            name,
            " timeout_seconds=",
        ] {
            log.push_str(piece);
        }
        push_secs(&mut log, timeout);
        log.push('\n');
        let hostname = get("hostname").filter(|h| !h.is_empty());
        let key = PlanKey { module: name, target, hostname, timeout };
        let check = match self.plans.get(&modules, &key) {
            Some(planned) => Ok(Check::kept(planned)),
            None => module.spec(target, timeout).and_then(|mut spec| {
                if let Some(h) = hostname {
                    module.apply_hostname(&mut spec, h)?;
                }
                Ok(Check::new(spec, |planned| self.plans.put(&modules, &key, planned)))
            }),
        };
        match check {
            Ok(check) => {
                // blackbox_exporter logs the protocol it resolves for; this is the same choice.
                log.push_str("Address family: ");
                log.push_str(check.family);
                log.push('\n');
                let (module, target) = (name.to_string(), target.to_string());
                let hostname = hostname.map(str::to_string);
                let begun =
                    Begun { modules: modules.clone(), module, target, hostname, debug, log };
                Ok((check, begun))
            }
            Err(TargetError::Bad(e)) => {
                self.counts.bad_target.fetch_add(1, Ordering::Relaxed);
                Err(plain(400, &format!("{e}\n")))
            }
            Err(TargetError::Denied(e)) => Err(self.denied(&mut log, &e, debug)),
            Err(TargetError::Unprobeable(u)) => {
                self.counts.bad_target.fetch_add(1, Ordering::Relaxed);
                let _ = writeln!(log, "Target cannot be probed: {}", u.message);
                let duration = started.elapsed();
                let _ = writeln!(log, "Probe failed duration_seconds={}", duration.as_secs_f64());
                let metrics = unprobed::render(module, &u, duration);
                let (name, target) = (name.to_string(), target.to_string());
                let hostname = hostname.map(str::to_string);
                let mut begun =
                    Begun { modules: modules.clone(), module: name, target, hostname, debug, log };
                Err(self.page(&mut begun, metrics, false))
            }
        }
    }

    /// Runs `plan` on the engine thread, whose completion for it answers `w` with its
    /// outcome (the run's own deadline bounds the wait): the request travels with its probe,
    /// so no table of waiting requests is kept or locked. Returns the probe's tag, by which
    /// it is cancelled. A spec the engine refused (`plan`'s error) is answered at once, as a
    /// probe that could not be submitted.
    fn submit(self: &Arc<Self>, plan: Result<CheckPlan, EngineError>, w: Waiting) -> u64 {
        self.counts.probes.fetch_add(1, Ordering::Relaxed);
        let tag = self.next_tag.fetch_add(1, Ordering::Relaxed);
        // The request, taken by the completion; or back here if the engine refuses the probe
        // (the completion is then dropped uncalled).
        let slot = Arc::new(Mutex::new(Some(w)));
        let (inner, taken) = (Arc::downgrade(self), slot.clone());
        let done = move |outcome: Box<Outcome>| {
            let w = taken.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let (Some(inner), Some(w)) = (inner.upgrade(), w) {
                inner.answer_check(w, &outcome);
            }
        };
        if let Err(e) = plan.and_then(|plan| self.probing.submit_plan_with(&plan, tag, done)) {
            if let Some(mut w) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let outcome =
                    Outcome::unknown(Reason::Internal, format!("cannot submit the probe: {e}"));
                let response = self.answer(&mut w, &outcome);
                (w.done)(response);
            }
        }
        tag
    }

    /// The answer to a `/probe` request whose probe ended with `outcome`.
    /// The request's log is moved into the answer (the request is answered once).
    fn answer(&self, w: &mut Waiting, outcome: &Outcome) -> Response {
        let duration = w.started.elapsed();
        let b = &mut w.begun;
        if outcome.reason == Reason::Denied {
            return self.denied(&mut b.log, &outcome.message, b.debug);
        }
        let Some(module) = b.modules.by_name.get(&b.module) else {
            return plain(500, "the module has gone\n");
        };
        let verdict =
            if outcome.result.is_ok() { module.judge(outcome, Some(w.deadline)) } else { None };
        let success = outcome.result.is_ok() && verdict.is_none();
        explain(&mut b.log, outcome, verdict.as_ref(), success, duration);
        let metrics = render(module, outcome, success, verdict.as_ref(), duration);
        self.page(b, metrics, success)
    }

    /// The 200 answer of a probe: its metrics, or with `debug` the log, the metrics and the
    /// module; that debug output is kept for `/logs` either way, as blackbox_exporter does.
    /// The log, the module's name, the target and the hostname are moved out of `b` into the
    /// history (the request is answered once).
    fn page(&self, b: &mut Begun, metrics: String, ok: bool) -> Response {
        let output = Output {
            log: std::mem::take(&mut b.log),
            metrics: metrics.clone(),
            module: std::mem::take(&mut b.module),
            config: Some(b.modules.clone()),
            hostname: b.hostname.take(),
        };
        // The debug page is put together now only when asked for; `/logs` does it later.
        let debug = b.debug.then(|| output.page());
        self.history.add(std::mem::take(&mut b.target), output, ok);
        match debug {
            Some(body) => Response { status: 200, content_type: PLAIN, body },
            None => Response { status: 200, content_type: TEXT, body: metrics },
        }
    }

    fn denied(&self, log: &mut String, why: &str, debug: bool) -> Response {
        self.counts.denied.fetch_add(1, Ordering::Relaxed);
        let why = prober_core::redact_userinfo(why);
        let _ = writeln!(log, "Target refused by the module's allow-list: {why}");
        if debug {
            return Response {
                status: 403,
                content_type: PLAIN,
                body: format!("Logs for the probe:\n{log}"),
            };
        }
        plain(403, &format!("{why}\n"))
    }

    /// `/metrics` in `format` (OpenMetrics when the scraper's `Accept` prefers it).
    fn own_metrics(&self, format: Format) -> Response {
        let c = &self.counts;
        let mut s = String::new();
        let mut counter = |name: &str, help: &'static str, v: u64| {
            family(&mut s, format, name, help, Kind::Counter);
            sample(&mut s, name, &[], v);
        };
        counter(
            "prober_serve_probes_total",
            "Probes run for /probe requests.",
            c.probes.load(Ordering::Relaxed),
        );
        counter(
            "blackbox_module_unknown_total",
            "Count of unknown modules requested by probes",
            c.unknown_module.load(Ordering::Relaxed),
        );
        counter(
            "prober_serve_denied_total",
            "Targets refused by a module's allow-list (403).",
            c.denied.load(Ordering::Relaxed),
        );
        counter(
            "prober_serve_bad_target_total",
            "Targets a module could not probe: malformed (a failed probe, as blackbox_exporter's) or refused by the library (400).",
            c.bad_target.load(Ordering::Relaxed),
        );
        counter(
            "prober_serve_probes_cancelled_total",
            "Probes cancelled because their client went before the answer.",
            c.cancelled.load(Ordering::Relaxed),
        );
        counter(
            "prober_serve_probes_over_budget_total",
            "Probes refused (503) because the probes in flight held the output budget.",
            c.over_budget.load(Ordering::Relaxed),
        );
        let start = self.started.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let name = "process_start_time_seconds";
        let help = "Start time of the process since unix epoch in seconds.";
        family(&mut s, format, name, help, Kind::Gauge);
        sample(&mut s, name, &[], start);
        self.modules.render(&mut s, format);
        finish(&mut s, format);
        Response { status: 200, content_type: format.content_type(), body: s }
    }

    fn status_page(&self) -> Response {
        let mut s = String::from(
            "<html><head><title>prober serve</title></head><body>\n<h1>prober serve</h1>\n<p>blackbox_exporter's <code>/probe?target=T&amp;module=M</code> on libprober's engine. <a href=\"/metrics\">Metrics</a></p>\n<h2>Modules</h2>\n<ul>\n",
        );
        for (name, m) in &self.modules.current().by_name {
            let allow = if m.filter.is_some() { ", allow-list" } else { "" };
            let _ =
                writeln!(s, "<li><code>{}</code>: {}{allow}</li>", html(name), m.prober.as_str());
        }
        s.push_str("</ul>\n</body></html>\n");
        Response { status: 200, content_type: "text/html; charset=utf-8", body: s }
    }
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn plain(status: u16, body: &str) -> Response {
    Response { status, content_type: PLAIN, body: body.to_string() }
}
