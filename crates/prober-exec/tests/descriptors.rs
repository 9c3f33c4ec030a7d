//! Only descriptors 0, 1 and 2 reach a command: not the host's descriptors opened without
//! close-on-exec (a C host's pipes, files and sockets), through the `posix_spawn` path and
//! through the `fork` fallback alike.
//!
//! The command lists its own descriptors with `ls -ln /proc/self/fd/` (ls opens one of its own
//! for that: the directory it reads). The test compares what each descriptor points to with
//! what the leaked ones point to (`pipe:[inode]`, `socket:[inode]`, the file's path), so that
//! a leaked descriptor is recognised whatever its number in the child.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use prober_core::{ExecSpec, ProbeResult, Reason};
use prober_exec::ExecProbe;
use prober_io::run_to_completion;

/// The descriptors are process-wide: one test at a time.
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn check(rc: libc::c_int, what: &str) -> libc::c_int {
    assert!(rc >= 0, "{what}: {}", std::io::Error::last_os_error());
    rc
}

/// Descriptors opened the way a careless C host opens them: without close-on-exec.
struct Leaky {
    fds: Vec<OwnedFd>,
}

impl Leaky {
    fn open() -> Leaky {
        let mut raw: Vec<RawFd> = Vec::new();
        let mut pipe = [0 as RawFd; 2];
        // SAFETY: pipe() writes two descriptors into the two-element array it is given.
        check(unsafe { libc::pipe(pipe.as_mut_ptr()) }, "pipe");
        raw.extend(pipe);
        let path = CString::new(env!("CARGO_MANIFEST_DIR").to_string() + "/Cargo.toml").unwrap();
        // SAFETY: open() reads a NUL-terminated path; plain O_RDONLY, no O_CLOEXEC on purpose.
        raw.push(check(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) }, "open"));
        // SAFETY: socket() takes integers only; no SOCK_CLOEXEC on purpose.
        let sock = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) }, "socket");
        raw.push(sock);
        // SAFETY: all-zero is a valid sockaddr_in; fields are set below.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: `addr` is a valid sockaddr_in of `len` bytes, only read by bind.
        check(unsafe { libc::bind(sock, (&raw const addr).cast(), len) }, "bind");
        // SAFETY: listen takes integers only.
        check(unsafe { libc::listen(sock, 8) }, "listen");
        for &fd in &raw {
            // SAFETY: F_GETFD on a descriptor we just opened.
            let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFD) }, "fcntl");
            assert_eq!(flags & libc::FD_CLOEXEC, 0, "fd {fd} must be inheritable for this test");
        }
        // SAFETY: each descriptor was just returned by the kernel and is owned by nobody else.
        let fds = raw.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }).collect();
        Leaky { fds }
    }

    /// What each descriptor points to, as `/proc/self/fd` shows it.
    fn targets(&self) -> Vec<String> {
        use std::os::fd::AsRawFd;
        self.fds
            .iter()
            .map(|fd| {
                let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
                std::fs::read_link(link).unwrap().to_string_lossy().into_owned()
            })
            .collect()
    }
}

/// `(fd, target)` for each line of `ls -ln /proc/self/fd/`.
fn parse_listing(out: &str) -> Vec<(u32, String)> {
    out.lines()
        .filter_map(|line| {
            let (left, target) = line.split_once(" -> ")?;
            let fd = left.split_whitespace().last()?.parse().ok()?;
            Some((fd, target.to_string()))
        })
        .collect()
}

fn list_fds(probe: ExecProbe) -> Vec<(u32, String)> {
    let mut probe = probe;
    let o = run_to_completion(&mut probe);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    let listing = parse_listing(&o.output_lossy());
    assert!(listing.len() >= 3, "no listing: {:?}", o.output_lossy());
    listing
}

fn ls_spec() -> ExecSpec {
    ExecSpec {
        argv: vec!["ls".into(), "-ln".into(), "/proc/self/fd/".into()],
        env: Vec::new(),
        cwd: None,
        namespaces_of: None,
        cgroup: None,
    }
}

fn assert_only_stdio(listing: &[(u32, String)], leaked: &[String]) {
    let numbers: Vec<u32> = listing.iter().map(|(fd, _)| *fd).collect();
    for want in 0..3 {
        assert!(numbers.contains(&want), "fd {want} missing: {listing:?}");
    }
    for (fd, target) in listing {
        assert!(
            !leaked.contains(target),
            "leaked descriptor reached the command as fd {fd} ({target}): {listing:?}"
        );
        if *fd >= 3 {
            // Only ls's own directory descriptor may be there.
            let own_dir = target.starts_with("/proc/") && target.ends_with("/fd");
            assert!(own_dir, "unexpected fd {fd} -> {target} in the command: {listing:?}");
        }
    }
}

#[test]
fn host_descriptors_without_cloexec_do_not_reach_the_command() {
    let _g = lock();
    let leaky = Leaky::open();
    let leaked = leaky.targets();
    let listing = list_fds(ExecProbe::new(&ls_spec(), Duration::from_secs(30), 64 * 1024));
    assert_only_stdio(&listing, &leaked);
    // stdin is /dev/null, stdout and stderr the one output pipe.
    let target = |n: u32| listing.iter().find(|(fd, _)| *fd == n).map(|(_, t)| t.clone());
    assert_eq!(target(0).as_deref(), Some("/dev/null"));
    assert!(target(1).is_some_and(|t| t.starts_with("pipe:")), "{listing:?}");
    assert_eq!(target(1), target(2));
}

#[test]
fn the_fork_fallback_keeps_host_descriptors_out_too() {
    let _g = lock();
    let leaky = Leaky::open();
    let leaked = leaky.targets();
    let probe = ExecProbe::new(&ls_spec(), Duration::from_secs(30), 64 * 1024).fork_only_for_test();
    assert_only_stdio(&list_fds(probe), &leaked);
}

#[test]
fn a_missing_program_and_a_bad_directory_are_still_spawn_errors() {
    let _g = lock();
    let _leaky = Leaky::open();
    for fork_only in [false, true] {
        let spec = ExecSpec {
            argv: vec!["sh".into(), "-c".into(), "exit 0".into()],
            env: Vec::new(),
            cwd: Some("/nonexistent-dir".into()),
            namespaces_of: None,
            cgroup: None,
        };
        let mut probe = ExecProbe::new(&spec, Duration::from_secs(30), 1024);
        if fork_only {
            probe = probe.fork_only_for_test();
        }
        let o = run_to_completion(&mut probe);
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn), "{o:?}");
        assert_eq!(
            o.message,
            "could not start \"sh\": chdir /nonexistent-dir: no such file or directory"
        );
    }
}
