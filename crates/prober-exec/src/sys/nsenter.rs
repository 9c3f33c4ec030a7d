//! Spawning inside another process's namespaces, as `nsenter --target PID --all` does, without
//! a wrapper program.
//!
//! Everything that can fail for an ordinary reason is done in this process first: the
//! target's `/proc/PID` directory, its namespace files, root and working directory are opened
//! close-on-exec, the program's candidate paths and the environment are built. Then:
//!
//! 1. `fork` (the first child, C1). C1 makes raw system calls only (it is the child of a
//!    possibly multithreaded host): it joins the run's cgroup if there is one
//!    ([`ExecSpec::cgroup`](prober_core::ExecSpec::cgroup)), then `setns` on each namespace in `nsenter`'s order and two
//!    passes (the user namespace last when we are privileged, first when entering it is what
//!    grants the rights), `fchdir` + `chroot(".")` into the target's root, `fchdir` into its
//!    working directory (or the spec's `cwd`, inside that root), and `setgroups`/`setresgid`/
//!    `setresuid` to 0 when it entered a user namespace, as `nsenter` does.
//! 2. `setns(CLONE_NEWPID)` only applies to children, so C1 clones once more, with
//!    `CLONE_PARENT` (as runc's `nsexec` does): the second child, C2, is born in the target's
//!    PID namespace but is *our* child, not C1's. C1 writes C2's pid (as we see it) to a report
//!    pipe and exits; this process reaps C1 at once. From then on C2 is an ordinary child of
//!    ours: `waitid`, `pidfd_open`, its exit code and the group kill work on it exactly as on a
//!    child spawned on the host.
//! 3. C2 makes itself a process group leader, puts the output pipe on 1 and 2 and `/dev/null`
//!    (the host's, opened before the fork) on 0, marks every other descriptor close-on-exec,
//!    resets its signal mask and `SIGPIPE`, and tries `execve` on each candidate path, as
//!    `execvp` does. A failed exec is written to the report pipe (close-on-exec, so a
//!    successful one closes it) and C2 exits with 127.
//!
//! This process reads the report pipe to its end (it ends when C1 has exited and C2 has
//! exec'd or died), so a spawn blocks for as long as `posix_spawn`'s `vfork` does: until the
//! exec.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use prober_io::{os_result, retry_interrupted};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use prober_core::os_error_text;

use super::{SpawnRequest, cloexec_from, cstring, open_files_limit, spawn_envp, spec_entries};

/// `CLONE_NEWTIME` (Linux 5.6); not every libc crate version names it.
const CLONE_NEWTIME: libc::c_int = 0x80;

/// The namespaces `nsenter --all` enters, in its order. The user namespace is handled apart.
const NAMESPACES: [(&CStr, libc::c_int, &str); 7] = [
    (c"ns/cgroup", libc::CLONE_NEWCGROUP, "cgroup"),
    (c"ns/ipc", libc::CLONE_NEWIPC, "ipc"),
    (c"ns/uts", libc::CLONE_NEWUTS, "uts"),
    (c"ns/net", libc::CLONE_NEWNET, "net"),
    (c"ns/pid", libc::CLONE_NEWPID, "pid"),
    (c"ns/mnt", libc::CLONE_NEWNS, "mnt"),
    (c"ns/time", CLONE_NEWTIME, "time"),
];

/// Where the child failed, as written to the report pipe.
const STAGE_PID: i32 = 0;
const STAGE_SETNS: i32 = 1; // + index into NAMESPACES, or USER_INDEX
const USER_INDEX: i32 = 7;
const STAGE_CHROOT: i32 = 20;
const STAGE_CWD: i32 = 21;
const STAGE_CREDS: i32 = 22;
const STAGE_CLONE: i32 = 23;
const STAGE_EXEC: i32 = 24;
const STAGE_SETUP: i32 = 25;
const STAGE_CGROUP: i32 = 26;

