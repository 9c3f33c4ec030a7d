//! `prober watch`: the engine on a watch file or a manifest, one line per published change.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prober::{Engine, EngineConfig, EngineError, Event, Outcome, ProbeResult, Role, TargetId};
use serde::Serialize;

use crate::args::{EXIT_FAILURE, Failure, Parser, Token, escape_for_terminal, quote_field};
use crate::metrics::{self, Metrics};
use crate::signals::Signals;
use crate::{check, duration, usage};
use prober_k8s::ports::PortMap;
use prober_k8s::{LoadError, TargetPlan, manifest};

#[derive(Debug)]
enum Input {
    File(PathBuf),
    Manifest(PathBuf),
}

/// What `prober watch` was asked to do.
#[derive(Debug)]
pub struct WatchArgs {
    input: Input,
    opts: Options,
}

/// The options of `prober watch`, besides its input.
#[derive(Debug)]
struct Options {
    host: String,
    ports: PortMap,
    json: bool,
    for_dur: Option<Duration>,
    until_ready: bool,
    /// `--every-run`: a line for every run, not only for changes and failing streaks.
    every_run: bool,
    /// `--metrics ADDR`: serve Prometheus metrics there.
    metrics: Option<SocketAddr>,
}

/// The arguments of `prober watch` as given: the input may still be missing.
#[derive(Debug)]
struct Given {
    input: Option<Input>,
    opts: Options,
}

/// Parses the arguments after `watch`; `Ok(None)` when help was printed.
pub fn parse(mut p: Parser) -> Result<Option<WatchArgs>, Failure> {
    let mut g = Given {
        input: None,
        opts: Options {
            host: "127.0.0.1".to_string(),
            ports: PortMap::default(),
            json: false,
            for_dur: None,
            until_ready: false,
            every_run: false,
            metrics: None,
        },
    };
    while let Some(token) = p.next()? {
        match token {
            Token::Value(v) => g.input(&p, Input::File(PathBuf::from(v)))?,
            Token::Option(opt) if opt == "-h" || opt == "--help" => {
                print!("{}", usage::WATCH);
                return Ok(None);
            }
            Token::Option(opt) => g.option(&mut p, &opt)?,
        }
    }
    let Some(input) = g.input else {
        return Err(p.usage("missing FILE (a watch file, or --manifest FILE)"));
    };
    Ok(Some(WatchArgs { input, opts: g.opts }))
}

impl Given {
    /// One option and its value.
    fn option(&mut self, p: &mut Parser, opt: &str) -> Result<(), Failure> {
        match opt {
            "--json" => self.opts.json = true,
            "--until-ready" => self.opts.until_ready = true,
            "--every-run" => self.opts.every_run = true,
            "--metrics" => {
                let v = p.text(opt)?;
                let addr =
                    metrics::parse_addr(&v).map_err(|e| p.usage(format!("--metrics: {e}")))?;
                self.opts.metrics = Some(addr);
            }
            "--for" => {
                let v = p.text(opt)?;
                self.opts.for_dur =
                    Some(duration::parse_positive(&v).map_err(|e| p.usage(format!("--for: {e}")))?);
            }
            "--host" => {
                let v = p.text(opt)?;
                self.opts.host = host(p, &v)?;
            }
            "--port" => {
                let v = p.text(opt)?;
                self.opts.ports.add(&v).map_err(|e| p.usage(e))?;
            }
            "--manifest" => {
                let v = p.path(opt)?;
                self.input(p, Input::Manifest(v))?;
            }
            _ => return Err(p.usage(format!("unknown option '{opt}' for 'prober watch'"))),
        }
        Ok(())
    }

    /// FILE or `--manifest FILE`: one of them, once.
    fn input(&mut self, p: &Parser, i: Input) -> Result<(), Failure> {
        if self.input.is_some() {
            return Err(p.usage("give one FILE or one --manifest FILE"));
        }
        self.input = Some(i);
        Ok(())
    }
}

/// `--host ADDR`: a host name or an IP address (IPv6 with or without brackets), no port.
fn host(p: &Parser, v: &str) -> Result<String, Failure> {
    let e = match prober_k8s::bare_host(v) {
        Ok(bare) => return Ok(bare.to_string()),
        Err(e) => e,
    };
    // `127.0.0.1:18080`, `localhost:8080`, `[::1]:8080`: a port where only a host goes.
    let with_port = v.rsplit_once(':').is_some_and(|(h, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && prober_k8s::bare_host(h).is_ok()
    });
    let why = if with_port {
        format!(
            "'{v}' has a port; --host takes a host name or an IP address only (map the probes' \
             ports with --port PORT=LOCAL, e.g. --port 8080=18080)"
        )
    } else {
        e.to_string()
    };
    Err(p.usage(format!("--host: {why}")))
}

