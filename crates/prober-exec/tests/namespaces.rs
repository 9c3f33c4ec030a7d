//! Exec probes inside another process's namespaces (issue 29, section 2), against real
//! namespaces made by `unshare`.
//!
//! These tests need root (CI runs as root) and `unshare` (util-linux): without them they fail,
//! saying so, rather than skip.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use prober_core::{DEFAULT_OUTPUT_LIMIT, ExecSpec, Outcome, ProbeResult, Reason};
use prober_exec::ExecProbe;
use prober_io::{reaper, run_to_completion};
use prober_testkit::unshare::{Namespaced, Options, need_root};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn target(hostname: &str, user: bool) -> Namespaced {
    Namespaced::start(&Options { hostname: hostname.to_string(), user })
}

fn spec_in(pid: u32, argv: &[&str]) -> ExecSpec {
    ExecSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: None,
        namespaces_of: Some(pid),
        cgroup: None,
    }
}

fn run_with(s: &ExecSpec, timeout: Duration) -> Outcome {
    let mut probe = ExecProbe::new(s, timeout, DEFAULT_OUTPUT_LIMIT);
    run_to_completion(&mut probe)
}

fn run(s: &ExecSpec) -> Outcome {
    run_with(s, Duration::from_secs(10))
}

fn text(o: &Outcome) -> String {
    o.output_lossy().into_owned()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

#[test]
fn the_command_runs_in_the_targets_namespaces() {
    let _g = lock();
    let t = target("probe-inside", false);
    assert_ne!(hostname(), "probe-inside");
    // UTS: the target's hostname.
    let o = run(&spec_in(t.pid, &["hostname"]));
    assert_eq!((o.result, text(&o).as_str()), (ProbeResult::Success, "probe-inside\n"), "{o:?}");
    assert_eq!(o.exit_code, Some(0));
    // Mount: a file that only its mount namespace has.
    let marker = t.marker();
    assert!(!marker.exists(), "the marker must not be visible on the host");
    let o = run(&spec_in(t.pid, &["cat", marker.to_str().unwrap()]));
    assert_eq!((o.result, text(&o).as_str()), (ProbeResult::Success, "only-inside\n"), "{o:?}");
    // PID: its /proc shows its init (the sleep) as PID 1, and the command a small PID.
    let o = run(&spec_in(t.pid, &["sh", "-c", "cat /proc/1/comm; readlink /proc/self"]));
    let out = text(&o);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("sleep"), "{o:?}");
    let own: u32 = lines.next().unwrap().parse().unwrap();
    assert!(own < 100, "the command's PID in the target's PID namespace: {own}");
    // Network: only a loopback, none of the host's interfaces.
    let o = run(&spec_in(t.pid, &["cat", "/proc/net/dev"]));
    let interfaces: Vec<String> =
        text(&o).lines().filter_map(|l| Some(l.split_once(':')?.0.trim().to_string())).collect();
    assert_eq!(interfaces, ["lo"], "{o:?}");
    // Exit codes, and only descriptors 0, 1 and 2 (3 is ls's own directory).
    let o = run(&spec_in(t.pid, &["sh", "-c", "exit 3"]));
    assert_eq!(
        (o.result, o.reason, o.exit_code),
        (ProbeResult::Failure, Reason::ExitCode, Some(3))
    );
    assert_eq!(o.message, "command terminated with exit code 3");
    let o = run(&spec_in(t.pid, &["ls", "/proc/self/fd"]));
    assert_eq!(text(&o), "0\n1\n2\n3\n", "{o:?}");
    // The spec's working directory is inside the target's root.
    let mut s = spec_in(t.pid, &["cat", "marker"]);
    s.cwd = Some(t.dir.clone());
    assert_eq!(text(&run(&s)), "only-inside\n");
    // A program the target's file system does not have.
    let o = run(&spec_in(t.pid, &["no-such-program-xyz"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "could not start \"no-such-program-xyz\" in the namespaces of process {}: no such \
             file or directory",
            t.pid
        )
    );
    assert_eq!(reaper::pending(), 0);
}

#[test]
fn a_timeout_kills_the_whole_group_inside() {
    let _g = lock();
    let t = target("probe-timeout", false);
    let marker = "987651";
    let timeout = Duration::from_millis(300);
    let script = format!("sleep {marker} & echo started; exec sleep {marker}");
    let o = run_with(&spec_in(t.pid, &["sh", "-c", &script]), timeout);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_eq!(o.message, format!("command timed out: \"sh -c {script}\" timed out after 300ms"));
    assert_eq!(text(&o), "started\n");
    // Both sleeps were killed: soon no live process runs them (a killed orphan may stay a
    // zombie of the target's init, which does not reap; a zombie's cmdline is empty). SIGKILL
    // is delivered at once but a process takes a moment to die, and the orphan is not ours to
    // wait for: poll, bounded by a multiple of the timeout.
    let alive = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(marker))
            .collect()
    };
    let until = std::time::Instant::now() + 20 * timeout;
    while !alive().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(alive().is_empty(), "left running: {:?}", alive());
}

