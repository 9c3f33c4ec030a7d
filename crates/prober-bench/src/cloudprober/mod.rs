//! `prober-bench cloudprober --bin PATH --target HOST:PORT`: cloudprober, the self-scheduling
//! peer (issue 37), on a periodic scenario's work (`--targets` \[10000\] TCP targets at
//! `--period-ms` \[1000\]), measured from outside; prints one `BENCH ... impl=cloudprober`
//! line (`--label` names the scenario).
//!
//! 1. Baseline: cloudprober with the same server and surfacers and no probe
//!    ([`config::empty`]), its resident memory 2 s after its `/metrics` answers.
//! 2. The probing configuration ([`config::probes`]), `GOMAXPROCS` = `--gomaxprocs` \[1\]
//!    (one engine thread on our side). Set-up is over when `/metrics` shows every target's
//!    `total` (each target's first export: about one period to start them all, then one
//!    export interval).
//! 3. The measured window, `--duration-s` \[30\] and at least two export intervals (so that
//!    every target exports within it): `/metrics` read, then its CPU (utime + stime of every
//!    thread, `/proc/PID/stat`) and resident memory; at the end the same in the other order,
//!    so that neither read of the page is in the window. Runs per second: each target's
//!    counter difference over its own export timestamps (`scrape.rs`), summed; `n` is that
//!    rate times the window, `cpu_us_per_probe` the CPU over `n`. `series` says how many
//!    targets exported at both ends (the others' runs are counted at the mean rate).
//!
//! Lateness: cloudprober exposes nothing from which it could be computed (a target's
//! goroutine runs on a `time.Ticker`, which drops the ticks it is too late for, and its
//! exported timestamp is the tick's, not the run's start). The line says `lateness=not_exposed`
//! and gives `kept_up`, the measured run rate over the configured one (`targets / period`):
//! below 1, runs were dropped.

mod config;
mod scrape;

use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::opts::Opts;

/// A cloudprober process, killed and waited for when dropped.
struct Peer {
    child: Child,
    log: PathBuf,
}

