//! `prober-soak [--probes N] [--concurrency C] [--target-bin PATH]`: the soak run of
//! `ci/soak.sh`.
//!
//! Submits `N` one-shot probes (default one million) to one [`prober::Engine`], at most `C` in
//! flight (default 256), in a fixed mix per thousand:
//!
//! | per mille | probe | expected |
//! |---:|---|---|
//! | 330 | HTTP GET `/ok` | Success |
//! | 50 | HTTP GET `/status/503` | Failure, `status` |
//! | 5 | HTTP GET `/never-answer`, timeout 100 ms | Failure, `timeout` |
//! | 150 | keep-alive HTTP GET to a server that keeps every connection | Success |
//! | 50 | keep-alive HTTP GET to a server that closes or resets its connections now and then | Success |
//! | 350 | TCP connect to the server | Success |
//! | 50 | TCP connect to a closed port | Failure, `refused` |
//! | 15 | exec `true` / `false` / `sleep 5` with a 50 ms timeout (10, 4, 1) | Success / `exit_code` / `timeout` |
//!
//! The target server is `prober-target` in its own process (so that its threads and sockets
//! are not counted here), found next to this binary unless `--target-bin` says where. The
//! keep-alive servers run in a second process, this binary started with `--serve-keep-alive`
//! (see [`keep_server`]): every run against the churning one succeeds, through the reuse of a
//! kept connection, a fresh dial after a kept connection was found closed, or the one retry
//! after a reused connection failed before any response byte.
//!
//! Every event is checked: its tag must be one that was submitted and not seen before, its
//! result and reason the expected ones. Descriptors, child processes (zombies apart), threads
//! and RSS are sampled before the first probe, after a warm-up of 2000 probes (the
//! baseline: lazily created process-wide things exist by then), every 10% of the run, and at
//! the end. Exit status 0 only if no event was lost, duplicated or unexpected, and
//! descriptors (less the sockets and idle keep-alive connections the engine reports it keeps),
//! children and threads are back at the baseline and RSS within 16 MiB of it; once the engine
//! is dropped, descriptors and threads must be those of the process before the engine was
//! made. With at least 1000 churning keep-alive probes, the engine must also have reused
//! connections, found some closed before reuse, and retried some.

mod keep_server;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use prober::{Engine, Event, KeepStats, PoolStats, ProbeResult, ProbeSpec, Reason};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    HttpOk,
    HttpStatus,
    HttpTimeout,
    HttpKeepOk,
    HttpKeepChurn,
    TcpOk,
    TcpRefused,
    ExecOk,
    ExecFail,
    ExecTimeout,
}

const KINDS: [Kind; 10] = [
    Kind::HttpOk,
    Kind::HttpStatus,
    Kind::HttpTimeout,
    Kind::HttpKeepOk,
    Kind::HttpKeepChurn,
    Kind::TcpOk,
    Kind::TcpRefused,
    Kind::ExecOk,
    Kind::ExecFail,
    Kind::ExecTimeout,
];

impl Kind {
    /// The kind of probe number `i`: a fixed mix per thousand, spread by a permutation.
    fn of(i: u64) -> Kind {
        match (i.wrapping_mul(7919)) % 1000 {
            0..=329 => Kind::HttpOk,
            330..=379 => Kind::HttpStatus,
            380..=384 => Kind::HttpTimeout,
            385..=534 => Kind::HttpKeepOk,
            535..=584 => Kind::HttpKeepChurn,
            585..=924 => Kind::TcpOk,
            925..=974 => Kind::TcpRefused,
            975..=984 => Kind::ExecOk,
            985..=988 => Kind::ExecFail,
            989..=989 => Kind::ExecTimeout,
            _ => Kind::TcpOk,
        }
    }

