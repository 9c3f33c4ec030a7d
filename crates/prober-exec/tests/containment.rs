//! What an exec run contains (red-team finding 9): a process that leaves the command's process
//! group with `setsid` survives the run unless the run has a cgroup of its own
//! ([`ExecSpec::cgroup`]), and then it does not, on the host or inside another process's
//! namespaces.
//!
//! The cgroup tests need root and a cgroup v2 hierarchy (CI runs as root): without them they
//! fail, saying so, rather than skip. Scripts are `$(VAR)`-expanded as in the kubelet, so the
//! shell's `$$` is written `$$$$`.
//!
//! "Gone" means no such pid or a zombie: the container's PID 1 may not reap orphans.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mio::{Poll, Token, Waker};
use prober_core::{DEFAULT_OUTPUT_LIMIT, ExecSpec, Outcome, ProbeResult, Reason};
use prober_exec::ExecProbe;
use prober_io::{Ctx, Machine, Mailbox, Step, reaper, run_to_completion};
use prober_testkit::unshare::{Namespaced, Options, need_root};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A script that starts a process in a session of its own (out of the command's group) which
/// writes its pid to `$PIDFILE` and becomes `sleep 1000`, waits until it runs `sleep` (bounded:
/// 1,000 checks 10 ms apart), then runs `then`.
fn escaping(then: &str) -> String {
    format!(
        r#"setsid sh -c 'echo $$$$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"; exec sleep 1000' &
i=0; until grep -qs sleep "/proc/`cat "$PIDFILE" 2>/dev/null`/cmdline" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i+1)); done; {then}"#
    )
}

fn spec(script: &str, pidfile: &Path, cgroup: Option<&Path>) -> ExecSpec {
    ExecSpec {
        argv: ["sh", "-c", script].iter().map(|s| s.to_string()).collect(),
        env: vec![("PIDFILE".to_string(), pidfile.display().to_string())],
        cwd: None,
        namespaces_of: None,
        cgroup: cgroup.map(Path::to_path_buf),
    }
}

fn run_with(s: &ExecSpec, timeout: Duration) -> Outcome {
    let mut probe = ExecProbe::new(s, timeout, DEFAULT_OUTPUT_LIMIT);
    run_to_completion(&mut probe)
}

/// True while `pid` is a live (non-zombie) process.
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rfind(')').and_then(|close| stat[close + 1..].split_whitespace().next());
    state.is_some_and(|s| s != "Z")
}

fn session_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    // After the comm: state, ppid, pgrp, session.
    stat[close + 1..].split_whitespace().nth(3)?.parse().ok()
}

/// Polls until `cond` holds; false if it did not within `limit`.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read_pid(pidfile: &Path) -> i32 {
    let text = std::fs::read_to_string(pidfile).expect("the escaped process wrote its pid");
    text.trim().parse().expect("a pid")
}

/// A scratch directory for pid files.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("prober-contain-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A cgroup v2 directory for the runs' cgroups: a child of this process's own cgroup, removed
/// (once the runs' cgroups are gone) on drop.
struct TestCgroup(PathBuf);

impl TestCgroup {
    fn new(name: &str) -> TestCgroup {
        need_root();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        // Fields: id parent major:minor root mount-point options... - fstype source options.
        let mount = mountinfo
            .lines()
            .find(|l| l.split(" - ").nth(1).is_some_and(|rest| rest.starts_with("cgroup2 ")))
            .and_then(|l| l.split_whitespace().nth(4))
            .expect("a cgroup v2 hierarchy is mounted: these tests need one and do not skip")
            .to_string();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let own = own.lines().find_map(|l| l.strip_prefix("0::")).expect("a cgroup v2 path");
        let dir = Path::new(&mount)
            .join(own.trim_start_matches('/'))
            .join(format!("prober-exec-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot make cgroup {}: {e}; no skipping", dir.display()));
        TestCgroup(dir)
    }

