//! `prober-bench SCENARIO \[options\]`: libprober's engine (`impl=prober`) on one benchmark
//! scenario of `ci/bench.sh`, printing one `BENCH ...` line on stdout (details on stderr).
//!
//! Scenarios (defaults in brackets; `ci/bench.sh` passes smaller counts under
//! `PROBER_BENCH_QUICK=1`):
//!
//! | scenario | work |
//! |---|---|
//! | `tcp_oneshot` | `--n` \[40000\] TCP connect probes of `--target`, `--conc` \[64\] in flight, one engine |
//! | `http_oneshot` | `--n` \[40000\] HTTP GETs of `http://TARGET{--path}`, `--conc` \[64\] in flight |
//! | `https_oneshot` | the same over TLS (`https://TARGET`, no verification, a full handshake per probe, as the kubelet) |
//! | `https_resume` | `https_oneshot`'s GETs of one spec against a server that resumes sessions, with TLS session resumption on (`--resumption 1`, the default) or off (`0`: a full handshake each); `--tls-max-version 1.2` limits them to TLS 1.2. The one-shot checks of one spec share its prepared plan, and so its sessions; the line says `resumption=` and how many runs `resumed` |
//! | `https_threads` | `--n` \[10000\] `https_oneshot` checks through `--threads` \[1\] engines behind one handle (`spawn_sharded`), `--conc` \[64\] in flight over the group; its `cpu_pct` is how much of the cores the group kept busy |
//! | `http_keepalive` | `--n` \[40000\] HTTP GETs as `http_oneshot`, with keep-alive on |
//! | `https_keepalive` | the same over TLS |
//! | `grpc_oneshot` | `--n` \[20000\] gRPC health checks (`grpc.health.v1.Health/Check` of `--service` \[empty: the server\]) of `--target`, h2c, `--conc` \[64\] in flight |
//! | `grpc_keepalive` | `--n` \[20000\] health checks as `grpc_oneshot`, with keep-alive on: runs reuse kept HTTP/2 connections, one stream per check |
//! | `exec_oneshot` | `--n` \[3000\] runs of `--argv` \[/bin/true\], `--conc` \[16\] in flight; `--cgroup DIR`: each run contained in a cgroup made in `DIR` |
//! | `sched_10k` | `--targets` \[10000\] TCP liveness workers, `--period-ms` \[1000\], jittered first run, for `--duration-s` \[30\] |
//! | `sched_100k` | `--targets` \[100000\] TCP liveness workers, `--period-ms` \[10000\] (10,000 runs a second, as `sched_10k`), jittered, for `--duration-s` \[30\]: against cloudprober |
//! | `cloudprober` | cloudprober (`--bin PATH`, built by `ci/bench.sh`) on a periodic scenario's work: `--targets` \[10000\] TCP targets at `--target`, `--period-ms` \[1000\], `GOMAXPROCS` `--gomaxprocs` \[1\], measured from outside for `--duration-s` \[30\]; see `cloudprober/mod.rs` |
//! | `sched_100k_idle` | `--targets` \[100000\] workers, period \[60000\] ms, jittered; add time and memory per target, then `--duration-s` \[10\] of mostly idle running |
//! | `sched_1m` | `--targets` \[1000000\] TCP liveness workers, period \[60000\] ms, jittered, spread over the addresses `--hosts` \[the target's\] at the target's port (several loopback addresses: 4-tuples to spare), for `--duration-s` \[60\]: memory and heap per target, lateness, CPU per run |
//! | `netns_http` | `http_oneshot`'s GETs with the socket made in the network namespace `--netns PATH` (`/run/netns/NAME`, `/proc/PID/ns/net`) |
//! | `netns_exec` | `--n` \[1000\] runs of `--argv` \[/bin/true\] inside the namespaces of process `--pid` (`nsenter --target PID --all` without nsenter), `--conc` \[1\] in flight; CPU counts the commands |
//! | `command_each` | `--n` \[200\] runs of the command `--argv` (comma-separated), one after another: a script's way (`nsenter ... curl`, `runc exec`); CPU counts the commands; `ok` counts exit status 0; `--per-run K` \[1\]: each run does K units of work (`fping -c`'s echoes), and the line counts units |
//! | `dns_query` | `--n` \[40000\] UDP queries (type A) of `--name` \[`a.bench.test`\] to the DNS server `--target`, `--conc` \[64\] in flight, each a new socket |
//! | `icmp_echo` | `--n` \[20000\] ICMP echo probes (one echo each) of `--host` \[127.0.0.1\], `--conc` \[64\] in flight |
//! | `netns_scale` | `--namespaces` \[1000\] network namespaces (made here with `ip netns`; `--where host`: host listeners instead), each with a listener on 127.0.0.1, one TCP readiness worker each, period `--period-ms` \[1000\], for `--duration-s` \[10\] once all are ready: CPU per probe, descriptors held |
//!
//! In `netns_exec` and `command_each`, `cpu_us_per_probe` is the whole cost of a run: this
//! process's CPU plus that of the child processes waited for (`self_us_per_probe` and
//! `child_us_per_probe` split it).
//!
//! `--label NAME` prints another scenario name (the `rust` reference runs of `c_api` and
//! `go_api` use it), `--impl NAME` another impl name.
//!
//! CPU is the user + system time of this process (every thread: the engine and its idle
//! resolver pool) around the measured loop only; see `measure.rs`.