    fn expected(self) -> (ProbeResult, Reason) {
        match self {
            Kind::HttpOk | Kind::HttpKeepOk | Kind::HttpKeepChurn | Kind::TcpOk | Kind::ExecOk => {
                (ProbeResult::Success, Reason::None)
            }
            Kind::HttpStatus => (ProbeResult::Failure, Reason::Status),
            Kind::HttpTimeout | Kind::ExecTimeout => (ProbeResult::Failure, Reason::Timeout),
            Kind::TcpRefused => (ProbeResult::Failure, Reason::Refused),
            Kind::ExecFail => (ProbeResult::Failure, Reason::ExitCode),
        }
    }

    fn index(self) -> usize {
        KINDS.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// The specs of each kind, built once and cloned per submit.
struct Specs([ProbeSpec; 10]);

/// The ports the probes go to.
struct Ports {
    /// `prober-target`.
    target: u16,
    /// Nothing listens there.
    closed: u16,
    /// The keep-alive server that keeps every connection.
    keep: u16,
    /// The keep-alive server that ends its connections now and then.
    churn: u16,
}

impl Specs {
    fn new(ports: &Ports) -> Result<Specs, String> {
        let ok = Duration::from_secs(10);
        let e = |r: Result<ProbeSpec, prober::SpecError>| r.map_err(|e| e.to_string());
        let keep_alive = |port: u16| -> Result<ProbeSpec, String> {
            let mut s = e(ProbeSpec::http(&format!("http://127.0.0.1:{port}/"))
                .and_then(|s| s.with_timeout(ok)))?;
            s.set_keep_alive(true).map_err(|e| e.to_string())?;
            Ok(s)
        };
        let (port, closed) = (ports.target, ports.closed);
        let base = format!("http://127.0.0.1:{port}");
        Ok(Specs([
            e(ProbeSpec::http(&format!("{base}/ok")).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::http(&format!("{base}/status/503")).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::http(&format!("{base}/never-answer"))
                .and_then(|s| s.with_timeout(Duration::from_millis(100))))?,
            keep_alive(ports.keep)?,
            keep_alive(ports.churn)?,
            e(ProbeSpec::tcp("127.0.0.1", port.into()).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::tcp("127.0.0.1", closed.into()).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::exec(&["true"]).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::exec(&["false"]).and_then(|s| s.with_timeout(ok)))?,
            e(ProbeSpec::exec(&["sleep", "5"])
                .and_then(|s| s.with_timeout(Duration::from_millis(50))))?,
        ]))
    }

    fn get(&self, k: Kind) -> ProbeSpec {
        self.0[k.index()].clone()
    }
}

/// Resources of this process at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    fds: usize,
    /// Live children, the target server excluded.
    children: usize,
    zombies: usize,
    threads: u64,
    rss_kib: u64,
    hwm_kib: u64,
}

fn status_field(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Samples this process; `servers` (the soak's own server processes) are not counted as
/// children.
fn sample(servers: &[u32]) -> Sample {
    let me = std::process::id().to_string();
    let servers: Vec<String> = servers.iter().map(u32::to_string).collect();
    let (mut children, mut zombies) = (0, 0);
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else {
                continue;
            };
            if servers.iter().any(|s| s == pid) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let mut f = stat[close + 1..].split_whitespace();
            let (Some(state), Some(ppid)) = (f.next(), f.next()) else {
                continue;
            };
            if ppid == me {
                if state == "Z" {
                    zombies += 1;
                } else {
                    children += 1;
                }
            }
        }
    }
    Sample {
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
        children,
        zombies,
        threads: status_field("self", "Threads:"),
        rss_kib: status_field("self", "VmRSS:"),
        hwm_kib: status_field("self", "VmHWM:"),
    }
}

fn print_sample(label: &str, s: &Sample, done: u64, in_flight: usize, elapsed: Duration) {
    println!(
        "{label:<10} completed {done:>8}  in-flight {in_flight:>4}  fds {:>4}  children {:>2}  zombies {:>2}  threads {:>3}  rss {:>7} KiB  hwm {:>7} KiB  t {:>7.1}s",
        s.fds,
        s.children,
        s.zombies,
        s.threads,
        s.rss_kib,
        s.hwm_kib,
        elapsed.as_secs_f64()
    );
}

struct Args {
    probes: u64,
    concurrency: usize,
    target_bin: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { probes: 1_000_000, concurrency: 256, target_bin: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--probes" => a.probes = value()?.parse().map_err(|e| format!("--probes: {e}"))?,
            "--concurrency" => {
                a.concurrency = value()?.parse().map_err(|e| format!("--concurrency: {e}"))?;
            }
            "--target-bin" => a.target_bin = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err(
                    "usage: prober-soak [--probes N] [--concurrency C] [--target-bin PATH]".into(),
                );
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    Ok(a)
}

/// A server process of the soak: its stdin open (closing it stops the server) and its stdout
/// past the first line.
struct Server {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Runs `command`; returns the server and the first line it printed (its ports).
    fn start(mut command: Command, what: &str) -> Result<(Server, String), String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| format!("{what}: {e}"))?;
        Ok((Server { child, stdout }, line.trim().to_owned()))
    }

