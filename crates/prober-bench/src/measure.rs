//! What every benchmark program of `ci/bench.sh` measures, and the one line it prints.
//!
//! The same definitions are used by the C and Go baselines under `bench/`: CPU is user + system
//! time of the probing process from `getrusage(RUSAGE_SELF)` (all its threads), taken around
//! the measured loop only; `rss_kb` is `ru_maxrss`; lateness percentiles are nearest-rank.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// CPU time and wall clock at one instant.
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    pub wall: Instant,
    pub user_us: u64,
    pub sys_us: u64,
    pub child_us: u64,
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the exclusively borrowed struct and reads nothing else.
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

fn tv_us(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
}

impl Usage {
    pub fn now() -> Usage {
        let me = rusage(libc::RUSAGE_SELF);
        let kids = rusage(libc::RUSAGE_CHILDREN);
        Usage {
            wall: Instant::now(),
            user_us: tv_us(me.ru_utime),
            sys_us: tv_us(me.ru_stime),
            child_us: tv_us(kids.ru_utime) + tv_us(kids.ru_stime),
        }
    }

    /// (wall, user µs, sys µs, children's user+sys µs) from `self` to `later`.
    pub fn until(&self, later: &Usage) -> Delta {
        Delta {
            wall: later.wall.saturating_duration_since(self.wall),
            user_us: later.user_us.saturating_sub(self.user_us),
            sys_us: later.sys_us.saturating_sub(self.sys_us),
            child_us: later.child_us.saturating_sub(self.child_us),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Delta {
    pub wall: Duration,
    pub user_us: u64,
    pub sys_us: u64,
    pub child_us: u64,
}

/// `ru_maxrss` of this process, in KiB.
pub fn max_rss_kb() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_maxrss as u64
}

/// Resident set size right now, in bytes (from `/proc/self/statm`).
pub fn current_rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    pages * page
}

/// Heap bytes in use right now (glibc's `mallinfo2`: what the allocator handed out and was not
/// freed, without its page rounding); `None` under another C library.
pub fn heap_in_use() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct by value.
        let m = unsafe { libc::mallinfo2() };
        Some((m.uordblks + m.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Time the threads of this process spent runnable but waiting for a CPU, in ns (the sum of
/// the second field of `/proc/self/task/*/schedstat`): how much other load delayed us.
pub fn runq_wait_ns() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1).and_then(|w| w.parse::<u64>().ok()))
        .sum()
}

/// CPU time (user + system, µs) of this process's threads whose name starts with `prefix`
/// (`prober-netns`: the threads that make sockets in other namespaces), from
/// `/proc/self/task/*/stat` (clock ticks: 10 ms each, so only long windows tell). Threads that
/// exited are not counted.
pub fn threads_cpu_us(prefix: &str) -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter_map(|stat| {
            // "TID (COMM) STATE ...": the name is between the first '(' and the last ')'.
            let (open, close) = (stat.find('(')?, stat.rfind(')')?);
            if !stat[open + 1..close].starts_with(prefix) {
                return None;
            }
            // After the name: state is field 3, utime and stime fields 14 and 15.
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            let ticks =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some(ticks * 1_000_000 / hz)
        })
        .sum()
}

/// Involuntary context switches of this process so far.
pub fn involuntary_switches() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_nivcsw as u64
}

/// Nearest-rank percentile of sorted values (µs), in ms.
pub fn percentile_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    sorted_us[rank.clamp(1, sorted_us.len()) - 1] as f64 / 1000.0
}

/// One `BENCH scenario=... impl=... key=value ...` line, keys in the order they were added.
#[derive(Debug)]
pub struct Line {
    text: String,
}

impl Line {
    pub fn new(scenario: &str, implementation: &str) -> Line {
        Line { text: format!("BENCH scenario={scenario} impl={implementation}") }
    }

    pub fn kv(&mut self, key: &str, value: impl std::fmt::Display) -> &mut Line {
        let _ = write!(self.text, " {key}={value}");
        self
    }

    pub fn f(&mut self, key: &str, value: f64, decimals: usize) -> &mut Line {
        let _ = write!(self.text, " {key}={value:.decimals$}");
        self
    }

    /// The fields every line has: n, ok, fail, wall_s, rate_per_s, cpu_us_per_probe, user and
    /// sys shares, rss_kb.
    pub fn common(&mut self, n: u64, ok: u64, d: &Delta) -> &mut Line {
        let wall = d.wall.as_secs_f64();
        let cpu = (d.user_us + d.sys_us) as f64;
        let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
        self.kv("n", n).kv("ok", ok).kv("fail", n - ok.min(n));
        self.f("wall_s", wall, 3);
        self.f("rate_per_s", if wall > 0.0 { n as f64 / wall } else { 0.0 }, 1);
        self.f("cpu_us_per_probe", per(cpu), 2);
        self.f("user_us_per_probe", per(d.user_us as f64), 2);
        self.f("sys_us_per_probe", per(d.sys_us as f64), 2);
        self.f("cpu_pct", if wall > 0.0 { cpu / 1e4 / wall } else { 0.0 }, 1);
        self.kv("rss_kb", max_rss_kb())
    }

    /// As [`Line::common`], but `cpu_us_per_probe` also counts the CPU of the child processes
    /// waited for (the commands a run started, and theirs): the whole cost of a run that
    /// forks, whoever forks. `self_us_per_probe` and `child_us_per_probe` split it.
    pub fn common_with_children(&mut self, n: u64, ok: u64, d: &Delta) -> &mut Line {
        let wall = d.wall.as_secs_f64();
        let own = (d.user_us + d.sys_us) as f64;
        let all = own + d.child_us as f64;
        let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
        self.kv("n", n).kv("ok", ok).kv("fail", n - ok.min(n));
        self.f("wall_s", wall, 3);
        self.f("rate_per_s", if wall > 0.0 { n as f64 / wall } else { 0.0 }, 1);
        self.f("cpu_us_per_probe", per(all), 2);
        self.f("self_us_per_probe", per(own), 2);
        self.f("child_us_per_probe", per(d.child_us as f64), 2);
        self.f("cpu_pct", if wall > 0.0 { all / 1e4 / wall } else { 0.0 }, 1);
        self.kv("rss_kb", max_rss_kb())
    }

    pub fn lateness(&mut self, sorted_us: &[u64]) -> &mut Line {
        self.f("lateness_p50_ms", percentile_ms(sorted_us, 50.0), 3);
        self.f("lateness_p99_ms", percentile_ms(sorted_us, 99.0), 3);
        self.f("lateness_max_ms", sorted_us.last().copied().unwrap_or(0) as f64 / 1000.0, 3)
    }

    pub fn print(&self) {
        println!("{}", self.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).map(|x| x * 1000).collect();
        assert_eq!(percentile_ms(&v, 50.0), 50.0);
        assert_eq!(percentile_ms(&v, 99.0), 99.0);
        assert_eq!(percentile_ms(&v, 100.0), 100.0);
        assert_eq!(percentile_ms(&[7000], 99.0), 7.0);
        assert_eq!(percentile_ms(&[], 99.0), 0.0);
    }

    #[test]
    fn line_format() {
        let mut l = Line::new("tcp_oneshot", "prober");
        l.kv("n", 3).f("x", 1.23456, 2);
        assert_eq!(l.text, "BENCH scenario=tcp_oneshot impl=prober n=3 x=1.23");
    }
}