/// Why a spawn inside a target's namespaces failed.
#[derive(Debug)]
pub(crate) struct NsError {
    /// For the message: the whole sentence.
    pub(crate) message: String,
    /// The system's error, for the reason (a local resource, or not).
    pub(crate) error: io::Error,
}

impl NsError {
    fn enter(pid: u32, what: &str, error: io::Error) -> NsError {
        let mut message = format!(
            "could not enter the namespaces of process {pid}: {what}: {}",
            os_error_text(&error)
        );
        if error.raw_os_error() == Some(libc::EPERM) && what.starts_with("setns") {
            message.push_str(" (entering namespaces needs CAP_SYS_ADMIN)");
        }
        NsError { message, error }
    }
}

/// One namespace to enter: its descriptor and where it is in [`NAMESPACES`] (or user).
struct Ns {
    fd: OwnedFd,
    index: i32,
    nstype: libc::c_int,
}

/// Everything opened in this process before the fork.
struct Target {
    pid: u32,
    /// In `nsenter`'s order, the user namespace (if it differs from ours) excluded.
    namespaces: Vec<Ns>,
    user: Option<Ns>,
    root: OwnedFd,
    cwd: OwnedFd,
}

fn open_at(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: openat with a descriptor we own and a NUL-terminated name; the result is a new
    // descriptor we take ownership of, or -1.
    let fd = os_result(unsafe {
        libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_path(path: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: open with a NUL-terminated path; the result is a new descriptor or -1.
    let fd = os_result(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Device and inode of an open namespace file: the namespace's identity.
fn identity(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    let st = nix::sys::stat::fstat(fd)?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

impl Target {
    fn open(pid: u32) -> Result<Target, NsError> {
        let dir_name = format!("/proc/{pid}");
        let dir = open_path(
            &CString::new(dir_name.as_bytes()).expect("no NUL in a number"),
            libc::O_PATH | libc::O_DIRECTORY,
        )
        .map_err(|e| gone_or(pid, &dir_name, e))?;
        let own = open_path(c"/proc/self", libc::O_PATH | libc::O_DIRECTORY)
            .map_err(|e| NsError::enter(pid, "open /proc/self", e))?;
        let same_as_ours = |name: &CStr, theirs: &OwnedFd| -> bool {
            let Ok(ours) = open_at(&own, name, libc::O_RDONLY) else { return false };
            matches!((identity(&ours), identity(theirs)), (Ok(a), Ok(b)) if a == b)
        };
        let open_ns = |name: &CStr| {
            open_at(&dir, name, libc::O_RDONLY)
                .map_err(|e| gone_or(pid, &format!("{dir_name}/{}", name.to_string_lossy()), e))
        };
        let mut namespaces = Vec::new();
        for (i, (name, nstype, _)) in NAMESPACES.iter().enumerate() {
            let fd = match open_ns(name) {
                Ok(fd) => fd,
                // A kernel without time namespaces (before 5.6) has no ns/time.
                Err(e) if *nstype == CLONE_NEWTIME && e.error.kind() == io::ErrorKind::NotFound => {
                    continue;
                }
                Err(e) => return Err(e),
            };
            // Entering our own namespace changes nothing: skip the system call.
            if !same_as_ours(name, &fd) {
                namespaces.push(Ns { fd, index: i as i32, nstype: *nstype });
            }
        }
        let user_fd = open_ns(c"ns/user")?;
        // Entering our own user namespace is refused (EINVAL), and `nsenter` skips it too: it
        // would give back capabilities a caller had dropped.
        let user = (!same_as_ours(c"ns/user", &user_fd)).then_some(Ns {
            fd: user_fd,
            index: USER_INDEX,
            nstype: libc::CLONE_NEWUSER,
        });
        let root = open_at(&dir, c"root", libc::O_PATH | libc::O_DIRECTORY)
            .map_err(|e| gone_or(pid, &format!("{dir_name}/root"), e))?;
        let cwd = open_at(&dir, c"cwd", libc::O_PATH | libc::O_DIRECTORY)
            .map_err(|e| gone_or(pid, &format!("{dir_name}/cwd"), e))?;
        Ok(Target { pid, namespaces, user, root, cwd })
    }
}

/// A process that is gone says so in words; anything else names the file and the error.
fn gone_or(pid: u32, path: &str, error: io::Error) -> NsError {
    match error.raw_os_error() {
        // ENOENT: no such /proc/PID; ESRCH: it exited after we opened its directory.
        Some(libc::ENOENT | libc::ESRCH) => NsError {
            message: format!("could not enter the namespaces of process {pid}: no such process"),
            error,
        },
        _ => NsError::enter(pid, &format!("open {path}"), error),
    }
}

/// What the children need, prepared here: they may not allocate.
struct Prepared {
    /// Absolute or relative paths to try in order, as `execvp` would.
    candidates: Vec<CString>,
    argv: Vec<CString>,
    /// The spec's variables; the host's are pointed at in `environ` (the forked children see
    /// the same memory), not copied.
    spec_env: Vec<CString>,
    cwd: Option<CString>,
    /// The output pipe's write end and `/dev/null`, both at 3 or above so that the `dup2`s
    /// onto 0, 1 and 2 always make new descriptors (without close-on-exec).
    output: OwnedFd,
    null: OwnedFd,
    /// For the close-on-exec sweep without `close_range`.
    fd_bound: libc::c_int,
    /// `cgroup.procs` of the run's cgroup, which C1 joins before anything else.
    cgroup_procs: Option<RawFd>,
}

/// The paths `execvp` would try for `program` with this `PATH`, in order.
fn candidates(program: &str, path: &std::ffi::OsStr) -> io::Result<Vec<CString>> {
    if program.contains('/') {
        return Ok(vec![cstring(program.as_bytes())?]);
    }
    std::env::split_paths(path)
        .map(|dir| {
            let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
            cstring(dir.join(program).as_os_str().as_bytes())
        })
        .collect()
}

fn dup_high(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let raw = fcntl(fd, FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: F_DUPFD_CLOEXEC just returned this new descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Starts `req` inside the namespaces of process `pid`; returns its pid as we see it. The
/// command is a child of ours, a process group leader, in the target's PID namespace.
pub(crate) fn spawn_in(
    req: &SpawnRequest<'_>,
    output: &OwnedFd,
    pid: u32,
) -> Result<libc::pid_t, NsError> {
    let setup = |e: io::Error| NsError {
        message: format!("could not start {:?}: {}", req.argv[0], os_error_text(&e)),
        error: e,
    };
    let target = Target::open(pid)?;
    let path = match req.env.iter().rev().find(|(k, _)| k == "PATH") {
        Some((_, v)) => std::ffi::OsString::from(v),
        None => std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
    };
    let null = open_path(c"/dev/null", libc::O_RDONLY).map_err(setup)?;
    let prepared = Prepared {
        candidates: candidates(&req.argv[0], &path).map_err(setup)?,
        argv: req
            .argv
            .iter()
            .map(|a| cstring(a.as_bytes()))
            .collect::<io::Result<_>>()
            .map_err(setup)?,
        spec_env: spec_entries(req.env).map_err(setup)?,
        cwd: req.cwd.map(|d| cstring(d.as_os_str().as_bytes())).transpose().map_err(setup)?,
        output: dup_high(output).map_err(setup)?,
        null: dup_high(&null).map_err(setup)?,
        fd_bound: open_files_limit(),
        cgroup_procs: req.cgroup_procs,
    };
    drop(null);
    let (report_read, report_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| setup(io::Error::from(e)))?;
    let mut argv_ptrs: Vec<*const libc::c_char> =
        prepared.argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let envp_ptrs: Vec<*const libc::c_char> =
        spawn_envp(req.env, &prepared.spec_env).into_iter().map(<*mut _>::cast_const).collect();
    let plan = ChildPlan {
        target: &target,
        prepared: &prepared,
        argv: &argv_ptrs,
        envp: &envp_ptrs,
        report: report_write.as_raw_fd(),
    };

    // SAFETY: fork has no memory preconditions; the child only runs `plan.run`, which makes
    // async-signal-safe system calls on data prepared above and never returns.
    let c1 = os_result(unsafe { libc::fork() }).map_err(setup)?;
    if c1 == 0 {
        plan.run();
    }
    drop(report_write);
    let report = read_report(&report_read);
    // C1 exits right after its clone (or its failure): reap it now, by its pid only.
    reap(c1);
    let desc = |stage: i32| stage_name(stage, &target);
    match report {
        Report { child: Some(c2), failure: None } => Ok(c2),
        Report { child, failure: Some((stage, errno)) } => {
            if let Some(c2) = child {
                // C2 wrote why its exec failed and exits with 127.
                reap(c2);
            }
            let error = io::Error::from_raw_os_error(errno);
            Err(match stage {
                STAGE_EXEC => NsError {
                    message: format!(
                        "could not start {:?} in the namespaces of process {pid}: {}",
                        req.argv[0],
                        os_error_text(&error)
                    ),
                    error,
                },
                STAGE_CLONE if errno == libc::ENOMEM => NsError {
                    message: format!(
                        "could not enter the namespaces of process {pid}: its PID namespace has \
                         no init process left (clone: {})",
                        os_error_text(&error)
                    ),
                    error,
                },
                STAGE_SETUP => setup(error),
                _ => NsError::enter(pid, &desc(stage), error),
            })
        }
        Report { child: None, failure: None } => Err(NsError {
            message: format!(
                "could not enter the namespaces of process {pid}: the entering process ended \
                 without a word"
            ),
            error: io::Error::other("no report"),
        }),
    }
}

fn stage_name(stage: i32, target: &Target) -> String {
    match stage {
        STAGE_CHROOT => format!("chroot /proc/{}/root", target.pid),
        STAGE_CWD => "chdir".to_string(),
        STAGE_CREDS => "set user and group ids to 0 in its user namespace".to_string(),
        STAGE_CLONE => "clone".to_string(),
        STAGE_CGROUP => "join the run's cgroup".to_string(),
        s if s == STAGE_SETNS + USER_INDEX => "setns user".to_string(),
        s if (STAGE_SETNS..STAGE_SETNS + USER_INDEX).contains(&s) => {
            format!("setns {}", NAMESPACES[(s - STAGE_SETNS) as usize].2)
        }
        _ => "setup".to_string(),
    }
}

/// What the report pipe said.
struct Report {
    child: Option<libc::pid_t>,
    failure: Option<(i32, i32)>,
}

/// Reads records of two native `i32`s (stage, value) until EOF.
fn read_report(fd: &OwnedFd) -> Report {
    let mut report = Report { child: None, failure: None };
    let mut buf = [0u8; 64];
    let mut len = 0;
    loop {
        match nix::unistd::read(fd, &mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        if len == buf.len() {
            break;
        }
    }
    for record in buf[..len - len % 8].chunks_exact(8) {
        let stage = i32::from_ne_bytes(record[..4].try_into().expect("4 bytes"));
        let value = i32::from_ne_bytes(record[4..].try_into().expect("4 bytes"));
        if stage == STAGE_PID {
            report.child = Some(value);
        } else if report.failure.is_none() {
            report.failure = Some((stage, value));
        }
    }
    report
}

/// Waits for one specific child of ours (never "any child").
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // Any error but EINTR (none is expected for our own child) leaves nothing to wait for.
    // SAFETY: waitpid on one specific pid with a valid out-pointer.
    let _ = retry_interrupted(|| os_result(unsafe { libc::waitpid(pid, &mut status, 0) }));
}

/// What C1 and C2 do: raw system calls only.
struct ChildPlan<'a> {
    target: &'a Target,
    prepared: &'a Prepared,
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    report: RawFd,
}

impl ChildPlan<'_> {
    /// Writes one record to the report pipe.
    fn tell(&self, stage: i32, value: i32) {
        let mut rec = [0u8; 8];
        rec[..4].copy_from_slice(&stage.to_ne_bytes());
        rec[4..].copy_from_slice(&value.to_ne_bytes());
        // SAFETY: write of 8 bytes from a stack buffer to a descriptor we hold. A pipe write
        // of at most PIPE_BUF bytes is atomic.
        unsafe { libc::write(self.report, rec.as_ptr().cast(), rec.len()) };
    }

    fn errno() -> i32 {
        // SAFETY: reading errno through glibc's thread-local location is async-signal-safe.
        unsafe { *libc::__errno_location() }
    }

    fn fail(&self, stage: i32) -> ! {
        self.tell(stage, Self::errno());
        // SAFETY: _exit ends this child at once, without running the host's atexit handlers.
        unsafe { libc::_exit(127) }
    }

    fn setns(ns: &Ns) -> bool {
        // SAFETY: setns with a namespace descriptor we hold and its type.
        unsafe { libc::setns(ns.fd.as_raw_fd(), ns.nstype) == 0 }
    }

    /// C1: enter, then clone C2 into the PID namespace as our parent's child. Never returns.
    fn run(&self) -> ! {
        let t = self.target;
        // Into the run's cgroup first, while our cgroup namespace still sees it (a cgroup2
        // mount with nsdelegate refuses moves to cgroups outside the mover's namespace). C2 is
        // cloned by C1, so it is born in C1's cgroup, as is everything it starts.
        if let Some(procs) = self.prepared.cgroup_procs {
            if super::cgroup::join(procs).is_err() {
                self.fail(STAGE_CGROUP);
            }
        }
        // Pass 1 without the user namespace: as root on the host that enters everything, and
        // the user namespace comes last (it would take away our rights in the others). Pass 2
        // enters the user namespace first and retries what pass 1 could not: the case of an
        // unprivileged caller whose rights come from that user namespace (`nsenter`'s order).
        let mut failed = [false; NAMESPACES.len()];
        let mut any_failed = false;
        for ns in &t.namespaces {
            if !Self::setns(ns) {
                failed[ns.index as usize] = true;
                any_failed = true;
            }
        }
        if let Some(user) = &t.user {
            if !Self::setns(user) {
                self.fail(STAGE_SETNS + USER_INDEX);
            }
        }
        if any_failed {
            for ns in t.namespaces.iter().filter(|ns| failed[ns.index as usize]) {
                if !Self::setns(ns) {
                    self.fail(STAGE_SETNS + ns.index);
                }
            }
        }
        // SAFETY: fchdir and chroot on a descriptor we hold and a static string.
        if unsafe { libc::fchdir(t.root.as_raw_fd()) != 0 || libc::chroot(c".".as_ptr()) != 0 } {
            self.fail(STAGE_CHROOT);
        }
        // The target's working directory, then the spec's (absolute: inside the target's root;
        // relative: from the target's working directory).
        // SAFETY: fchdir on a descriptor we hold; chdir with a NUL-terminated path prepared
        // before the fork.
        let cd = unsafe {
            match &self.prepared.cwd {
                Some(dir) => {
                    libc::fchdir(t.cwd.as_raw_fd());
                    libc::chdir(dir.as_ptr())
                }
                None => libc::fchdir(t.cwd.as_raw_fd()),
            }
        };
        if cd != 0 {
            self.fail(STAGE_CWD);
        }
        if t.user.is_some() {
            // As `nsenter` does: become root of the user namespace entered. setgroups is
            // refused where the namespace denies it; the ids still change.
            // SAFETY: raw set*id system calls with integer arguments (raw, so that glibc's
            // all-threads broadcast is not involved: this child has one thread).
            unsafe {
                libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>());
                if libc::syscall(libc::SYS_setresgid, 0, 0, 0) != 0
                    || libc::syscall(libc::SYS_setresuid, 0, 0, 0) != 0
                {
                    self.fail(STAGE_CREDS);
                }
            }
        }
        // SAFETY: a raw clone without CLONE_VM and without a new stack is a fork: the child
        // continues here on its own copy of this stack. CLONE_PARENT makes it our parent's
        // child; its exit signal is ours (SIGCHLD), so the parent waits for it as for any.
        let c2 = unsafe {
            libc::syscall(
                libc::SYS_clone,
                (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        };
        if c2 < 0 {
            self.fail(STAGE_CLONE);
        }
        if c2 == 0 {
            self.exec();
        }
        self.tell(STAGE_PID, c2 as i32);
        // SAFETY: _exit ends C1 at once.
        unsafe { libc::_exit(0) }
    }

    /// C2: the command's process. Never returns.
    fn exec(&self) -> ! {
        let p = self.prepared;
        // SAFETY: raw calls on descriptors we hold and stack data; see each line.
        unsafe {
            // A group of its own, led by it: the group kill at the deadline reaches everything
            // it starts, as for a command on the host.
            if libc::setpgid(0, 0) != 0
                || libc::dup2(p.output.as_raw_fd(), 1) < 0
                || libc::dup2(p.output.as_raw_fd(), 2) < 0
                || libc::dup2(p.null.as_raw_fd(), 0) < 0
            {
                self.fail(STAGE_SETUP);
            }
        }
        // Only 0, 1 and 2 reach the command; the report pipe is among the rest, so a
        // successful exec closes it.
        cloexec_from(3, p.fd_bound);
        // SAFETY: sigset and sigaction on stack values: an empty mask and SIGPIPE at its
        // default for the command (a Rust host ignores SIGPIPE, and ignoring survives exec).
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGPIPE, &dfl, std::ptr::null_mut());
        }
        // execvp's search: the first candidate that is not missing wins; EACCES is kept in
        // case nothing else is found.
        let mut err = libc::ENOENT;
        let mut denied = false;
        for path in &p.candidates {
            // SAFETY: execve with NUL-terminated strings and null-terminated arrays of them,
            // all prepared before the fork; it returns only on failure.
            unsafe { libc::execve(path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr()) };
            match Self::errno() {
                libc::ENOENT | libc::ENOTDIR | libc::ENAMETOOLONG | libc::ELOOP => {}
                libc::EACCES => denied = true,
                other => {
                    err = other;
                    break;
                }
            }
        }
        if denied && err == libc::ENOENT {
            err = libc::EACCES;
        }
        self.tell(STAGE_EXEC, err);
        // SAFETY: _exit ends C2 at once.
        unsafe { libc::_exit(127) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_execvp() {
        let c = candidates("sh", "/usr/bin::/bin".as_ref()).unwrap();
        let c: Vec<&str> = c.iter().map(|s| s.to_str().unwrap()).collect();
        assert_eq!(c, ["/usr/bin/sh", "./sh", "/bin/sh"]);
        let c = candidates("./x", "/bin".as_ref()).unwrap();
        assert_eq!(c[0].to_str().unwrap(), "./x");
    }

    #[test]
    fn a_missing_process_is_named() {
        // PID 2^22 is above any pid_max: never a process.
        let err = Target::open(1 << 22).err().expect("no such process");
        assert_eq!(
            err.message,
            "could not enter the namespaces of process 4194304: no such process"
        );
    }

    #[test]
    fn our_own_namespaces_are_skipped() {
        let t = match Target::open(std::process::id()) {
            Ok(t) => t,
            Err(e) => panic!("our own /proc entry: {}", e.message),
        };
        assert!(t.namespaces.is_empty());
        assert!(t.user.is_none());
    }
}