    fn id(&self) -> u32 {
        self.child.id()
    }

    /// Closes its stdin, waits for it to exit; returns what it printed after its first line.
    fn stop(mut self) -> String {
        drop(self.child.stdin.take());
        let mut rest = String::new();
        let _ = self.stdout.read_to_string(&mut rest);
        let _ = self.child.wait();
        rest.trim().to_owned()
    }
}

fn parse_port(s: Option<&str>, what: &str) -> Result<u16, String> {
    s.and_then(|p| p.parse().ok()).ok_or_else(|| format!("{what}: no port in its first line"))
}

#[derive(Default)]
struct Tally {
    submitted: u64,
    completed: u64,
    duplicates: u64,
    unknown_tags: u64,
    other_events: u64,
    per_kind: [u64; 10],
    unexpected: [u64; 10],
    first_unexpected: Option<String>,
}

#[allow(clippy::too_many_arguments)]
/// Runs `total` probes with tags `first..first+total`, at most `concurrency` in flight.
fn run(
    engine: &mut Engine,
    specs: &Specs,
    first: u64,
    total: u64,
    concurrency: usize,
    seen: &mut [u64],
    tally: &mut Tally,
    mut report: impl FnMut(u64, usize),
) -> Result<(), String> {
    let mut next = first;
    let end = first + total;
    let mut done = 0u64;
    let mut last_progress = Instant::now();
    while done < total {
        while next < end && (next - first - done) < concurrency as u64 {
            engine.submit(specs.get(Kind::of(next)), next).map_err(|e| format!("submit: {e}"))?;
            tally.submitted += 1;
            next += 1;
        }
        engine.wait(Some(Duration::from_millis(100))).map_err(|e| format!("wait: {e}"))?;
        while let Some(ev) = engine.next_event() {
            let Event::Check { tag, outcome } = ev else {
                tally.other_events += 1;
                continue;
            };
            if tag < first || tag >= end {
                tally.unknown_tags += 1;
                continue;
            }
            let (word, bit) = ((tag / 64) as usize, 1u64 << (tag % 64));
            if seen[word] & bit != 0 {
                tally.duplicates += 1;
                continue;
            }
            seen[word] |= bit;
            done += 1;
            tally.completed += 1;
            last_progress = Instant::now();
            let k = Kind::of(tag);
            tally.per_kind[k.index()] += 1;
            if (outcome.result, outcome.reason) != k.expected() {
                tally.unexpected[k.index()] += 1;
                if tally.first_unexpected.is_none() {
                    tally.first_unexpected = Some(format!("{k:?} (tag {tag}): {outcome:?}"));
                }
            }
            report(tally.completed, engine.in_flight());
        }
        if last_progress.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "no probe completed for 60 s ({done} of {total} done, {} in flight)",
                engine.in_flight()
            ));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let outcome = if std::env::args().nth(1).as_deref() == Some("--serve-keep-alive") {
        keep_server::serve().map(|()| true)
    } else {
        real_main()
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("prober-soak: {e}");
            ExitCode::from(2)
        }
    }
}

