//! Exec probe with real commands and real processes, driven by `run_to_completion`.
//!
//! Every test holds one process-wide lock: several of them count this process's descriptors
//! and children, which other tests running in parallel would disturb.
//!
//! Scripts are `$(VAR)`-expanded as in the kubelet, so the shell's `$$` is written `$$$$`.
//!
//! Note on "gone": the container's PID 1 may not reap orphans, so a killed grandchild can stay
//! a zombie of PID 1. A zombie is dead, so "gone" means: no such pid, a zombie, or a pid now
//! used by another program.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};
use prober_core::{DEFAULT_OUTPUT_LIMIT, ExecSpec, Outcome, ProbeResult, Reason};
use prober_exec::ExecProbe;
use prober_io::{Ctx, Machine, Mailbox, Ready, Step, reaper, run_to_completion};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

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

fn with_env(mut s: ExecSpec, pairs: &[(&str, &str)]) -> ExecSpec {
    s.env = pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    s
}

/// Runs `s` to completion; also returns the wall time it took.
fn run_with(s: &ExecSpec, timeout: Duration, limit: usize) -> (Outcome, Duration) {
    let mut probe = ExecProbe::new(s, timeout, limit);
    let t = Instant::now();
    let o = run_to_completion(&mut probe);
    (o, t.elapsed())
}

fn run(s: &ExecSpec) -> Outcome {
    run_with(s, Duration::from_secs(10), DEFAULT_OUTPUT_LIMIT).0
}

fn text(o: &Outcome) -> String {
    o.output_lossy().into_owned()
}

fn pids_in(o: &Outcome) -> Vec<i32> {
    text(o).split_whitespace().map(|w| w.parse().expect("a pid")).collect()
}

fn our_pid() -> i32 {
    std::process::id() as i32
}

/// `(state, ppid, comm)` of `pid`, or None when there is no such process.
fn stat(pid: i32) -> Option<(char, i32, String)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let mut rest = s[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid, comm))
}

/// True while `pid` is a live (non-zombie) process running `comm`.
fn running(pid: i32, comm: &str) -> bool {
    matches!(stat(pid), Some((state, _, c)) if state != 'Z' && c == comm)
}

/// True while `pid` is a live (non-zombie) process, whatever it runs (a background job may not
/// have reached `exec` yet when its pid is printed). Pids are allocated sequentially, so one is
/// not reused within the few seconds a test waits.
fn alive(pid: i32) -> bool {
    matches!(stat(pid), Some((state, _, _)) if state != 'Z')
}

fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Children of this process: `(pid, state, comm)`.
fn children() -> Vec<(i32, char, String)> {
    let me = our_pid();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Some((state, ppid, comm)) = stat(pid) {
            if ppid == me {
                out.push((pid, state, comm));
            }
        }
    }
    out
}

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---- The kubelet's cases: `exec_test.go` (<https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/exec/exec_test.go>) and the exec
// part of `prober_test.go` (<https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/prober/prober_test.go>), numbered E1... here ----

/// E1/E2: output, exit 0.
#[test]
fn e1_e2_success_with_output() {
    let _g = lock();
    let o = run(&sh("printf OK"));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.reason, Reason::None);
    assert_eq!(o.message, "");
    assert_eq!(o.output, b"OK");
    assert_eq!((o.output_total, o.truncated), (2, false));
    assert_eq!(o.exit_code, Some(0));
    let first = o.timings.first_byte.expect("first byte timing");
    assert!(first <= o.timings.total);

    let o = run(&spec(&["true"]));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(o.output.is_empty());
    assert_eq!(o.timings.first_byte, None, "no output, no first byte");
}

/// E3: 11264 bytes of output, 10240 kept.
#[test]
fn e3_output_is_truncated_to_the_limit() {
    let _g = lock();
    let script = "i=0; while [ $i -lt 1408 ]; do printf logs-123; i=$((i+1)); done";
    let o = run(&sh(script));
    let full = "logs-123".repeat(1408);
    assert_eq!(full.len(), 11264);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(o.output.len(), 10240);
    assert_eq!(o.output, full.as_bytes()[..10240]);
    assert!(o.truncated);
    assert_eq!(o.output_total, 11264);

    // Another limit, exactly at the limit, and one byte over.
    let (o, _) = run_with(&sh("printf abcdefgh"), Duration::from_secs(10), 4);
    assert_eq!((o.output.as_slice(), o.output_total, o.truncated), (&b"abcd"[..], 8, true));
    let (o, _) = run_with(&sh("printf abcd"), Duration::from_secs(10), 4);
    assert_eq!((o.output.as_slice(), o.output_total, o.truncated), (&b"abcd"[..], 4, false));
    let (o, _) = run_with(&sh("printf abcde"), Duration::from_secs(10), 4);
    assert_eq!((o.output.as_slice(), o.output_total, o.truncated), (&b"abcd"[..], 5, true));
}