mod cloudprober;
mod in_flight;
mod measure;
mod opts;
mod runs;
mod threads;
// Namespaces are Linux's own (the test helper that makes them is too).
#[cfg(target_os = "linux")]
mod netns;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use in_flight::{OneEngine, keep_in_flight};
use measure::Usage;
use opts::{Opts, USAGE};
use prober_core::{ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig};
use runs::{Runs, collect_runs};

fn main() -> ExitCode {
    let opts = match Opts::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("prober-bench: {e}");
            return ExitCode::from(64);
        }
    };
    let result = match opts.scenario.as_str() {
        "tcp_oneshot" => tcp_oneshot(&opts),
        "http_oneshot" => http_oneshot(&opts, "http"),
        "https_oneshot" => http_oneshot(&opts, "https"),
        "https_resume" => https_resume(&opts),
        "https_threads" => {
            http_spec(&opts, "https").and_then(|s| threads::https_threads(&opts, &s))
        }
        "http_keepalive" => http_keepalive(&opts, "http"),
        "https_keepalive" => http_keepalive(&opts, "https"),
        "grpc_oneshot" => grpc_oneshot(&opts, false),
        "grpc_keepalive" => grpc_oneshot(&opts, true),
        "exec_oneshot" => exec_oneshot(&opts),
        "sched_10k" => sched(&opts, 10_000, 1_000, 30),
        "sched_100k" => sched(&opts, 100_000, 10_000, 30),
        "sched_100k_idle" => sched(&opts, 100_000, 60_000, 10),
        "sched_1m" => sched(&opts, 1_000_000, 60_000, 60),
        "cloudprober" => cloudprober::run(&opts),
        "netns_http" => netns_http(&opts),
        "netns_exec" => netns_exec(&opts),
        "command_each" => command_each(&opts),
        "dns_query" => dns_query(&opts),
        "icmp_echo" => icmp_echo(&opts),
        #[cfg(target_os = "linux")]
        "netns_scale" => netns::scale(&opts),
        "-h" | "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => Err(format!("unknown scenario {other}\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prober-bench: {e}");
            ExitCode::from(1)
        }
    }
}

fn tcp_oneshot(o: &Opts) -> Result<(), String> {
    let (host, port) = o.target()?;
    let spec = ProbeSpec::tcp(&host, i64::from(port)).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 40_000, 64, &[])
}

/// The GET of `SCHEME://TARGET{--path}` every HTTP scenario makes; `https` verifies nothing, as
/// the kubelet's HTTPS probe (`InsecureSkipVerify`).
fn http_spec(o: &Opts, scheme: &str) -> Result<ProbeSpec, String> {
    let (host, port) = o.target()?;
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let url = format!("{scheme}://{host}:{port}{}", o.str("path", "/"));
    ProbeSpec::http(&url).map_err(|e| e.to_string())
}