/// Whether `path` is standard input (`-`).
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The directory that relative file names in the input are relative to: the input's own
/// (`None` for standard input: the current directory).
fn base_dir(path: &Path) -> Option<&Path> {
    if is_stdin(path) { None } else { path.parent() }
}

/// The largest watch file or manifest read: far beyond any real one (a 100,000-target watch
/// file is about 8 MiB), and small enough that parsing it stays in the hundreds of MiB.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads the input, refusing more than [`MAX_INPUT_BYTES`]: a regular file by its size before
/// reading it, anything else (standard input, a pipe) once the limit is crossed, so no more
/// than the limit plus one byte is ever read into memory.
fn read_input(file_name: &Path) -> Result<String, Failure> {
    let path = file_name.to_string_lossy();
    let too_large = || {
        Failure::input(format!(
            "{path}: larger than {} MiB, the limit for watch files and manifests",
            MAX_INPUT_BYTES >> 20
        ))
    };
    let cannot_read = |e: io::Error| Failure::no_input(format!("cannot read {path}: {e}"));
    let mut bytes = Vec::new();
    if is_stdin(file_name) {
        io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot_read)?;
    } else {
        let file = std::fs::File::open(file_name).map_err(cannot_read)?;
        let meta = file.metadata().map_err(cannot_read)?;
        if meta.is_file() && meta.len() > MAX_INPUT_BYTES {
            return Err(too_large());
        }
        if meta.is_file() {
            bytes.reserve(meta.len() as usize);
        }
        file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(cannot_read)?;
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| Failure::input(format!("{path}: not UTF-8 text")))
}

/// Reads and checks the input: every problem is reported before anything runs.
fn load(w: &WatchArgs) -> Result<Vec<TargetPlan>, Failure> {
    let mut notes = Vec::new();
    // Relative file names in the input are relative to its directory (standard input: the
    // current directory).
    let (path, plans, manifest_as_file) = match &w.input {
        Input::File(path) => {
            let text = read_input(path)?;
            let json = path.as_os_str().as_bytes().ends_with(b".json");
            let plans = prober_k8s::load_watch_file(
                &text,
                json,
                &w.opts.host,
                &w.opts.ports,
                base_dir(path),
                &mut notes,
            );
            let hint = plans.is_err() && manifest::looks_like_manifest(&text);
            (path, plans, hint)
        }
        Input::Manifest(path) => {
            let text = read_input(path)?;
            (
                path,
                manifest::load(&text, &w.opts.host, &w.opts.ports, base_dir(path), &mut notes),
                false,
            )
        }
    };
    let path = path.to_string_lossy();
    for n in &notes {
        eprintln!("prober: note: {}: {}", escape_for_terminal(&path), escape_for_terminal(n));
    }
    plans.map_err(|e| match e {
        _ if manifest_as_file => Failure::usage(
            "watch",
            format!(
                "{path} is a Kubernetes manifest (it has apiVersion and kind), not a watch file: \
                 run 'prober watch --manifest {path}'"
            ),
        ),
        LoadError::File(e) => Failure::input(format!("{path}: {e}")),
        LoadError::Port(e) => Failure::usage("watch", e),
    })
}

/// A target's published values, for the started / ready / live summary, and what its runs
/// said, for the explanations.
#[derive(Debug)]
struct TargetState {
    name: String,
    has: [bool; 3],
    value: [ProbeResult; 3],
    /// Each role's last run result (`None` before its first run).
    last_run: [Option<ProbeResult>; 3],
    /// Each role's last run that did not succeed: what the summary explains.
    last_bad: [Option<Box<Outcome>>; 3],
}

/// A run that did not succeed: `Failure`, or `Unknown` (the probe could not run).
fn failing(r: ProbeResult) -> bool {
    matches!(r, ProbeResult::Failure | ProbeResult::Unknown)
}

impl TargetState {
    fn new(name: String, has: [bool; 3]) -> TargetState {
        TargetState {
            name,
            has,
            value: [ProbeResult::Unknown, ProbeResult::Failure, ProbeResult::Success],
            last_run: [None; 3],
            last_bad: [None, None, None],
        }
    }