    /// The runs' cgroups still present in it.
    fn runs(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        let _ = eventually(Duration::from_secs(5), || self.runs().is_empty());
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Without a cgroup, the limit the documentation states: a process that left the group
/// survives the run (the group kill cannot reach it), while one that stayed is killed.
#[test]
fn without_a_cgroup_setsid_escapes_and_the_group_does_not() {
    let _g = lock();
    let scratch = Scratch::new("plain");
    let pidfile = scratch.0.join("pid");
    let script = escaping(r#"sleep 1000 & echo $!"#);
    let timeout = Duration::from_secs(10);
    let o = run_with(&spec(&script, &pidfile, None), timeout);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let in_group: i32 = o.output_lossy().trim().parse().expect("the background pid");
    let escaped = read_pid(&pidfile);
    assert!(eventually(timeout, || !alive(in_group)), "the group's background sleep is killed");
    assert!(alive(escaped), "the setsid process outlives the run without a cgroup");
    assert_eq!(session_of(escaped), Some(escaped), "it leads a session of its own");
    // SAFETY: kill with a pid we just saw alive, in a session of its own: our test's leftover.
    unsafe { libc::kill(escaped, libc::SIGKILL) };
}

/// With a cgroup: the command exits, the escaped process is killed and the cgroup removed.
#[test]
fn with_a_cgroup_setsid_does_not_outlive_the_run() {
    let _g = lock();
    let cgroup = TestCgroup::new("exit");
    let scratch = Scratch::new("exit");
    let pidfile = scratch.0.join("pid");
    let timeout = Duration::from_secs(10);
    let o = run_with(&spec(&escaping("echo done"), &pidfile, Some(&cgroup.0)), timeout);
    assert_eq!((o.result, o.exit_code), (ProbeResult::Success, Some(0)), "{o:?}");
    assert_eq!(o.output_lossy(), "done\n", "the output is the command's, as without a cgroup");
    let escaped = read_pid(&pidfile);
    assert!(eventually(timeout, || !alive(escaped)), "setsid process {escaped} still alive");
    assert!(eventually(timeout, || cgroup.runs().is_empty()), "left: {:?}", cgroup.runs());
    assert_eq!(reaper::pending(), 0);
}

/// With a cgroup: the exit code, the descriptors and the timeout are as without one.
#[test]
fn with_a_cgroup_exit_codes_and_timeouts_are_unchanged() {
    let _g = lock();
    let cgroup = TestCgroup::new("timeout");
    let scratch = Scratch::new("timeout");
    let pidfile = scratch.0.join("pid");
    let o = run_with(&spec("exit 3", &pidfile, Some(&cgroup.0)), Duration::from_secs(10));
    assert_eq!(
        (o.result, o.reason, o.exit_code),
        (ProbeResult::Failure, Reason::ExitCode, Some(3))
    );
    // Only descriptors 0, 1 and 2 reach the command (3 is ls's own directory): the cgroup's
    // control files do not.
    let ls = spec("exec ls /proc/self/fd", &pidfile, Some(&cgroup.0));
    let o = run_with(&ls, Duration::from_secs(10));
    assert_eq!(o.output_lossy(), "0\n1\n2\n3\n", "{o:?}");

    let timeout = Duration::from_millis(500);
    let o = run_with(&spec(&escaping("exec sleep 1000"), &pidfile, Some(&cgroup.0)), timeout);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    let escaped = read_pid(&pidfile);
    let bound = timeout * 20;
    assert!(eventually(bound, || !alive(escaped)), "setsid process {escaped} still alive");
    assert!(eventually(bound, || cgroup.runs().is_empty()), "left: {:?}", cgroup.runs());
}

/// With a cgroup: a run dropped (or cancelled: the same path) while the command runs kills what
/// left the group too.
#[test]
fn with_a_cgroup_a_dropped_run_kills_what_left_the_group() {
    let _g = lock();
    let cgroup = TestCgroup::new("drop");
    let scratch = Scratch::new("drop");
    let pidfile = scratch.0.join("pid");
    let s = spec(&escaping("exec sleep 1000"), &pidfile, Some(&cgroup.0));
    let timeout = Duration::from_secs(30);
    let poll = Poll::new().unwrap();
    let mailbox = Mailbox::new(Arc::new(Waker::new(poll.registry(), Token(usize::MAX)).unwrap()));
    let mut probe = ExecProbe::new(&s, timeout, DEFAULT_OUTPUT_LIMIT);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    assert!(matches!(probe.start(&mut cx), Step::Pending));
    let comm = |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let started = eventually(Duration::from_secs(10), || {
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        text.trim().parse::<i32>().is_ok_and(|pid| comm(pid) == "sleep\n")
    });
    assert!(started, "the escaped process runs sleep");
    let escaped = read_pid(&pidfile);
    drop(probe);
    assert!(eventually(timeout, || !alive(escaped)), "setsid process {escaped} still alive");
    assert!(eventually(timeout, || cgroup.runs().is_empty()), "left: {:?}", cgroup.runs());
}

/// A directory that is not a cgroup makes the run Unknown before anything runs.
#[test]
fn a_directory_that_is_not_a_cgroup_is_unknown_and_runs_nothing() {
    let _g = lock();
    let scratch = Scratch::new("notcg");
    let marker = scratch.0.join("ran");
    let s = spec(r#"touch "$PIDFILE""#, &marker, Some(&scratch.0));
    let o = run_with(&s, Duration::from_secs(10));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert!(o.message.starts_with("could not create a cgroup for the command in "), "{o:?}");
    assert!(!marker.exists(), "the command must not run uncontained");
    assert_eq!(std::fs::read_dir(&scratch.0).unwrap().count(), 0, "the mkdir is undone");
}

/// Live processes whose command line is `sleep MARKER`.
fn sleeping(marker: &str) -> Vec<i32> {
    let want = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                && alive(pid)
        })
        .collect()
}

/// Inside another process's namespaces the cgroup contains the command all the same (its
/// pids there are not ours, so the escaped process is found by its command line).
#[test]
fn with_a_cgroup_setsid_inside_namespaces_does_not_outlive_the_run() {
    let _g = lock();
    let cgroup = TestCgroup::new("ns");
    let target = Namespaced::start(&Options { hostname: "contained".to_string(), user: false });
    let scratch = Scratch::new("ns");
    let pidfile = scratch.0.join("pid");
    let marker = "987650";
    let script = escaping("echo done").replace("sleep 1000", &format!("sleep {marker}"));
    let mut s = spec(&script, &pidfile, Some(&cgroup.0));
    s.namespaces_of = Some(target.pid);
    let timeout = Duration::from_secs(10);
    let o = run_with(&s, timeout);
    assert_eq!((o.result, o.output_lossy().as_ref()), (ProbeResult::Success, "done\n"), "{o:?}");
    assert!(pidfile.exists(), "the escaped process started");
    assert!(eventually(timeout, || sleeping(marker).is_empty()), "left: {:?}", sleeping(marker));
    assert!(eventually(timeout, || cgroup.runs().is_empty()), "left: {:?}", cgroup.runs());
}