/// GETs with a new connection per probe, as the kubelet (over TLS, a full handshake per probe).
fn http_oneshot(o: &Opts, scheme: &str) -> Result<(), String> {
    oneshot(o, &http_spec(o, scheme)?, 40_000, 64, &[])
}

/// `https_oneshot`'s GETs with TLS session resumption on or off (`--resumption 1|0`), over TLS
/// 1.3 or 1.2 (`--tls-max-version`); see the table above.
fn https_resume(o: &Opts) -> Result<(), String> {
    let mut spec = http_spec(o, "https")?;
    let on = o.num("resumption", 1)? != 0;
    let mut tls = prober_core::TlsOptions { resumption: on, ..prober_core::TlsOptions::default() };
    if let Some(v) = o.values.get("tls-max-version") {
        tls.max_version =
            Some(prober_core::TlsVersion::parse(v).ok_or("--tls-max-version: 1.2 or 1.3")?);
    }
    spec.set_tls(tls).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 10_000, 64, &[("resumption", u64::from(on))])
}

/// `http_oneshot`'s probes and loop with keep-alive on; the line says `keep_alive=1` (which
/// `ci/bench.sh` checks before it holds the figures against the keep-alive targets).
fn http_keepalive(o: &Opts, scheme: &str) -> Result<(), String> {
    let mut spec = http_spec(o, scheme)?;
    spec.set_keep_alive(true).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 40_000, 64, &[("keep_alive", 1)])
}

/// gRPC health checks of `--service` (default empty: the server as a whole) at `--target`, in
/// plaintext h2c as the kubelet: a new connection, HTTP/2 handshake and `Check` per probe; with
/// `keep_alive`, on kept connections (one stream per check; the line says `keep_alive=1`).
fn grpc_oneshot(o: &Opts, keep_alive: bool) -> Result<(), String> {
    let (host, port) = o.target()?;
    let mut spec = ProbeSpec::grpc(&host, i64::from(port), &o.str("service", ""))
        .map_err(|e| e.to_string())?;
    if keep_alive {
        spec.set_keep_alive(true).map_err(|e| e.to_string())?;
        return oneshot(o, &spec, 20_000, 64, &[("keep_alive", 1)]);
    }
    oneshot(o, &spec, 20_000, 64, &[])
}

fn exec_oneshot(o: &Opts) -> Result<(), String> {
    let argv = o.str("argv", "/bin/true");
    let argv: Vec<&str> = argv.split(',').collect();
    let mut spec = ProbeSpec::exec(&argv).map_err(|e| e.to_string())?;
    if let Some(dir) = o.values.get("cgroup") {
        spec.set_exec_cgroup(Some(dir.into())).map_err(|e| e.to_string())?;
    }
    oneshot(o, &spec, 3_000, 16, &[])
}

/// UDP queries (type A, class IN, recursion desired) of `--name` \[`a.bench.test`\] to the
/// server `--target`: each probe a new socket, one query, the answer parsed and checked
/// (NOERROR), as `prober check dns://` does.
fn dns_query(o: &Opts) -> Result<(), String> {
    let (host, port) = o.target()?;
    let name = o.str("name", "a.bench.test");
    let spec = ProbeSpec::dns(&host, i64::from(port), &name).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 40_000, 64, &[])
}

/// ICMP echo probes of `--host` \[127.0.0.1\], one echo each with the default payload.
fn icmp_echo(o: &Opts) -> Result<(), String> {
    let spec = ProbeSpec::icmp(&o.str("host", "127.0.0.1")).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 20_000, 64, &[])
}

/// `http_oneshot`'s GETs, each socket made in the network namespace `--netns` (a path).
fn netns_http(o: &Opts) -> Result<(), String> {
    let mut spec = http_spec(o, "http")?;
    let path = o.values.get("netns").ok_or("--netns PATH is required")?;
    spec.set_netns(path).map_err(|e| e.to_string())?;
    oneshot(o, &spec, 40_000, 64, &[])
}