impl Peer {
    fn start(bin: &str, dir: &Path, name: &str, conf: &str, procs: u64) -> Result<Peer, String> {
        let cfg = dir.join(format!("{name}.cfg"));
        std::fs::write(&cfg, conf).map_err(|e| format!("{}: {e}", cfg.display()))?;
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .arg(format!("--config_file={}", cfg.display()))
            .env("GOMAXPROCS", procs.to_string())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{bin}: {e}"))?;
        Ok(Peer { child, log })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// An error naming the exit and the end of the log if the process has ended.
    fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("cloudprober exited ({status}): {}", self.log_tail())),
            Err(e) => Err(format!("cloudprober: {e}")),
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on right now (for cloudprober's web server).
fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// utime + stime of every thread of `pid` so far, µs (`/proc/PID/stat`, clock ticks).
fn cpu_us(pid: u32) -> Result<(u64, u64), String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    let close = stat.rfind(')').ok_or("no ')' in /proc/PID/stat")?;
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or("short stat");
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok((tick(11)? * 1_000_000 / hz, tick(12)? * 1_000_000 / hz))
}

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`), in bytes.
fn status_bytes(pid: u32, field: &str) -> Result<u64, String> {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}

/// Reads `/metrics` every `every` until `done` holds for its page or `deadline` passes.
fn poll_page(
    peer: &mut Peer,
    port: u16,
    every: Duration,
    deadline: Instant,
    done: impl Fn(&scrape::Page) -> bool,
) -> Result<scrape::Page, String> {
    loop {
        peer.check_alive()?;
        let last = match scrape::get_metrics(port, Duration::from_secs(60)) {
            Ok(text) => {
                let page = scrape::parse(&text);
                if done(&page) {
                    return Ok(page);
                }
                format!("{} targets exported", page.total.len())
            }
            Err(e) => e,
        };
        if Instant::now() >= deadline {
            return Err(format!("cloudprober not ready in time ({last}): {}", peer.log_tail()));
        }
        std::thread::sleep(every);
    }
}

pub(crate) fn run(o: &Opts) -> Result<(), String> {
    let bin = o.values.get("bin").ok_or("--bin PATH (cloudprober) is required")?;
    let (host, port) = o.target()?;
    let targets = o.num("targets", 10_000)?.max(1);
    let period_ms = o.num("period-ms", 1_000)?.max(1);
    let procs = o.num("gomaxprocs", 1)?.max(1);
    let export_ms = config::export_interval_ms(period_ms);
    let window = Duration::from_secs(o.num("duration-s", 30)?)
        .max(Duration::from_millis(2 * export_ms + 1_000));
    let dir = PathBuf::from(o.str("work", &std::env::temp_dir().to_string_lossy()))
        .join(format!("cloudprober-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let server_port = free_port()?;

    // 1. The baseline: no probe.
    let base_rss = {
        let conf = config::empty(server_port, targets);
        let mut base = Peer::start(bin, &dir, "empty", &conf, procs)?;
        let deadline = Instant::now() + Duration::from_secs(60);
        poll_page(&mut base, server_port, Duration::from_millis(100), deadline, |_| true)?;
        std::thread::sleep(Duration::from_secs(2));
        status_bytes(base.pid(), "VmRSS")?
    };

    // 2. Set-up: every target started and exported once.
    let conf = config::probes(server_port, &host, port, targets, period_ms);
    let started = Instant::now();
    let mut peer = Peer::start(bin, &dir, "probes", &conf, procs)?;
    let pid = peer.pid();
    // Generous: 100,000 targets took 211 s to set up at a load average of 14 on 2 cores.
    let setup_bound =
        Duration::from_millis(6 * (2 * period_ms + export_ms)) + Duration::from_secs(120);
    // A page read holds up the surfacer (see config::surfacer_buffer): not too often.
    let every = Duration::from_millis(if targets > 20_000 { 10_000 } else { 1_000 });
    let want = targets as usize;
    let a = poll_page(&mut peer, server_port, every, started + setup_bound, |p| {
        // Every target, or once the bound is near, nine in ten (a result the surfacer dropped
        // leaves its target out until its next export; the rate below allows for that).
        p.total.len() >= want
            || (p.total.len() * 10 >= want * 9 && started.elapsed() * 10 >= setup_bound * 9)
    })?;
    let setup_s = started.elapsed().as_secs_f64();
    eprintln!("cloudprober: {targets} targets exported after {setup_s:.1} s; measuring {window:?}");

    // 3. The window: the page outside it at both ends.
    let (rss_set_up, cpu_a, t_a) = (status_bytes(pid, "VmRSS")?, cpu_us(pid)?, Instant::now());
    std::thread::sleep(window);
    peer.check_alive()?;
    let (cpu_b, t_b) = (cpu_us(pid)?, Instant::now());
    let (rss_end, hwm) = (status_bytes(pid, "VmRSS")?, status_bytes(pid, "VmHWM")?);
    let b = scrape::parse(&scrape::get_metrics(server_port, Duration::from_secs(60))?);
    drop(peer);

    // The mean run rate of the targets that exported at both ends, times the targets: a
    // target whose export the surfacer dropped at one end ran all the same.
    let (sum_rate, series) = scrape::rate(&a.total, &b.total);
    let (sum_ok_rate, ok_series) = scrape::rate(&a.success, &b.success);
    if series == 0 {
        return Err("no target exported twice across the window (no timestamps?)".into());
    }
    let run_rate = sum_rate * targets as f64 / series as f64;
    let ok_rate = sum_ok_rate * targets as f64 / ok_series.max(1) as f64;
    let wall = t_b.saturating_duration_since(t_a).as_secs_f64();
    let (user, sys) = (cpu_b.0.saturating_sub(cpu_a.0), cpu_b.1.saturating_sub(cpu_a.1));
    let n = (run_rate * wall).round() as u64;
    let ok = ((ok_rate * wall).round() as u64).min(n);
    let per = |us: u64| if n == 0 { 0.0 } else { us as f64 / n as f64 };
    let expected = targets as f64 * 1000.0 / period_ms as f64;
    let per_target = |rss: u64| rss.saturating_sub(base_rss) / targets;

    let mut line = o.line();
    line.kv("n", n).kv("ok", ok).kv("fail", n - ok);
    line.f("wall_s", wall, 3).f("rate_per_s", run_rate, 1);
    line.f("cpu_us_per_probe", per(user + sys), 2);
    line.f("user_us_per_probe", per(user), 2).f("sys_us_per_probe", per(sys), 2);
    line.f("cpu_pct", (user + sys) as f64 / 1e4 / wall.max(1e-9), 1);
    line.kv("rss_kb", hwm / 1024);
    line.kv("targets", targets).kv("period_ms", period_ms).f("setup_s", setup_s, 1);
    line.kv("rss_per_target_b", per_target(rss_set_up));
    line.kv("rss_per_target_end_b", per_target(rss_end));
    line.kv("baseline_rss_kb", base_rss / 1024);
    line.f("expected_rate_per_s", expected, 1).f("kept_up", run_rate / expected, 3);
    line.kv("series", series).kv("gomaxprocs", procs);
    line.kv("probes", targets.div_ceil(config::targets_per_probe(targets, period_ms)));
    line.kv("export_interval_ms", export_ms).kv("lateness", "not_exposed");
    line.print();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
