//! `prober watch`: the engine on a watch file or a manifest, one line per published change.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prober::{EngineConfig, EngineError, MAX_THREADS, ProbeResult, Reason, Role, TargetId};

use crate::args::{EXIT_FAILURE, Failure, Parser, escape_for_terminal};
use crate::duration;
use crate::flags::{Command, Flag, Operands, Section, help, path, put, set, switch, text};
use crate::output::{hook_line, run_line, state_line, summary};
use crate::signals::Signals;
use crate::watch_engine::WatchEngine;
use prober_k8s::ports::PortMap;
use prober_k8s::{LoadError, TargetPlan, manifest};
use prober_watch::hooks::{self, Change, HookCommand, Hooks};
use prober_watch::{Notice, TargetState, Tracker, endpoints, metrics, systemd};

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
#[derive(Debug, Default)]
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
    /// `--health-listen ADDR`: serve `/readyz` and `/livez` there.
    health: Option<SocketAddr>,
    /// `--web-config FILE`: TLS, basic auth and headers for those endpoints.
    web_config: Option<PathBuf>,
    /// `--on-change CMD`: its words.
    on_change: Option<Vec<String>>,
    /// `--on-change-timeout DUR`.
    hook_timeout: Option<Duration>,
    /// `--threads N`: engines, each on a thread of its own (1: the watch's own thread).
    threads: usize,
}

/// The arguments of `prober watch` as given: the input may still be missing.
#[derive(Debug)]
pub struct Given {
    input: Option<Input>,
    opts: Options,
}

/// Parses the arguments after `watch`; `Ok(None)` when help was printed.
pub fn parse(mut p: Parser) -> Result<Option<WatchArgs>, Failure> {
    let mut g = Given {
        input: None,
        opts: Options { host: "127.0.0.1".to_string(), threads: 1, ..Options::default() },
    };
    if !WATCH.parse(&mut p, &mut g)? {
        return Ok(None);
    }
    let Some(input) = g.input else {
        return Err(p.usage("missing FILE (a watch file, or --manifest FILE)"));
    };
    if g.opts.web_config.is_some() && g.opts.metrics.is_none() && g.opts.health.is_none() {
        return Err(p.usage("--web-config protects --metrics and --health-listen: give one"));
    }
    let w = WatchArgs { input, opts: g.opts };
    // A command the library would refuse is refused now, not at the first change.
    if let Some(cmd) = w.hook() {
        let c = Change {
            target: "",
            role: Role::Readiness,
            from: ProbeResult::Failure,
            to: ProbeResult::Success,
            reason: Reason::None,
        };
        cmd.spec(&c).map_err(|e| p.usage(format!("--on-change: {e}")))?;
    }
    Ok(Some(w))
}

impl WatchArgs {
    /// The hook, when `--on-change` was given.
    fn hook(&self) -> Option<HookCommand> {
        Some(HookCommand {
            argv: self.opts.on_change.clone()?,
            timeout: self.opts.hook_timeout.unwrap_or(hooks::DEFAULT_TIMEOUT),
        })
    }
}

impl Operands for Given {
    /// FILE.
    fn operand(&mut self, p: &Parser, v: OsString) -> Result<(), Failure> {
        self.input(p, Input::File(PathBuf::from(v)))
    }
}

impl Given {
    /// FILE or `--manifest FILE`: one of them, once.
    fn input(&mut self, p: &Parser, i: Input) -> Result<(), Failure> {
        if self.input.is_some() {
            return Err(p.usage("give one FILE or one --manifest FILE"));
        }
        self.input = Some(i);
        Ok(())
    }
}

/// `prober watch`.
pub static WATCH: Command<Given> = Command {
    name: "watch",
    head: HEAD,
    sections: &[Section { title: "Options:", flags: FLAGS, note: "" }],
    tail: "
Exit status: 0 done (or ready with --until-ready), 1 not ready when --for ended or on a
signal with --until-ready, 64 bad arguments or bad file (a --web-config too), 66 file not
readable, 70 the --metrics or --health-listen address cannot be bound.
SIGINT and SIGTERM stop the watch cleanly.
Under systemd (Type=notify, NOTIFY_SOCKET set): READY=1 once every target has its first
verdict, STATUS= on change, WATCHDOG=1 while the watch makes progress, STOPPING=1 at the end.
",
    column: 20,
    unknown_names_command: true,
};