    fn started(&self) -> bool {
        !self.has[Role::Startup.index()]
            || self.value[Role::Startup.index()] == ProbeResult::Success
    }

    fn ready(&self) -> bool {
        let r = Role::Readiness.index();
        self.started() && (!self.has[r] || self.value[r] == ProbeResult::Success)
    }

    fn live(&self) -> bool {
        let l = Role::Liveness.index();
        !self.has[l] || self.value[l] == ProbeResult::Success
    }

    fn flags(&self) -> String {
        let yn = |b: bool| if b { "yes" } else { "no" };
        format!(
            "started={} ready={} live={}",
            yn(self.started()),
            yn(self.ready()),
            yn(self.live())
        )
    }

    /// The roles the summary explains: those whose published value or last run is not a
    /// success.
    fn not_success(&self) -> impl Iterator<Item = Role> + '_ {
        Role::ALL.into_iter().filter(|r| {
            let i = r.index();
            self.has[i]
                && (self.value[i] != ProbeResult::Success || self.last_run[i].is_some_and(failing))
        })
    }

    /// Whether `outcome`, the next run of `role`, is the first failing run of a streak (the
    /// first run, or the first after a success).
    fn starts_streak(&self, role: Role, outcome: &Outcome) -> bool {
        failing(outcome.result) && !self.last_run[role.index()].is_some_and(failing)
    }

    /// Records a run (a failing one is kept for the summary).
    fn record_run(&mut self, role: Role, outcome: Box<Outcome>) {
        let i = role.index();
        self.last_run[i] = Some(outcome.result);
        if failing(outcome.result) {
            self.last_bad[i] = Some(outcome);
        }
    }

    fn publish_metrics(&self, m: &Metrics) {
        m.record_state(&self.name, self.started(), self.ready(), self.live());
    }
}

#[derive(Serialize)]
struct StateJson<'a> {
    time_ms: u64,
    target: &'a str,
    role: &'static str,
    result: &'static str,
    message: &'a str,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_not_after: Option<i64>,
    started: bool,
    ready: bool,
    live: bool,
}

/// One run, under its own key (`run`) so that readers of state lines, which match on
/// `target` and `role`, never take a run for a change.
#[derive(Serialize)]
struct RunJson<'a> {
    time_ms: u64,
    run: RunFields<'a>,
}

#[derive(Serialize)]
struct RunFields<'a> {
    target: &'a str,
    role: &'static str,
    result: &'static str,
    reason: &'static str,
    message: &'a str,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_not_after: Option<i64>,
    /// How long after its scheduled time the run started.
    late_ms: f64,
}

/// A role that is not a success, in the summary.
#[derive(Serialize)]
struct RoleJson<'a> {
    role: &'static str,
    /// The published value.
    result: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_run: Option<&'static str>,
    /// Of the last run that did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
struct SummaryTarget<'a> {
    target: &'a str,
    started: bool,
    ready: bool,
    live: bool,
    not_success: Vec<RoleJson<'a>>,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    time_ms: u64,
    summary: Vec<SummaryTarget<'a>>,
    all_ready: bool,
}

/// Why the loop ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Ready,
    Timeout,
    Stopped,
}

/// Starts the `--metrics` server when asked for; says where on standard error (so that a
/// port chosen by the system, `:0`, can be found).
fn start_metrics(w: &WatchArgs) -> Result<Option<Metrics>, Failure> {
    let Some(addr) = w.opts.metrics else {
        return Ok(None);
    };
    let (m, registry) = Metrics::new();
    let bound = metrics::serve(addr, registry)?;
    eprintln!("prober: metrics at http://{bound}/metrics");
    Ok(Some(m))
}