/// E4: the command cannot be started.
#[test]
fn e4_spawn_failures_are_unknown() {
    let _g = lock();
    let fds = fd_count();
    let o = run(&spec(&["/no/such/binary", "arg"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(o.message, r#"could not start "/no/such/binary": no such file or directory"#);
    assert!(o.output.is_empty());
    assert_eq!(o.exit_code, None);

    // Looked up in PATH when there is no slash.
    let o = run(&spec(&["prober-exec-no-such-command"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(
        o.message,
        r#"could not start "prober-exec-no-such-command": no such file or directory"#
    );

    // Not executable (EACCES even for root: no execute bit at all).
    let o = run(&spec(&["/etc/passwd"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(o.message, r#"could not start "/etc/passwd": permission denied"#);

    // Bad working directory.
    let mut s = spec(&["pwd"]);
    s.cwd = Some(PathBuf::from("/no/such/dir"));
    let o = run(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(
        o.message,
        r#"could not start "pwd": chdir /no/such/dir: no such file or directory"#
    );

    // NUL in an argument (a spec that skipped validation).
    let o = run(&spec(&["echo", "a\0b"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");

    assert_eq!(fd_count(), fds, "a failed spawn leaked a descriptor");
    assert!(children().is_empty(), "a failed spawn left a child: {:?}", children());
}

/// E5: non-zero exit with output.
#[test]
fn e5_nonzero_exit_is_failure_with_output() {
    let _g = lock();
    let o = run(&sh("printf Fail; exit 1"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::ExitCode), "{o:?}");
    assert_eq!(o.output, b"Fail");
    assert_eq!(o.exit_code, Some(1));
    assert_eq!(o.message, "command terminated with exit code 1");

    let o = run(&spec(&["false"]));
    assert_eq!((o.result, o.exit_code), (ProbeResult::Failure, Some(1)));
    let o = run(&sh("exit 255"));
    assert_eq!(o.exit_code, Some(255));
    assert_eq!(o.message, "command terminated with exit code 255");
}

/// E6: timeout is a Failure with the output so far.
#[test]
fn e6_timeout_is_failure() {
    let _g = lock();
    let (o, took) = run_with(&sh("printf partial; exec sleep 5"), Duration::from_millis(200), 100);
    assert!(took < Duration::from_secs(5), "a 200ms probe took {took:?}");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(
        o.message.starts_with("command timed out: ")
            && o.message.ends_with(" timed out after 200ms"),
        "{}",
        o.message
    );
    assert_eq!(o.output, b"partial");
    assert_eq!(o.exit_code, None);
    assert!(children().is_empty(), "timed-out child not reaped: {:?}", children());
    assert_eq!(reaper::pending(), 0, "the child should be reaped by the probe, not the reaper");

    let (o, _) = run_with(&spec(&["sleep", "5"]), Duration::from_millis(1500), 100);
    assert_eq!(o.message, r#"command timed out: "sleep 5" timed out after 1.5s"#);
}

/// E9: `$(VAR)` expansion from the spec's env; unknown references are kept.
#[test]
fn e9_env_expansion() {
    let _g = lock();
    let env = [("A", "script")];
    // The kubelet test's exact command: the expanded string reaches the command...
    let probe = ExecProbe::new(
        &with_env(spec(&["/bin/sh", "-c", "echo some $(A) $(B)"]), &env),
        Duration::from_secs(1),
        100,
    );
    assert_eq!(probe.argv(), ["/bin/sh", "-c", "echo some script $(B)"]);
    drop(probe);
    // ...and is what runs. (Unquoted, the shell itself would then treat `$(B)` as a command
    // substitution, so the runnable form quotes it.)
    let o = run(&with_env(spec(&["/bin/sh", "-c", "echo 'some $(A) $(B)'"]), &env));
    assert_eq!(text(&o), "some script $(B)\n", "{o:?}");
    // Without a shell.
    let o = run(&with_env(spec(&["echo", "some $(A) $(B)", "$$(A)"]), &env));
    assert_eq!(text(&o), "some script $(B) $(A)\n");
}

/// The command's environment is the container's: each value expanded against the variables
/// before it (the kubelet's `makeEnvironmentVariables`), `$$` a literal `$`; the command line
/// keeps its expansion against the values as written (`ExpandContainerCommandOnlyStatic`).
#[test]
fn env_values_are_expanded_as_the_kubelet_does_for_the_container() {
    let _g = lock();
    let env = [("B", "x"), ("A", "$(B)y"), ("C", "$$(B)"), ("D", "$(LATER)"), ("LATER", "z")];
    let o = run(&with_env(
        spec(&["/bin/sh", "-c", r#"printf '%s|%s|%s|%s|%s' "$B" "$A" "$C" "$D" '$(A)'"#]),
        &env,
    ));
    assert_eq!(text(&o), "x|xy|$(B)|$(LATER)|$(B)y", "{o:?}");
}

/// E10 (improved): stdout and stderr share one pipe, interleaved as written.
#[test]
fn e10_output_is_interleaved() {
    let _g = lock();
    let o = run(&sh("echo 1; echo 2 >&2; echo 3"));
    assert_eq!(text(&o), "1\n2\n3\n");
    let o = run(&sh("echo out; echo err >&2; exit 4"));
    assert_eq!((text(&o).as_str(), o.exit_code), ("out\nerr\n", Some(4)));
}

// ---- Beyond the kubelet's cases ----

#[test]
fn killed_by_signal() {
    let _g = lock();
    let o = run(&sh("kill -9 $$$$"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Signal), "{o:?}");
    assert_eq!(o.message, "command terminated by signal 9 (SIGKILL)");
    assert_eq!(o.exit_code, None);
    let o = run(&sh("printf before; kill -TERM $$$$; sleep 5"));
    assert_eq!(o.message, "command terminated by signal 15 (SIGTERM)");
    assert_eq!(o.output, b"before");
}

#[test]
fn cwd_is_honoured() {
    let _g = lock();
    let mut s = spec(&["pwd"]);
    s.cwd = Some(PathBuf::from("/tmp"));
    let o = run(&s);
    assert_eq!(text(&o), "/tmp\n");
    s.cwd = Some(PathBuf::from("/"));
    assert_eq!(text(&run(&s)), "/\n");
}

#[test]
fn env_is_the_hosts_plus_the_specs() {
    let _g = lock();
    let o = run(&with_env(sh("echo $A"), &[("A", "hello")]));
    assert_eq!(text(&o), "hello\n");
    // The spec wins over the host (HOME), the host's variables are inherited (PATH), stdin is
    // /dev/null.
    let o =
        run(&with_env(sh(r#"printf '%s|%s|' "$HOME" "$PATH"; cat"#), &[("HOME", "/spec-home")]));
    let path = std::env::var("PATH").unwrap_or_default();
    assert_eq!(text(&o), format!("/spec-home|{path}|"));
    assert_eq!(o.result, ProbeResult::Success);
}

/// 1 GiB of output: drained while the command runs, counted, memory stays flat.
#[test]
fn gigabyte_of_output_keeps_memory_flat() {
    let _g = lock();
    const GIB: u64 = 1 << 30;
    let rss_before = status_kib("VmRSS:").expect("VmRSS");
    // Reset the peak (VmHWM) when the kernel allows it, so a buffer grown and freed is caught.
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (o, took) = run_with(
        &spec(&["head", "-c", "1073741824", "/dev/zero"]),
        Duration::from_secs(120),
        10240,
    );
    assert!(took < Duration::from_secs(120));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output_total, GIB);
    assert!(o.truncated);
    assert_eq!(o.output, vec![0u8; 10240]);
    let after = if peak_reset { status_kib("VmHWM:") } else { status_kib("VmRSS:") }.unwrap();
    let grew = after.saturating_sub(rss_before);
    assert!(grew < 50 * 1024, "memory grew by {grew} KiB (peak measured: {peak_reset})");
}

/// Data written before the command exits is all read, even when a leftover process holds the
/// pipe open and the output exceeds the pipe's buffer.
#[test]
fn all_output_before_exit_is_counted() {
    let _g = lock();
    let o = run(&sh("sleep 30 & head -c 300000 /dev/zero"));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output_total, 300000);
}

/// A background process keeping the pipe open does not hold the probe up, and is killed.
#[test]
fn grandchild_holding_the_pipe_does_not_hang_the_probe() {
    let _g = lock();
    let (o, took) = run_with(&sh("sleep 30 & echo $!"), Duration::from_secs(60), 100);
    assert!(took < Duration::from_secs(10), "probe waited for the pipe: {took:?}");
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let pids = pids_in(&o);
    assert_eq!(pids.len(), 1, "{:?}", text(&o));
    wait_until("the background sleep is gone", Duration::from_secs(5), || !alive(pids[0]));
    assert!(children().is_empty(), "{:?}", children());
}

/// The timeout kills the whole process group, not just the leader.
#[test]
fn timeout_kills_the_process_group() {
    let _g = lock();
    let script = "sleep 30 & echo $!; sleep 31 & echo $!; echo $$$$; wait";
    let (o, took) = run_with(&sh(script), Duration::from_secs(1), 100);
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    let pids = pids_in(&o);
    assert_eq!(pids.len(), 3, "{:?}", text(&o));
    wait_until("both sleeps are gone", Duration::from_secs(5), || {
        !alive(pids[0]) && !alive(pids[1])
    });
    assert!(stat(pids[2]).is_none_or(|(_, ppid, _)| ppid != our_pid()), "shell not reaped");
    assert!(children().is_empty(), "{:?}", children());
}

/// 200 runs of every kind: no descriptor leaked, no zombie, no child left.
#[test]
fn no_leaks_after_200_runs() {
    let _g = lock();
    // Warm up lazily created process-wide things (reaper, resolver pool).
    let _ = run(&spec(&["true"]));
    let _ = reaper::pending();
    let fds = fd_count();
    let mut counts = [0usize; 5];
    for i in 0..200 {
        let (o, took) = match i % 5 {
            0 => run_with(&sh("printf ok"), Duration::from_secs(10), 100),
            1 => run_with(&sh("echo bad >&2; exit 2"), Duration::from_secs(10), 100),
            2 => run_with(&sh("printf x; exec sleep 5"), Duration::from_millis(20), 100),
            3 => run_with(&spec(&["/no/such/binary"]), Duration::from_secs(10), 100),
            _ => run_with(&sh("head -c 20000 /dev/zero; exit 0"), Duration::from_secs(10), 100),
        };
        assert!(took < Duration::from_secs(10));
        let expected = match i % 5 {
            0 | 4 => (ProbeResult::Success, Reason::None),
            1 => (ProbeResult::Failure, Reason::ExitCode),
            2 => (ProbeResult::Failure, Reason::Timeout),
            _ => (ProbeResult::Unknown, Reason::Spawn),
        };
        assert_eq!((o.result, o.reason), expected, "run {i}: {o:?}");
        counts[i % 5] += 1;
    }
    assert_eq!(counts, [40; 5]);
    wait_until("the reaper has nothing pending", Duration::from_secs(5), || reaper::pending() == 0);
    assert_eq!(fd_count(), fds, "descriptors leaked");
    let kids = children();
    assert!(kids.iter().all(|(_, state, _)| *state != 'Z'), "zombies: {kids:?}");
    assert!(kids.is_empty(), "children left: {kids:?}");
}

// ---- cancel and drop ----

/// Starts `script` (which must write the shell's pid and a background pid to `$PIDFILE`) on a private poll, waits until the
/// pids are written, and returns the machine and the pids. The poll is kept alive in the tuple.
struct Manual {
    poll: Poll,
    mailbox: Mailbox,
    probe: ExecProbe,
    file: PathBuf,
}

impl Manual {
    fn start(name: &str, script: &str) -> (Manual, i32, i32) {
        let file = std::env::temp_dir().join(format!("prober-exec-{}-{name}", our_pid()));
        let _ = std::fs::remove_file(&file);
        let poll = Poll::new().unwrap();
        let waker = Arc::new(Waker::new(poll.registry(), Token(usize::MAX)).unwrap());
        let mailbox = Mailbox::new(waker);
        let s = with_env(sh(script), &[("PIDFILE", file.to_str().unwrap())]);
        let mut probe = ExecProbe::new(&s, Duration::from_secs(30), 100);
        let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
        assert!(matches!(probe.start(&mut cx), Step::Pending));
        let mut m = Manual { poll, mailbox, probe, file };
        let mut pids = Vec::new();
        wait_until("the command wrote its pids", Duration::from_secs(5), || {
            m.pump();
            pids = std::fs::read_to_string(&m.file)
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            pids.len() == 2
        });
        wait_until(
            "the shell waits and the background job runs sleep",
            Duration::from_secs(5),
            || running(pids[0], "sh") && running(pids[1], "sleep"),
        );
        (m, pids[0], pids[1])
    }

    /// One nonblocking round of events into the machine; it must not finish.
    fn pump(&mut self) {
        let mut events = Events::with_capacity(8);
        self.poll.poll(&mut events, Some(Duration::ZERO)).unwrap();
        let mut cx = Ctx::new(self.poll.registry(), Instant::now(), 0, &self.mailbox, 0);
        for ev in events.iter() {
            let step = self.probe.ready(&mut cx, ev.token().0, Ready::from_event(ev));
            assert!(matches!(step, Step::Pending), "finished early: {step:?}");
        }
    }

    fn cancel(&mut self) {
        let mut cx = Ctx::new(self.poll.registry(), Instant::now(), 0, &self.mailbox, 0);
        self.probe.cancel(&mut cx);
    }
}

impl Drop for Manual {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn assert_group_gone(sh_pid: i32, bg_pid: i32) {
    wait_until("the background sleep is gone", Duration::from_secs(5), || !alive(bg_pid));
    wait_until("the shell is reaped", Duration::from_secs(5), || {
        stat(sh_pid).is_none_or(|(_, ppid, _)| ppid != our_pid())
    });
    wait_until("the reaper has nothing pending", Duration::from_secs(5), || reaper::pending() == 0);
    assert!(children().is_empty(), "{:?}", children());
}

#[test]
fn cancel_kills_and_reaps() {
    let _g = lock();
    let _ = reaper::pending();
    let fds = fd_count();
    {
        let (mut m, sh_pid, bg_pid) =
            Manual::start("cancel", r#"sleep 30 & echo $$$$ $! > "$PIDFILE"; wait"#);
        m.cancel();
        assert_eq!(m.probe.wake_at(), None, "a cancelled machine has no timer");
        assert_group_gone(sh_pid, bg_pid);
    }
    assert_eq!(fd_count(), fds, "descriptors leaked");
}

#[test]
fn drop_mid_run_kills_and_reaps() {
    let _g = lock();
    let _ = reaper::pending();
    let fds = fd_count();
    {
        let (m, sh_pid, bg_pid) =
            Manual::start("drop", r#"sleep 30 & echo $$$$ $! > "$PIDFILE"; wait"#);
        drop(m);
        assert_group_gone(sh_pid, bg_pid);
    }
    assert_eq!(fd_count(), fds, "descriptors leaked");
}

/// The exit is seen before the pipe's readiness: the machine still reads what the command
/// wrote, and finishes at once although a background process holds the pipe open.
#[test]
fn exit_event_first_still_reads_the_output() {
    let _g = lock();
    let poll = Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), Token(usize::MAX)).unwrap());
    let mailbox = Mailbox::new(waker);
    let mut probe = ExecProbe::new(&sh("sleep 30 & printf done"), Duration::from_secs(30), 100);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    assert!(matches!(probe.start(&mut cx), Step::Pending));
    wait_until("the command has exited", Duration::from_secs(5), || {
        children().iter().any(|(_, state, _)| *state == 'Z')
    });
    // Deliver only the pidfd's readiness (token 1), without polling the pipe.
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    let ready = Ready { readable: true, ..Ready::default() };
    let o = match probe.ready(&mut cx, 1, ready) {
        Step::Done(o) => o,
        other => panic!("the exit did not finish the run: {other:?}"),
    };
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output, b"done");
    assert!(o.timings.first_byte.is_some());
    assert!(children().is_empty(), "{:?}", children());
}