/// What was measured, for [`report`].
struct Figures {
    total: u64,
    run_time: Duration,
    warm: Tally,
    tally: Tally,
    base: Sample,
    end: Sample,
    /// Before the engine was made, and after it was dropped.
    no_engine: Sample,
    dropped: Sample,
    samples: Vec<Sample>,
    base_pool: PoolStats,
    end_pool: PoolStats,
    base_keep: KeepStats,
    end_keep: KeepStats,
    server_threads: u64,
    server_rss: u64,
    keep_servers: String,
}

fn real_main() -> Result<bool, String> {
    let args = parse_args()?;
    let bin = match args.target_bin.clone() {
        Some(b) => b,
        None => std::env::current_exe().map_err(|e| e.to_string())?.with_file_name("prober-target"),
    };
    let started = Instant::now();
    let before = sample(&[]);
    let (server, line) = Server::start(Command::new(&bin), &bin.display().to_string())?;
    let port = parse_port(Some(&line), "prober-target")?;
    let mut keep_cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    keep_cmd.arg("--serve-keep-alive");
    let (keep_server, line) = Server::start(keep_cmd, "prober-soak --serve-keep-alive")?;
    let mut words = line.split_whitespace();
    let keep = parse_port(words.next(), "keep-alive servers")?;
    let churn = parse_port(words.next(), "keep-alive servers")?;
    let ports = Ports { target: port, closed: prober_testkit::closed_port(), keep, churn };
    let specs = Specs::new(&ports)?;
    let servers = [server.id(), keep_server.id()];
    let no_engine = sample(&servers);
    let mut engine = Engine::new().map_err(|e| format!("engine: {e}"))?;
    const WARMUP: u64 = 2000;
    let total = args.probes;
    let mut seen = vec![0u64; ((WARMUP + total) / 64 + 1) as usize];
    println!(
        "prober-soak: {total} probes, at most {} in flight, server pid {} port {port}, closed port {}, keep-alive servers pid {} ports {keep} (keeps) {churn} (churns)",
        args.concurrency,
        server.id(),
        ports.closed,
        keep_server.id(),
    );
    print_sample("before", &before, 0, 0, started.elapsed());

    let mut warm = Tally::default();
    run(&mut engine, &specs, 0, WARMUP, args.concurrency, &mut seen, &mut warm, |_, _| {})?;
    std::thread::sleep(Duration::from_millis(500));
    let base = sample(&servers);
    // The engine keeps some disconnected sockets for reuse and idle keep-alive connections
    // (both bounded); they are counted apart.
    let (base_pool, base_keep) = (engine.socket_pool_stats(), engine.keep_alive_stats());
    print_sample("baseline", &base, 0, engine.in_flight(), started.elapsed());

    let run_start = Instant::now();
    let mut tally = Tally::default();
    let step = (total / 10).max(1);
    let mut samples = Vec::new();
    let result = run(
        &mut engine,
        &specs,
        WARMUP,
        total,
        args.concurrency,
        &mut seen,
        &mut tally,
        |done, in_flight| {
            if done % step == 0 {
                let s = sample(&servers);
                print_sample(
                    &format!("{}%", done * 100 / total),
                    &s,
                    done,
                    in_flight,
                    started.elapsed(),
                );
                samples.push(s);
            }
        },
    );
    let run_time = run_start.elapsed();
    // Let a killed exec child be reaped and closed sockets settle.
    std::thread::sleep(Duration::from_secs(1));
    let end = sample(&servers);
    let (end_pool, end_keep) = (engine.socket_pool_stats(), engine.keep_alive_stats());
    print_sample("end", &end, tally.completed, engine.in_flight(), started.elapsed());
    drop(engine);
    let dropped = sample(&servers);
    let server_threads = status_field(&server.id().to_string(), "Threads:");
    let server_rss = status_field(&server.id().to_string(), "VmRSS:");
    server.stop();
    let keep_servers = keep_server.stop();
    result?;
    Ok(report(&Figures {
        total,
        run_time,
        warm,
        tally,
        base,
        end,
        no_engine,
        dropped,
        samples,
        base_pool,
        end_pool,
        base_keep,
        end_keep,
        server_threads,
        server_rss,
        keep_servers,
    }))
}