pub fn run(w: &WatchArgs) -> Result<i32, Failure> {
    let plans = load(w)?;
    let metrics = start_metrics(w)?;
    let signals = Signals::install()
        .map_err(|e| Failure::software(format!("cannot install signal handlers: {e}")))?;
    // Every run is an event: the watch explains failing streaks before they are published,
    // and counts runs for --metrics.
    let config = EngineConfig { every_run: true, ..EngineConfig::default() };
    let mut engine = Engine::with_config(config)
        .map_err(|e| Failure::software(format!("cannot start the engine: {e}")))?;
    let mut states: Vec<TargetState> = Vec::with_capacity(plans.len());
    let mut by_id: HashMap<TargetId, usize> = HashMap::with_capacity(plans.len());
    let start = Instant::now();
    for plan in plans {
        let id = engine.add_target();
        by_id.insert(id, states.len());
        let mut has = [false; 3];
        for (role, spec, schedule) in plan.probes {
            has[role.index()] = true;
            engine
                .set_probe(id, role, spec, schedule)
                .map_err(|e| Failure::input(engine_refusal(&e, &plan.name, role)))?;
        }
        states.push(TargetState::new(plan.name, has));
    }
    if let Some(m) = &metrics {
        states.iter().for_each(|t| t.publish_metrics(m));
    }

    let mut out = io::stdout().lock();
    let deadline = w.opts.for_dur.map(|d| start + d);
    let printer = Printer {
        json: w.opts.json,
        every_run: w.opts.every_run,
        start,
        metrics: metrics.as_ref(),
    };
    let mut events = Vec::new();
    let end = loop {
        engine.drain(&mut events, usize::MAX);
        if printer.handle(&mut events, &mut states, &by_id, &mut out).is_err() {
            break End::Stopped;
        }
        if w.opts.until_ready && states.iter().all(TargetState::ready) {
            break End::Ready;
        }
        if signals.take().is_some() {
            break End::Stopped;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break End::Timeout;
        }
        let timeout = match (engine.timeout(), deadline) {
            (Some(t), Some(d)) => Some(t.min(d - now)),
            (t, d) => t.or(d.map(|d| d - now)),
        };
        signals.wait(engine.fd(), timeout).map_err(|e| Failure::software(format!("poll: {e}")))?;
        engine.step().map_err(|e| Failure::software(format!("engine: {e}")))?;
    };
    // In-flight probes (and exec children) are cancelled before the summary is printed.
    drop(engine);
    let _ = writeln!(out, "{}", summary(w.opts.json, start.elapsed(), &states))
        .and_then(|()| out.flush());
    drop(signals);
    Ok(match end {
        End::Ready => 0,
        End::Timeout | End::Stopped if w.opts.until_ready => EXIT_FAILURE,
        End::Timeout | End::Stopped => 0,
    })
}

/// Turns events into lines (and metrics).
struct Printer<'a> {
    json: bool,
    every_run: bool,
    start: Instant,
    metrics: Option<&'a Metrics>,
}

impl Printer<'_> {
    /// Handles a batch of events; an error when standard output cannot be written (the
    /// reader went away: the watch stops).
    fn handle(
        &self,
        events: &mut Vec<Event>,
        states: &mut [TargetState],
        by_id: &HashMap<TargetId, usize>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let mut result = Ok(());
        let mut events = events.drain(..).peekable();
        while let Some(ev) = events.next() {
            let Some(&i) = ev.target().and_then(|t| by_id.get(&t)) else {
                continue;
            };
            let t = &mut states[i];
            let line = match ev {
                Event::State { role, result, outcome, .. } => {
                    t.value[role.index()] = result;
                    if let Some(m) = self.metrics {
                        t.publish_metrics(m);
                    }
                    state_line(self.json, self.start.elapsed(), t, role, result, outcome.as_deref())
                }
                Event::Run { target, role, outcome, late_us } => {
                    let late = Duration::from_micros(late_us);
                    if let Some(m) = self.metrics {
                        m.record_run(&t.name, role, &outcome, late);
                    }
                    // The engine queues a run's change right behind the run: a change line
                    // then carries the same message.
                    let published_now = matches!(events.peek(),
                        Some(Event::State { target: next, role: r, outcome: Some(_), .. })
                            if *next == target && *r == role);
                    let print = self.every_run || t.starts_streak(role, &outcome) && !published_now;
                    // Only a printed run is formatted: most runs print nothing.
                    let line = print.then(|| {
                        run_line(self.json, self.start.elapsed(), &t.name, role, &outcome, late)
                    });
                    t.record_run(role, outcome);
                    let Some(line) = line else { continue };
                    line
                }
                // Completions of one-shot checks (the watch submits none), and any event added later.
                _ => continue,
            };
            if result.is_ok() {
                result = writeln!(out, "{line}").and_then(|()| out.flush());
            }
        }
        result
    }
}

/// Why the engine refused a probe, naming the target and role as the file does
/// (`db/readiness: ...`): the engine's own message would name its internal target number.
fn engine_refusal(e: &EngineError, name: &str, role: Role) -> String {
    match e {
        EngineError::UnknownTarget(_) => format!("{name}/{role}: the engine lost the target"),
        EngineError::NoProbe(_, r) => format!("{name}/{r}: no such probe"),
        e => format!("{name}/{role}: {e}"),
    }
}

