//! Hostile commands: daemons that keep the output pipe (also after `setsid`, out of the
//! process group), SIGTERM ignored, a fork bomb, a gigabyte of output and output without end,
//! stdout closed early, death by a signal.
//!
//! For each: the probe ends by its deadline (the command's end, or the timeout), with the
//! precise result, reason and message; nothing of the command's process group is left running;
//! no zombie child of this process is left. The one thing a probe cannot do is reach a process
//! that left the group with `setsid`: such a daemon outlives the probe (see
//! `setsid_daemon_escapes_the_group_but_not_the_deadline`).
//!
//! Every test holds one lock: they count this process's children and peak memory, which
//! other tests running at the same time would disturb. Scripts are `$(VAR)`-expanded as the
//! kubelet does, so the shell's `$$` is written `$$$$`.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use prober_core::{ExecSpec, Outcome, ProbeResult, Reason};
use prober_exec::ExecProbe;
use prober_io::{reaper, run_to_completion};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const LIMIT: usize = 10240;
/// Slack on "ends by its deadline": scheduling, the kill and the reap.
const SLACK: Duration = Duration::from_millis(750);

fn spec(argv: &[&str]) -> ExecSpec {
    ExecSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: None,
        namespaces_of: None,
        cgroup: None,
    }
}

fn sh(script: &str) -> ExecSpec {
    spec(&["sh", "-c", script])
}

/// Runs `s` with `timeout`; checks that it ended by its deadline (and, for a timeout, not
/// before it).
fn run(s: &ExecSpec, timeout: Duration) -> Outcome {
    let mut probe = ExecProbe::new(s, timeout, LIMIT);
    let t = Instant::now();
    let o = run_to_completion(&mut probe);
    let took = t.elapsed();
    assert!(
        took < timeout + SLACK,
        "{:?}: ended after {took:?}, deadline {timeout:?}: {o:?}",
        s.argv
    );
    if o.reason == Reason::Timeout {
        assert!(took >= timeout, "timed out early ({took:?})");
        assert_eq!(
            o.message,
            format!(
                "command timed out: {} timed out after {}",
                // The command as it ran: `$(VAR)` references expanded, as the kubelet's.
                prober_core::go_quote(probe.argv().join(" ").as_bytes()),
                prober_core::format_duration(timeout)
            )
        );
    }
    o
}

/// `(state, ppid, pgrp, session)` of `pid`.
fn stat(pid: i32) -> Option<(char, i32, i32, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut f = s[s.rfind(')')? + 1..].split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some((state, ppid, pgrp, session))
}

fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
}

/// Live (non-zombie) processes in process group `pgid`. (The container's PID 1 may not reap
/// orphans: a killed orphan can stay a zombie of PID 1; a zombie is dead.)
fn live_in_group(pgid: i32) -> Vec<i32> {
    pids().filter(|&p| matches!(stat(p), Some((s, _, g, _)) if g == pgid && s != 'Z')).collect()
}

/// Children of this process: `(pid, state)`.
fn children() -> Vec<(i32, char)> {
    let me = std::process::id() as i32;
    pids().filter_map(|p| stat(p).filter(|s| s.1 == me).map(|s| (p, s.0))).collect()
}

fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The command's process group is empty (the leader's pid is its id), nothing waits in the
/// reaper, and this process has no child left, zombie or not.
fn assert_clean(pgid: i32) {
    wait_until(&format!("process group {pgid} is empty"), Duration::from_secs(5), || {
        live_in_group(pgid).is_empty()
    });
    wait_until("the reaper has nothing pending", Duration::from_secs(5), || reaper::pending() == 0);
    let kids = children();
    assert!(kids.iter().all(|(_, s)| *s != 'Z'), "zombies: {kids:?}");
    assert!(kids.is_empty(), "children left: {kids:?}");
}

/// The first line of the output as a pid (scripts start with `echo $$$$`).
fn first_pid(o: &Outcome) -> i32 {
    let text = o.output_lossy();
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"))
}

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Resets the peak RSS; returns the baseline to compare `VmHWM` with afterwards.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    status_kib("VmHWM:")
}