#[test]
fn a_user_namespace_is_entered_where_it_differs() {
    let _g = lock();
    let t = target("probe-userns", true);
    let o = run(&spec_in(t.pid, &["sh", "-c", "hostname; cat /proc/self/uid_map; id -u"]));
    let out = text(&o);
    let words: Vec<&str> = out.split_whitespace().collect();
    // The target's map (0 -> 0, one id) rather than the host's whole range; root inside.
    assert_eq!(words, ["probe-userns", "0", "0", "1", "0"], "{o:?}");
}

#[test]
fn a_process_that_is_gone_costs_one_run() {
    let _g = lock();
    need_root();
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let o = run(&spec_in(pid, &["true"]));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert_eq!(
        o.message,
        format!("could not enter the namespaces of process {pid}: no such process")
    );
}

/// Capabilities are per thread on Linux: this drops CAP_SYS_ADMIN from the calling thread's
/// effective set only (the children it forks inherit that).
fn drop_sys_admin_on_this_thread() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut header = Header { version: 0x2008_0522, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: capget/capset with a version-3 header and two data structs, as the kernel wants.
    unsafe {
        assert_eq!(libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()), 0);
        // CAP_SYS_ADMIN is capability 21 (linux/capability.h).
        data[0].effective &= !(1 << 21);
        assert_eq!(libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()), 0);
    }
}

#[test]
fn no_permission_is_named_and_costs_one_run() {
    let _g = lock();
    let t = target("probe-eperm", false);
    let pid = t.pid;
    let o = std::thread::spawn(move || {
        drop_sys_admin_on_this_thread();
        run(&spec_in(pid, &["true"]))
    })
    .join()
    .unwrap();
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
    assert!(
        o.message.starts_with(&format!("could not enter the namespaces of process {pid}: setns ")),
        "{o:?}"
    );
    assert!(
        o.message.ends_with(": operation not permitted (entering namespaces needs CAP_SYS_ADMIN)"),
        "{o:?}"
    );
    // The same probe with the rights works: nothing was left behind.
    assert_eq!(run(&spec_in(pid, &["hostname"])).output, b"probe-eperm\n");
}

/// The command's environment inside the target's namespaces is the host's with the spec's
/// added, the spec winning: the forked children point into the host's `environ` instead of
/// copying it, and the spec's variables come after it.
#[test]
fn the_environment_is_the_hosts_plus_the_specs_inside_too() {
    let _g = lock();
    let t = target("probe-env", false);
    // A host variable the spec does not set: the test runner's HOME.
    let home = std::env::var("HOME").expect("the test runner has HOME");
    let mut s =
        spec_in(t.pid, &["sh", "-c", "printf '%s|%s|%s' \"$HOME\" \"$PROBE_ONLY\" \"$USER_X\""]);
    s.env = vec![
        ("PROBE_ONLY".into(), "from-spec".into()),
        ("USER_X".into(), "first".into()),
        ("USER_X".into(), "last".into()),
    ];
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(text(&o), format!("{home}|from-spec|last"), "{o:?}");
    // The spec wins over the host for the same name.
    s.env = vec![("HOME".into(), "/spec-home".into())];
    let o = run(&s);
    assert_eq!(text(&o), "/spec-home||", "{o:?}");
}