/// Prints the figures and the checks; true when every check passed.
fn report(f: &Figures) -> bool {
    let (tally, base, end) = (&f.tally, &f.base, &f.end);
    let lost = tally.submitted - tally.completed;
    println!();
    println!(
        "run: {} probes in {:.1} s ({:.0} probes/s); submitted {} completed {} lost {lost} duplicates {} unknown tags {} other events {} (warm-up: {} probes, {} unexpected)",
        f.total,
        f.run_time.as_secs_f64(),
        f.total as f64 / f.run_time.as_secs_f64(),
        tally.submitted,
        tally.completed,
        tally.duplicates,
        tally.unknown_tags,
        tally.other_events,
        f.warm.completed,
        f.warm.unexpected.iter().sum::<u64>(),
    );
    for k in KINDS {
        println!(
            "  {:<13} {:>8} probes, {:>4} with an unexpected result",
            format!("{k:?}"),
            tally.per_kind[k.index()],
            tally.unexpected[k.index()]
        );
    }
    if let Some(u) = &tally.first_unexpected {
        println!("  first unexpected: {u}");
    }
    let rss_growth = end.rss_kib as i64 - base.rss_kib as i64;
    let peak = f.samples.iter().map(|s| s.rss_kib).max().unwrap_or(end.rss_kib).max(end.rss_kib);
    let (bp, ep, bk, ek) = (f.base_pool.idle, f.end_pool.idle, f.base_keep.idle, f.end_keep.idle);
    println!(
        "resources (baseline -> end): fds {} -> {} (sockets kept for reuse {bp} -> {ep}, idle keep-alive connections {bk} -> {ek}), children {} -> {}, zombies {} -> {}, threads {} -> {}, rss {} -> {} KiB ({:+} KiB; highest sample {} KiB); server at the end: {} threads, {} KiB",
        base.fds,
        end.fds,
        base.children,
        end.children,
        base.zombies,
        end.zombies,
        base.threads,
        end.threads,
        base.rss_kib,
        end.rss_kib,
        rss_growth,
        peak,
        f.server_threads,
        f.server_rss,
    );
    let k = &f.end_keep;
    println!(
        "keep-alive (engine, warm-up included): kept {}, reused {}, found closed before reuse {}, retried {}, expired {}, idle at the end {}",
        k.kept, k.reused, k.stale, k.retried, k.expired, k.idle
    );
    println!("{}", f.keep_servers);
    println!(
        "engine dropped: fds {} (before the engine {}), threads {} (before the engine {})",
        f.dropped.fds, f.no_engine.fds, f.dropped.threads, f.no_engine.threads
    );
    let mut ok = true;
    let mut fail = |cond: bool, what: &str| {
        if cond {
            println!("FAIL: {what}");
            ok = false;
        }
    };
    fail(lost != 0, "events lost");
    fail(
        tally.duplicates + tally.unknown_tags + tally.other_events != 0,
        "duplicate, unknown or stray events",
    );
    fail(tally.unexpected.iter().sum::<u64>() != 0, "unexpected results");
    fail(
        end.fds - ep - ek != base.fds - bp - bk,
        "descriptor count (less the sockets and keep-alive connections kept) not back at the baseline",
    );
    fail(end.children != 0 || end.zombies != 0, "child processes left");
    fail(end.threads != base.threads, "thread count not back at the baseline");
    fail(rss_growth > 16 * 1024, "RSS grew by more than 16 MiB");
    fail(
        f.dropped.fds != f.no_engine.fds || f.dropped.threads != f.no_engine.threads,
        "descriptors or threads left after the engine was dropped",
    );
    fail(
        tally.per_kind[Kind::HttpKeepChurn.index()] >= 1000
            && (k.reused == 0 || k.stale == 0 || k.retried == 0),
        "keep-alive churn not exercised (no reuse, no closed connection found, or no retry)",
    );
    if ok {
        println!("soak: ok");
    }
    ok
}