fn assert_peak_growth_below_50_mib(base: u64, what: &str) {
    let peak = status_kib("VmHWM:");
    let grew = peak.saturating_sub(base);
    println!("{what}: VmHWM {base} KiB -> {peak} KiB (+{} KiB)", grew);
    assert!(grew < 50 * 1024, "{what}: peak RSS grew by {grew} KiB");
}

fn kill(pid: i32) {
    // SAFETY: kill(2) with a pid this test started (read from its own output) and a signal.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

// ---- daemons ---------------------------------------------------------------------------

/// A command that forks a daemon keeping the output pipe, and exits: the probe ends with the
/// command (not with the pipe), and the daemon, still in the group, is killed.
#[test]
fn forked_daemon_holding_the_pipe() {
    let _g = lock();
    let o = run(
        &sh("echo $$$$; (trap '' HUP TERM; exec sleep 60) & echo started"),
        Duration::from_secs(10),
    );
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert!(o.timings.total < Duration::from_secs(2), "waited for the pipe: {o:?}");
    assert!(o.output_lossy().ends_with("started\n"), "{o:?}");
    assert_clean(first_pid(&o));
}

/// The same daemon when the command itself hangs: the group is killed at the deadline.
#[test]
fn forked_daemon_and_a_hanging_command() {
    let _g = lock();
    let o = run(&sh("echo $$$$; (exec sleep 60) & exec sleep 60"), Duration::from_secs(1));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_clean(first_pid(&o));
}

/// `setsid` puts the daemon in a session and process group of its own: no group kill reaches
/// it (the kubelet cannot reach it either; only a cgroup could). What the probe guarantees:
/// it still ends when the command ends, or at its deadline, although the daemon holds the
/// write end of the pipe; the command's own group is gone and no zombie is left. The daemon
/// lives on as an orphan (reparented to PID 1 or the nearest subreaper); once the probe has
/// closed the read end, its writes fail (EPIPE, or SIGPIPE: see the next test). This test
/// kills it by its pid.
#[test]
fn setsid_daemon_escapes_the_group_but_not_the_deadline() {
    let _g = lock();
    // The command gives the daemon time to call setsid() first: before that, it is still in
    // the group and the group kill at the command's exit takes it.
    for (hang, timeout) in
        [("; sleep 0.3", Duration::from_secs(10)), ("; exec sleep 60", Duration::from_secs(1))]
    {
        let script = format!("echo $$$$; setsid sh -c 'exec sleep 60' & echo daemon=$$!{hang}");
        let o = run(&sh(&script), timeout);
        if timeout > Duration::from_secs(1) {
            assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
            assert!(o.timings.total < Duration::from_secs(2), "waited for the daemon: {o:?}");
        } else {
            assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
        }
        let leader = first_pid(&o);
        let text = o.output_lossy();
        let daemon: i32 = text
            .lines()
            .find_map(|l| l.strip_prefix("daemon="))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no daemon pid in {text:?}"));
        assert_clean(leader);
        // The daemon survived the probe, in a session of its own, no longer our child.
        wait_until("the daemon has its own session", Duration::from_secs(5), || {
            stat(daemon).is_some_and(|(_, _, pgrp, sid)| pgrp == daemon && sid == daemon)
        });
        let (state, ppid, ..) = stat(daemon).unwrap();
        assert_ne!(state, 'Z');
        assert_ne!(ppid, std::process::id() as i32);
        kill(daemon);
    }
}

/// A setsid daemon writing as fast as it can into the pipe: the probe reads a bounded amount
/// after the command's exit, then stops.
#[test]
fn setsid_daemon_flooding_the_pipe() {
    let _g = lock();
    let o = run(
        &sh("echo $$$$; setsid sh -c 'echo $$$$; exec cat /dev/zero' & sleep 0.2"),
        Duration::from_secs(10),
    );
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert!(o.truncated && o.output_total > LIMIT as u64, "{o:?}");
    assert!(o.timings.total < Duration::from_secs(3), "{o:?}");
    assert_clean(first_pid(&o));
    // The flooding daemon dies of SIGPIPE once the read end is closed. Its pid is the second
    // line, unless the zeros came first: then find it by its session.
    let text = o.output_lossy();
    let candidates: Vec<i32> = text.lines().skip(1).filter_map(|l| l.trim().parse().ok()).collect();
    for pid in candidates {
        wait_until("the flooding daemon died of SIGPIPE", Duration::from_secs(5), || {
            stat(pid).is_none_or(|(s, _, _, sid)| s == 'Z' || sid != pid)
        });
    }
}

// ---- signals ---------------------------------------------------------------------------

/// SIGTERM (and HUP, INT, QUIT) ignored, by the command and the children it forks: the
/// deadline kill is SIGKILL to the group, which nothing ignores.
#[test]
fn sigterm_ignored() {
    let _g = lock();
    let script = "trap '' TERM HUP INT QUIT; echo $$$$; sleep 60 & sleep 61 & exec sleep 62";
    let o = run(&sh(script), Duration::from_millis(800));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(o.message.ends_with(" timed out after 800ms"), "{}", o.message);
    assert_clean(first_pid(&o));
}

/// Death by a signal is a Failure with the signal's name, whatever the signal.
#[test]
fn exit_by_a_signal() {
    let _g = lock();
    for (sig, name) in
        [(11, "SIGSEGV"), (6, "SIGABRT"), (15, "SIGTERM"), (9, "SIGKILL"), (13, "SIGPIPE")]
    {
        let o = run(&sh(&format!("echo $$$$; kill -{sig} $$$$; sleep 5")), Duration::from_secs(10));
        assert_eq!(
            (o.result, o.reason, o.message.as_str()),
            (
                ProbeResult::Failure,
                Reason::Signal,
                format!("command terminated by signal {sig} ({name})").as_str()
            ),
            "{o:?}"
        );
        assert_eq!(o.exit_code, None);
        assert_clean(first_pid(&o));
    }
    // A child dying of a signal while the command exits 0 is still Success: only the command's
    // own status counts.
    let o = run(&sh("echo $$$$; sh -c 'kill -SEGV $$$$'; exit 0"), Duration::from_secs(10));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_clean(first_pid(&o));
}

// ---- fork bomb -------------------------------------------------------------------------

/// A fork bomb, held to 50 processes by `RLIMIT_NPROC` set in the spawned command only
/// (`prlimit --nproc=50`). The limit is not enforced for root (CAP_SYS_RESOURCE), so as root
/// the bomb runs as `nobody` (`setpriv`); without setpriv it is not run at all. A monitor
/// counts the bomb's processes; the probe (timeout 1.5 s) kills the group at its deadline.
/// As an unprivileged user, the limit counts all of that user's tasks (this test binary's
/// threads included), so the bomb is refused even sooner; the counts are only checked as root.
#[test]
fn fork_bomb_held_to_a_small_process_count() {
    let _g = lock();
    // SAFETY: geteuid and getuid only return a number.
    let root = unsafe { libc::geteuid() } == 0;
    let have = |p: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(p).is_file())
    };
    if !have("prlimit") || (root && !have("setpriv")) {
        eprintln!("fork_bomb_held_to_a_small_process_count: skipped (prlimit or setpriv missing)");
        return;
    }
    let uid: u32 = if root {
        65534
    } else {
        // SAFETY: getuid only returns a number.
        unsafe { libc::getuid() }
    };
    let bomb = "echo $$$$; bomb() { bomb | bomb & }; bomb; exec sleep 60";
    let mut argv: Vec<&str> = Vec::new();
    if root {
        argv.extend(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]);
    }
    argv.extend(["prlimit", "--nproc=50:50", "sh", "-c", bomb]);
    let mut s = spec(&argv);
    s.cwd = Some(PathBuf::from("/"));

    // Count the bomb's live processes (by owner) while it runs. As an unprivileged user the
    // count includes the user's other processes, so it is only checked as root.
    let stop = Arc::new(AtomicBool::new(false));
    let max = Arc::new(AtomicUsize::new(0));
    let before = count_owned_by(uid);
    let monitor = {
        let (stop, max) = (stop.clone(), max.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                max.fetch_max(count_owned_by(uid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let o = run(&s, Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    monitor.join().unwrap();
    let pgid = first_pid(&o);
    let peak = max.load(Ordering::Relaxed);
    let refused = o.output_lossy().matches("Cannot fork").count();
    println!(
        "fork bomb: at most {peak} processes of uid {uid} seen (before: {before}); {refused} forks refused; output {} bytes",
        o.output_total
    );
    // Whatever happens below, leave no bomb behind.
    let cleanup = || {
        // SAFETY: killpg with the group id of the command this test started.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    };
    // The bomb runs until the deadline, or (when the machine is busy and the limit is reached
    // before the top-level shell gets to `exec sleep`) its shell gives up on a refused fork
    // with exit code 2, as dash does. Either way it is a Failure, and what matters below is
    // that nothing of it is left.
    let gave_up = o.reason == Reason::ExitCode && o.exit_code == Some(2) && refused > 0;
    assert!(o.result == ProbeResult::Failure && (o.reason == Reason::Timeout || gave_up), "{o:?}");
    // Processes killed by the group kill may still be on their way out: wait (bounded) until
    // none is left alive.
    let give_up = Instant::now() + Duration::from_secs(10);
    while !live_in_group(pgid).is_empty() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(10));
    }
    let left = live_in_group(pgid);
    if !left.is_empty() {
        cleanup();
        panic!("the group kill left {} bomb processes", left.len());
    }
    assert_clean(pgid);
    if root {
        // dash says "Cannot fork" when fork() fails with EAGAIN: the limit was reached, and held.
        // (Zombies count toward RLIMIT_NPROC until reaped, so the live count seen may stay
        // well below 50.)
        assert!(refused > 0, "the bomb never reached the limit: {:?}", o.output_lossy());
        assert!(peak <= 50 + before + 2, "the bomb was not held at 50: {peak} processes");
    }
}

fn count_owned_by(uid: u32) -> usize {
    pids()
        .filter(|&p| {
            std::fs::metadata(format!("/proc/{p}")).is_ok_and(|m| m.uid() == uid)
                && stat(p).is_some_and(|s| s.0 != 'Z')
        })
        .count()
}

// ---- output ----------------------------------------------------------------------------

/// 1 GiB of output on stderr (same pipe as stdout): counted to the byte, 10240 kept, memory
/// flat.
#[test]
fn gigabyte_of_output_on_stderr() {
    let _g = lock();
    let base = reset_peak();
    let o = run(&sh("echo $$$$; head -c 1073741824 /dev/zero >&2"), Duration::from_secs(60));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output_total, (1 << 30) + first_pid(&o).to_string().len() as u64 + 1);
    assert!(o.truncated);
    assert_eq!(o.output.len(), LIMIT);
    assert_peak_growth_below_50_mib(base, "1 GiB on stderr");
    assert_clean(first_pid(&o));
}

/// Output without end (and a command that never exits): the deadline holds although the pipe
/// is never empty, memory stays flat.
#[test]
fn endless_output_until_the_deadline() {
    let _g = lock();
    let base = reset_peak();
    let o = run(&sh("echo $$$$; cat /dev/zero & exec cat /dev/zero"), Duration::from_secs(2));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(o.truncated && o.output_total > 10 << 20, "read only {} bytes", o.output_total);
    assert_eq!(o.output.len(), LIMIT);
    assert_peak_growth_below_50_mib(base, "endless output");
    assert_clean(first_pid(&o));
}

/// stdout and stderr closed at once: EOF on the pipe long before the exit. The probe waits for
/// the exit (Success, empty output), or for its deadline.
#[test]
fn stdout_closed_early() {
    let _g = lock();
    let o = run(&sh("echo $$$$; exec >&- 2>&-; sleep 0.3; exit 0"), Duration::from_secs(10));
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert!(o.timings.total >= Duration::from_millis(300), "ended at EOF, not at the exit: {o:?}");
    assert_clean(first_pid(&o));

    let o = run(&sh("echo $$$$; exec >&- 2>&-; exit 3"), Duration::from_secs(10));
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Failure, Reason::ExitCode, "command terminated with exit code 3"),
        "{o:?}"
    );
    assert_clean(first_pid(&o));

    let o = run(&sh("echo $$$$; exec >&- 2>&-; exec sleep 60"), Duration::from_millis(500));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_clean(first_pid(&o));
}