const HEAD: &str = "\
Usage: prober watch [OPTIONS] FILE
       prober watch [OPTIONS] --manifest FILE

Runs periodic probes with the kubelet's rules (initial delay, period, timeout, thresholds,
startup gating) and prints one line per published state change, and the first failing run
of every failing streak with its message.

FILE is a watch file (YAML, or JSON when it ends in .json; '-' reads standard input):
  targets:
    - name: web
      readinessProbe:
        httpGet: {path: /healthz, port: 8080}
        periodSeconds: 2
    - name: api
      livenessProbe:
        grpc: {port: 50051, service: my.pkg.Api}
Probes take exec, httpGet (scheme HTTPS: TLS without verification, as the kubelet),
tcpSocket or grpc (mode TLS for TLS), dns ({name, host, port, type, transport,
validRcodes, validateAnswerRrs, ...}) or icmp ({host, packets, intervalMilliseconds,
payloadSize, ttl, maxLossPercent, ...}), and a 'tls:' block (verify, caFile, serverName,
certFile, keyFile, minVersion, maxVersion, resumption) for TLS probes.
Beyond the kubelet: httpGet.expectStatus (\"200-299,418\") and httpGet.expectBody (a
regular expression); httpGet.keepAlive and grpc.keepAlive: true (runs reuse one
kept-alive connection);
httpGet.http1Only: true (no h2 by ALPN; httpGet.protocol: HTTP2 is h2c, as the kubelet);
httpGet.maxRedirects: N (redirects followed at most, 9 by default), httpGet.cookies: true
(a cookie jar for each run's redirect hops) and httpGet.compression: gzip|deflate|br
(the body decoded before it is kept and matched);
unhealthyPeriodSeconds/Milliseconds (the period while Failure is
published), transitionPeriodSeconds/Milliseconds (while results move towards a threshold)
and jitterPercent (every period drawn from period +/- N %, 0 to 50); tcpSocket.send and
tcpSocket.expect (as --send and --expect), or tcpSocket.steps: [{expect, send,
sendTemplate, starttls}, ...] in order; a target's onChange: {command: [ARGV...]},
its own hook instead of --on-change's.
With --manifest, FILE is a Kubernetes manifest (multi-document YAML, or a List as
'kubectl get -o yaml' writes it): the probes of every container of its Pods, Deployments,
StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs and CronJobs run
against ADDR.
";

/// A duration that must be more than zero, for `opt`.
fn positive(p: &Parser, opt: &str, v: &str) -> Result<Duration, Failure> {
    duration::parse_positive(v).map_err(p.named(opt))
}

/// An address to serve at, for `opt`.
fn addr(p: &Parser, opt: &str, v: &str) -> Result<SocketAddr, Failure> {
    metrics::parse_addr(v).map_err(p.named(opt))
}

#[rustfmt::skip]
const FLAGS: &[Flag<Given>] = &[
    path("--manifest", "FILE", |g, p, v| g.input(p, Input::Manifest(v)),
        "read probes from a Kubernetes manifest"),
    text("--host", "ADDR", |g, p, _, v| put(&mut g.opts.host, host(p, &v)?),
        "host for probes that name none (default 127.0.0.1); a host name or\n\
         an IP address, no port"),
    text("--port", "PORT=LOCAL", |g, p, _, v| g.opts.ports.add(&v).map_err(|e| p.usage(e)),
        "probe local port LOCAL where the file says container port PORT (a\n\
         number, or a port name from the file's ports), as published by\n\
         'docker run -p LOCAL:PORT' (repeatable; one option per port)"),
    text("--for", "DUR", |g, p, o, v| set(&mut g.opts.for_dur, positive(p, o, &v)?),
        "stop after DUR (500ms, 2s, 1m30s, 1h)"),
    switch("--until-ready", |g| g.opts.until_ready = true,
        "exit 0 as soon as every target is ready; 1 if --for ends first"),
    switch("--json", |g| g.opts.json = true, "one JSON object per line"),
    switch("--every-run", |g| g.opts.every_run = true,
        "also a line for every run (result, reason, message, duration)"),
    text("--metrics", "ADDR", |g, p, o, v| set(&mut g.opts.metrics, addr(p, o, &v)?),
        "serve Prometheus metrics at http://ADDR/metrics (IP:PORT, [IPV6]:PORT\n\
         or :PORT; port 0: the system's choice, printed on standard error)"),
    text("--health-listen", "ADDR", |g, p, o, v| set(&mut g.opts.health, addr(p, o, &v)?),
        "serve /readyz and /livez (200 when every target is ready / live, else\n\
         503; ?verbose lists them; /readyz/TARGET for one) at ADDR, as --metrics"),
    path("--web-config", "FILE", |g, _, v| set(&mut g.opts.web_config, v),
        "protect --metrics and --health-listen as Prometheus exporters are (the\n\
         exporter-toolkit's web config: tls_server_config, basic_auth_users with\n\
         bcrypt hashes, http_server_config.headers)"),
    text("--on-change", "CMD",
        |g, p, o, v| set(&mut g.opts.on_change, hooks::split_words(&v).map_err(p.named(o))?),
        "run CMD when a target's published state changes, with PROBER_TARGET,\n\
         PROBER_PROBE, PROBER_FROM, PROBER_TO and PROBER_REASON set; no shell\n\
         (CMD is split into words as a shell would, quotes included; ask for one:\n\
         'sh -c \"...\"'); one run at a time per target, changes meanwhile coalesced\n\
         into one more run with the latest state; output logged as a hook line"),
    text("--threads", "N", |g, p, o, v| put(&mut g.opts.threads, threads(p, o, &v)?),
        "run the probes on N engines, each on a thread of its own, targets\n\
         spread over them (default 1: one engine on the watch's thread), for\n\
         loads one core cannot carry (many TLS probes, short periods)"),
    text("--on-change-timeout", "DUR",
        |g, p, o, v| set(&mut g.opts.hook_timeout, positive(p, o, &v)?),
        "kill a hook's process group after DUR (default 10s)"),
    help(),
];

/// `--threads N`: 1 to [`MAX_THREADS`].
fn threads(p: &Parser, opt: &str, v: &str) -> Result<usize, Failure> {
    let n = v.parse::<usize>().ok().filter(|n| (1..=MAX_THREADS).contains(n));
    n.ok_or_else(|| {
        p.usage(format!("bad {opt} '{v}' (expected a whole number, 1 to {MAX_THREADS})"))
    })
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

/// Why the loop ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Ready,
    Timeout,
    Stopped,
}

pub fn run(w: &WatchArgs) -> Result<i32, Failure> {
    // SAFETY: the command has started no thread yet (the servers, the engine's resolver and
    // the hooks all come later), so nothing reads the environment while it changes.
    let notify_env = unsafe { systemd::Env::take() };
    let plans = load(w)?;
    let signals = Signals::install()
        .map_err(|e| Failure::software(format!("cannot install signal handlers: {e}")))?;
    // Every run is an event: the watch explains failing streaks before they are published,
    // and counts runs for --metrics.
    let config = EngineConfig { every_run: true, ..EngineConfig::default() };
    let mut engine = WatchEngine::start(config, w.opts.threads)
        .map_err(|e| Failure::software(format!("cannot start the engine: {e}")))?;
    let mut states: Vec<TargetState> = Vec::with_capacity(plans.len());
    let mut hook_commands: Vec<Option<HookCommand>> = Vec::with_capacity(plans.len());
    let mut by_id: HashMap<TargetId, usize> = HashMap::with_capacity(plans.len());
    let start = Instant::now();
    for plan in plans {
        let id = engine.add_target().map_err(|e| {
            Failure::software(format!("cannot add {}: {e}", escape_for_terminal(&plan.name)))
        })?;
        by_id.insert(id, states.len());
        let mut has = [false; 3];
        for (role, spec, schedule) in plan.probes {
            has[role.index()] = true;
            engine
                .set_probe(id, role, spec, schedule)
                .map_err(|e| Failure::input(engine_refusal(&e, &plan.name, role)))?;
        }
        states.push(TargetState::new(plan.name, has));
        // A target's own onChange (with --on-change-timeout), else the command line's.
        hook_commands.push(match plan.on_change {
            Some(h) => Some(HookCommand {
                argv: h.command,
                timeout: w.opts.hook_timeout.unwrap_or(hooks::DEFAULT_TIMEOUT),
            }),
            None => w.hook(),
        });
    }
    // Bound before any probe runs (the engine runs nothing until its first step).
    let web = w.opts.web_config.as_deref().map(endpoints::load_web_config).transpose()?;
    let announce = |line: String| eprintln!("prober: {line}");
    let (metrics, health, _servers) =
        endpoints::start(w.opts.metrics, w.opts.health, web.as_ref(), &states, announce)
            .map_err(Failure::software)?
            .split();
    let hooks = Hooks::new(hook_commands);
    let mut tracker = Tracker::new(states, by_id, w.opts.every_run, metrics, health, hooks);

    let mut out = io::stdout().lock();
    let deadline = w.opts.for_dur.map(|d| start + d);
    let mut notifier = systemd::Notifier::new(&notify_env).unwrap_or_else(|e| {
        eprintln!("prober: note: {}", escape_for_terminal(&e));
        None
    });
    let mut events = Vec::new();
    // Set when the watch is done (ready, or --for ended) but hooks still run: probing has
    // stopped, and the watch ends when the last hook (each within its timeout) has.
    let mut ending = None;
    let end = loop {
        engine.drain(&mut events, usize::MAX);
        let json = w.opts.json;
        if tracker.handle(&mut events, |n| print(&mut out, json, start, n)).is_err() {
            break End::Stopped;
        }
        if let Some(n) = &mut notifier {
            if tracker.take_ran() {
                n.progressed();
            }
            let changed = tracker.take_changed();
            n.update(tracker.states(), tracker.waiting(), changed);
            n.tick(Instant::now());
        }
        for (spec, tag) in tracker.hook_runs() {
            engine.submit(spec, tag).map_err(|e| Failure::software(format!("--on-change: {e}")))?;
        }
        if ending.is_none() {
            let now = Instant::now();
            if w.opts.until_ready && tracker.states().iter().all(TargetState::ready) {
                ending = Some(End::Ready);
            } else if deadline.is_some_and(|d| now >= d) {
                ending = Some(End::Timeout);
            }
            if ending.is_some() && !tracker.hooks_idle() {
                // No more probes, so no more changes: only the hooks' runs go on.
                for id in tracker.target_ids() {
                    let _ = engine.remove_target(id);
                }
            }
        }
        if let Some(end) = ending.take_if(|_| tracker.hooks_idle()) {
            break end;
        }
        if signals.take().is_some() {
            break End::Stopped;
        }
        let now = Instant::now();
        let deadline = deadline.filter(|_| ending.is_none());
        let engine_timeout = engine.timeout();
        let mut timeout =
            earliest(engine_timeout, deadline.map(|d| d.saturating_duration_since(now)));
        if let Some(n) = &mut notifier {
            // Waiting with nothing overdue is progress too: the engine is on schedule.
            if engine_timeout.is_none_or(|t| !t.is_zero()) {
                n.progressed();
            }
            timeout = earliest(timeout, n.timeout(now));
        }
        signals.wait(engine.fd(), timeout).map_err(|e| Failure::software(format!("poll: {e}")))?;
        engine.step().map_err(|e| Failure::software(format!("engine: {e}")))?;
    };
    if let Some(n) = &mut notifier {
        n.stopping();
    }
    // In-flight probes (and exec children) are cancelled before the summary is printed.
    drop(engine);
    let _ = writeln!(out, "{}", summary(w.opts.json, start.elapsed(), tracker.states()))
        .and_then(|()| out.flush());
    drop(signals);
    Ok(match end {
        End::Ready => 0,
        End::Timeout | End::Stopped if w.opts.until_ready => EXIT_FAILURE,
        End::Timeout | End::Stopped => 0,
    })
}

/// The sooner of two timeouts, either of which may be absent.
fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Writes the line of `notice` (and flushes it: a reader sees each change as it happens).
fn print(out: &mut impl Write, json: bool, start: Instant, notice: Notice<'_>) -> io::Result<()> {
    let elapsed = start.elapsed();
    let line = match notice {
        Notice::State { target, role, result, outcome } => {
            state_line(json, elapsed, target, role, result, outcome)
        }
        Notice::Run { target, role, outcome, late } => {
            run_line(json, elapsed, &target.name, role, outcome, late)
        }
        Notice::Hook { target, ended, outcome } => {
            hook_line(json, elapsed, &target.name, ended, outcome)
        }
    };
    writeln!(out, "{line}").and_then(|()| out.flush())
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