fn state_line(
    json: bool,
    elapsed: Duration,
    t: &TargetState,
    role: Role,
    result: ProbeResult,
    outcome: Option<&Outcome>,
) -> String {
    if json {
        let j = StateJson {
            time_ms: elapsed.as_millis() as u64,
            target: &t.name,
            role: role.as_str(),
            result: result.as_str(),
            message: outcome.map_or("", |o| &o.message),
            reason: outcome.map_or("initial", |o| o.reason.as_str()),
            http_status: outcome.and_then(|o| o.http_status),
            exit_code: outcome.and_then(|o| o.exit_code),
            cert_not_after: outcome.and_then(|o| o.cert_not_after),
            started: t.started(),
            ready: t.ready(),
            live: t.live(),
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    let mut line =
        format!("{:>9.3}s {} {role} {result}", elapsed.as_secs_f64(), quote_field(&t.name));
    match outcome {
        None => line.push_str(" (initial)"),
        Some(o) => push_why(&mut line, o),
    }
    line.push_str("  ");
    line.push_str(&t.flags());
    line
}

/// One run: `    1.204s db readiness run failure: dial tcp ...: connection refused (refused,
/// 0.2ms)`. No started / ready / live flags: a run that changes nothing leaves them as they
/// were, and one that changes something is followed by its change line.
fn run_line(
    json: bool,
    elapsed: Duration,
    target: &str,
    role: Role,
    o: &Outcome,
    late: Duration,
) -> String {
    if json {
        let j = RunJson {
            time_ms: elapsed.as_millis() as u64,
            run: RunFields {
                target,
                role: role.as_str(),
                result: o.result.as_str(),
                reason: o.reason.as_str(),
                message: &o.message,
                duration_ms: duration::millis(o.timings.total),
                http_status: o.http_status,
                exit_code: o.exit_code,
                cert_not_after: o.cert_not_after,
                late_ms: duration::millis(late),
            },
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    format!(
        "{:>9.3}s {} {role} run {}",
        elapsed.as_secs_f64(),
        quote_field(target),
        check::human_line(o, o.timings.total)
    )
}

fn summary(json: bool, elapsed: Duration, states: &[TargetState]) -> String {
    if json {
        let j = SummaryJson {
            time_ms: elapsed.as_millis() as u64,
            summary: states
                .iter()
                .map(|t| SummaryTarget {
                    target: &t.name,
                    started: t.started(),
                    ready: t.ready(),
                    live: t.live(),
                    not_success: t
                        .not_success()
                        .map(|role| {
                            let i = role.index();
                            let bad = t.last_bad[i].as_deref();
                            RoleJson {
                                role: role.as_str(),
                                result: t.value[i].as_str(),
                                last_run: t.last_run[i].map(ProbeResult::as_str),
                                reason: bad.map(|o| o.reason.as_str()),
                                message: bad.map(|o| o.message.as_str()),
                            }
                        })
                        .collect(),
                })
                .collect(),
            all_ready: states.iter().all(TargetState::ready),
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    let mut lines = Vec::new();
    for t in states {
        let name = quote_field(&t.name);
        lines.push(format!("summary: {name} {}", t.flags()));
        // Indented under the target's line, which stays the one `summary:` line per target.
        for role in t.not_success() {
            lines.push(format!("  {name} {}", explain(t, role)));
        }
    }
    lines.join("\n")
}

/// `readiness failure: dial tcp ...: connection refused (refused)`: a role's published value,
/// its last run's result when that differs, and the last failing run's message.
fn explain(t: &TargetState, role: Role) -> String {
    let i = role.index();
    let mut s = format!("{role} {}", t.value[i]);
    match t.last_run[i] {
        None => s.push_str(" (no run yet)"),
        Some(last) if failing(last) != failing(t.value[i]) => {
            s.push_str(&format!(", last run {last}"));
        }
        Some(_) => {}
    }
    if let Some(o) = &t.last_bad[i] {
        push_why(&mut s, o);
    }
    s
}

/// Appends `: MESSAGE (DETAILS)` of a run, each part only when it has something to say.
fn push_why(line: &mut String, o: &Outcome) {
    if !o.message.is_empty() {
        line.push_str(": ");
        line.push_str(&escape_for_terminal(&o.message));
    }
    let details = check::details(o);
    if !details.is_empty() {
        line.push_str(&format!(" ({})", details.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::Reason;

    fn state(has: [bool; 3], value: [ProbeResult; 3]) -> TargetState {
        TargetState { value, ..TargetState::new("t".into(), has) }
    }

    #[test]
    fn readiness_rules() {
        use ProbeResult::{Failure as F, Success as S, Unknown as U};
        // No probes: started, ready, live.
        assert_eq!(state([false; 3], [U, F, S]).flags(), "started=yes ready=yes live=yes");
        // Startup pending: not started, so not ready even without a readiness probe.
        assert_eq!(state([true, false, false], [U, F, S]).flags(), "started=no ready=no live=yes");
        assert_eq!(
            state([true, false, false], [S, F, S]).flags(),
            "started=yes ready=yes live=yes"
        );
        assert_eq!(state([false, true, true], [U, F, F]).flags(), "started=yes ready=no live=no");
        assert_eq!(
            state([false, true, false], [U, S, S]).flags(),
            "started=yes ready=yes live=yes"
        );
    }

    #[test]
    fn streaks_and_explanations() {
        use ProbeResult::{Failure as F, Success as S, Unknown as U};
        let run = |r: ProbeResult, msg: &str| {
            let reason = if r == S { Reason::None } else { Reason::Refused };
            Box::new(prober::Outcome::new(r, reason, msg))
        };
        // Startup and readiness; readiness waits for startup and has not run.
        let mut t = state([true, true, false], [U, F, S]);
        assert_eq!(explain(&t, Role::Readiness), "readiness failure (no run yet)");
        // A streak starts at the first failing run, Unknown included, and ends at a success.
        let mut streaks = Vec::new();
        for (r, msg) in [(U, "cannot run"), (F, "refused"), (S, ""), (F, "refused again"), (F, "")]
        {
            let o = run(r, msg);
            streaks.push(t.starts_streak(Role::Startup, &o));
            t.record_run(Role::Startup, o);
        }
        assert_eq!(streaks, [true, false, false, true, false]);
        assert_eq!(explain(&t, Role::Startup), "startup unknown (refused)");
        t.record_run(Role::Startup, run(S, ""));
        // The last failure's message stays, with the last run's result when it differs.
        t.record_run(Role::Startup, run(F, "refused again"));
        t.value[Role::Startup.index()] = S;
        assert_eq!(
            explain(&t, Role::Startup),
            "startup success, last run failure: refused again (refused)"
        );
        let roles: Vec<Role> = t.not_success().collect();
        assert_eq!(roles, [Role::Startup, Role::Readiness]);
        t.record_run(Role::Startup, run(S, ""));
        let roles: Vec<Role> = t.not_success().collect();
        assert_eq!(roles, [Role::Readiness], "a success explains nothing");
        let j: serde_json::Value =
            serde_json::from_str(&summary(true, Duration::ZERO, &[t])).unwrap();
        assert_eq!(
            j["summary"][0]["not_success"],
            serde_json::json!([{"role": "readiness", "result": "failure"}])
        );
    }

    #[test]
    fn engine_refusals_name_the_target() {
        assert_eq!(
            engine_refusal(&EngineError::NoProbe(7, Role::Liveness), "db", Role::Readiness),
            "db/liveness: no such probe"
        );
        assert_eq!(
            engine_refusal(&EngineError::UnknownTarget(7), "web/app", Role::Startup),
            "web/app/startup: the engine lost the target"
        );
    }

    #[test]
    fn lines() {
        let t = state(
            [false, true, false],
            [ProbeResult::Unknown, ProbeResult::Failure, ProbeResult::Success],
        );
        let l = state_line(
            false,
            Duration::from_millis(1500),
            &t,
            Role::Readiness,
            ProbeResult::Failure,
            None,
        );
        assert_eq!(l, "    1.500s t readiness failure (initial)  started=yes ready=no live=yes");
        let mut o =
            prober::Outcome::failure(Reason::Status, "HTTP probe failed with statuscode: 503");
        o.http_status = Some(503);
        let l = state_line(
            true,
            Duration::from_millis(7),
            &t,
            Role::Readiness,
            ProbeResult::Failure,
            Some(&o),
        );
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["time_ms"], 7);
        assert_eq!(v["reason"], "status");
        assert_eq!(v["http_status"], 503);
        assert_eq!(v["ready"], false);
    }
}