/// Runs of `--argv` inside the namespaces of process `--pid`, as `nsenter --target PID --all`.
fn netns_exec(o: &Opts) -> Result<(), String> {
    let argv = o.str("argv", "/bin/true");
    let argv: Vec<&str> = argv.split(',').collect();
    let pid = o.num("pid", 0)?;
    let pid = u32::try_from(pid).ok().filter(|p| *p > 0).ok_or("--pid PID is required")?;
    let spec = ProbeSpec::exec(&argv)
        .and_then(|s| s.with_namespaces_of(pid))
        .map_err(|e| e.to_string())?;
    oneshot(o, &spec, 1_000, 1, &[])
}

/// The command `--argv` run `--n` times, one after another, as a shell script does: a
/// baseline of `netns_http` (`nsenter --net=PATH curl ...`) and `netns_exec` (`nsenter
/// --target PID --all CMD`, `runc exec NAME CMD`). Its output goes to /dev/null.
fn command_each(o: &Opts) -> Result<(), String> {
    let argv = o.values.get("argv").ok_or("--argv PROG[,ARG...] is required")?;
    let argv: Vec<&str> = argv.split(',').collect();
    let n = o.num("n", 200)?;
    let per_run = o.num("per-run", 1)?.max(1);
    let mut ok = 0u64;
    let mut first_failure: Option<String> = None;
    let start = Usage::now();
    for _ in 0..n {
        let status = std::process::Command::new(argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("{}: {e}", argv[0]))?;
        if status.success() {
            ok += 1;
        } else if first_failure.is_none() {
            first_failure = Some(status.to_string());
        }
    }
    let d = start.until(&Usage::now());
    if let Some(f) = first_failure {
        eprintln!("prober-bench: {} of {n} runs did not succeed; first: {f}", n - ok);
    }
    let mut line = o.line();
    line.common_with_children(n * per_run, ok * per_run, &d).kv("conc", 1);
    line.print();
    Ok(())
}

/// `n` one-shot probes of `spec` with `conc` in flight through one engine on this thread:
/// submit, wait, drain, and submit one more per finished probe. `extra` fields end the line.
fn oneshot(
    o: &Opts,
    spec: &ProbeSpec,
    n: u64,
    conc: u64,
    extra: &[(&str, u64)],
) -> Result<(), String> {
    let n = o.num("n", n)?;
    let conc = o.num("conc", conc)?.max(1);
    let engine = Engine::new().map_err(|e| format!("engine: {e}"))?;
    let mut checks = OneEngine { engine, events: Vec::with_capacity(1024) };
    let helpers0 = measure::threads_cpu_us("prober-netns");
    let start = Usage::now();
    let tally = keep_in_flight(&mut checks, spec, n, conc)?;
    let d = start.until(&Usage::now());
    tally.note_failures(n);
    let ok = tally.ok;
    let mut line = o.line();
    if o.scenario == "netns_exec" {
        line.common_with_children(n, ok, &d);
    } else {
        line.common(n, ok, &d);
    }
    line.kv("conc", conc);
    if o.scenario == "exec_oneshot" {
        line.f("child_cpu_us_per_probe", d.child_us as f64 / n.max(1) as f64, 2);
    }
    if o.scenario == "netns_http" {
        let helpers = measure::threads_cpu_us("prober-netns").saturating_sub(helpers0);
        line.f("netns_threads_us_per_probe", helpers as f64 / n.max(1) as f64, 2);
    }
    for (key, value) in extra {
        line.kv(key, value);
    }
    if o.scenario == "https_resume" {
        line.kv("resumed", tally.resumed);
    }
    line.print();
    Ok(())
}

/// Periodic TCP liveness workers, one per target, with a jittered first run (as the kubelet
/// spreads its workers after a restart), every run reported with `EngineConfig::every_run`.
///
/// Lateness is how long after its scheduled instant a run *started*: the engine's `late_us`.
fn sched(o: &Opts, targets: u64, period_ms: u64, duration_s: u64) -> Result<(), String> {
    let (host, port) = o.target()?;
    let targets = o.num("targets", targets)?;
    let period = Duration::from_millis(o.num("period-ms", period_ms)?);
    let duration = Duration::from_secs(o.num("duration-s", duration_s)?);
    // Targets go round the addresses of `--hosts` (default: the target's own), at its port.
    let hosts = o.str("hosts", &host);
    let specs = hosts
        .split(',')
        .map(|h| ProbeSpec::tcp(h, i64::from(port)).map_err(|e| e.to_string()))
        .collect::<Result<Vec<ProbeSpec>, String>>()?;
    let schedule = Schedule { period, jitter: true, ..Schedule::default() };
    let config = EngineConfig { every_run: true, ..EngineConfig::default() };
    let mut engine = Engine::with_config(config).map_err(|e| format!("engine: {e}"))?;

    let (rss_before, heap_before) = (measure::current_rss_bytes(), measure::heap_in_use());
    let mut events = Vec::with_capacity(4096);
    let mut add = Duration::ZERO;
    for i in 0..targets {
        let added = Instant::now();
        let t = engine.add_target();
        // A spec of its own per target (cloned), as a host with distinct targets has.
        let spec = specs[(i % specs.len() as u64) as usize].clone();
        engine.set_probe(t, Role::Liveness, spec, schedule).map_err(|e| e.to_string())?;
        add += added.elapsed();
        // A host adding a million targets on the engine's thread turns the engine between
        // adds (a run due meanwhile starts on time, not in one burst with every other one
        // due by the end), and reads the initial-value state events at set-up. The turns
        // are not counted as adding.
        if i % 10_000 == 9_999 {
            engine.step().map_err(|e| format!("step: {e}"))?;
            engine.drain(&mut events, usize::MAX);
            events.clear();
        }
    }
    let add_s = add.as_secs_f64();
    let rss_added = measure::current_rss_bytes();
    engine.drain(&mut events, usize::MAX);
    events.clear();
    // What the targets hold once their set-up events are read (the event queue's room for a
    // million of them is freed with the drain or kept for the next).
    let (rss_set_up, heap_set_up) = (measure::current_rss_bytes(), measure::heap_in_use());
    let mut late_us: Vec<u64> = Vec::with_capacity(
        (targets * duration.as_millis() as u64 / period.as_millis().max(1) as u64) as usize + 1024,
    );
    let (runq0, invol0) = (measure::runq_wait_ns(), measure::involuntary_switches());
    let start = Usage::now();
    let Runs { runs, ok, first_failure } =
        collect_runs(&mut engine, &mut events, start.wall + duration, &mut late_us)?;
    let d = start.until(&Usage::now());
    let runq_ms = measure::runq_wait_ns().saturating_sub(runq0) as f64 / 1e6;
    let invol = measure::involuntary_switches().saturating_sub(invol0);
    let rss_end = measure::current_rss_bytes();
    if let Some(f) = first_failure {
        eprintln!("prober-bench: {} of {runs} runs did not succeed; first: {f}", runs - ok);
    }
    late_us.sort_unstable();
    let mut line = o.line();
    line.common(runs, ok, &d).lateness(&late_us);
    line.f("runq_wait_ms", runq_ms, 1).kv("invol_cs", invol);
    line.kv("targets", targets).kv("period_ms", period.as_millis()).f("add_s", add_s, 3);
    line.kv("rss_per_target_b", rss_added.saturating_sub(rss_before) / targets.max(1));
    // At the end of the window too: what `impl=cloudprober` is held against (its memory after
    // running, which includes what running costs). Left out when /proc could not be read then
    // (0: every descriptor taken, as when a starved target leaves connects pending).
    if rss_end > 0 {
        line.kv("rss_per_target_end_b", rss_end.saturating_sub(rss_before) / targets.max(1));
    }
    if o.scenario == "sched_1m" {
        // The names issue 37 gives this scenario's figures; heap: glibc's bytes in use.
        let per = |bytes: u64| bytes / targets.max(1);
        line.kv("hosts", specs.len());
        line.kv("rss_bytes_per_target", per(rss_set_up.saturating_sub(rss_before)));
        if let (Some(before), Some(after)) = (heap_before, heap_set_up) {
            line.kv("heap_bytes_per_target", per(after.saturating_sub(before)));
        }
        line.f("late_p50_ms", measure::percentile_ms(&late_us, 50.0), 3);
        line.f("late_p99_ms", measure::percentile_ms(&late_us, 99.0), 3);
        line.f("cpu_us_per_run", (d.user_us + d.sys_us) as f64 / runs.max(1) as f64, 2);
    }
    line.print();
    drop(engine);
    Ok(())
}
