//! The syscall boundary: the spawn, the output pipe, pidfds, exit status without reaping,
//! group kill, reaping one specific pid. Nothing here installs a signal handler, changes this
//! process's signal mask or waits for "any child".
//!
//! What is Linux's own (pidfds, `close_range`, real-time signal numbers) is in `linux.rs`;
//! `other.rs` stands in for it on the other Unix systems, which are compile-checked only
//! (FreeBSD in CI): there the probe sweeps for its child's exit instead of polling a pidfd.
//!
//! The spawn is our own `posix_spawn` call rather than `std::process::Command`, because only
//! descriptors 0, 1 and 2 may reach the command and std has no way to close the others: its
//! `pre_exec` hook would do, but it turns std's `posix_spawn` (a `CLONE_VFORK` child that shares
//! our memory) into a `fork`, whose cost grows with the host's memory map. glibc 2.34 added
//! `posix_spawn_file_actions_addclosefrom_np`, which closes every descriptor from 3 up in the
//! child (`close_range`, or glibc's own fallback on older kernels). It is looked up at run time
//! so that the library still loads with an older C library; without it the spawn falls back to
//! `Command` with a `pre_exec` hook that marks every descriptor from 3 up close-on-exec.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use prober_io::{os_result, retry_interrupted};

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod os;
#[cfg(not(target_os = "linux"))]
#[path = "other.rs"]
mod os;

mod cgroup;
pub(crate) use cgroup::RunCgroup;

#[cfg(target_os = "linux")]
mod nsenter;
#[cfg(target_os = "linux")]
pub(crate) use nsenter::spawn_in;
#[cfg(not(target_os = "linux"))]
pub(crate) use os::spawn_in;

/// How a child ended, read without reaping it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
}

/// What to run: everything already resolved by the caller.
pub(crate) struct SpawnRequest<'a> {
    /// The program's path (found in `PATH` by the caller).
    pub(crate) program: &'a Path,
    /// `argv[0]` first.
    pub(crate) argv: &'a [String],
    /// Added to (and overriding) the host's environment.
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: Option<&'a Path>,
    /// Never use `posix_spawn` (tests of the fallback).
    pub(crate) fork_only: bool,
    /// `cgroup.procs` of the run's cgroup: the child moves itself in before exec.
    pub(crate) cgroup_procs: Option<RawFd>,
}

/// Starts `req` in a new process group with stdin from `/dev/null`, stdout and stderr on
/// `output`, and no other descriptor of ours; returns its pid. A child that must be born in a
/// cgroup is forked: `posix_spawn` has no step for it before glibc 2.39.
pub(crate) fn spawn(req: &SpawnRequest<'_>, output: &OwnedFd) -> io::Result<libc::pid_t> {
    match glibc_spawn_actions() {
        Some(actions) if !req.fork_only && req.cgroup_procs.is_none() => {
            posix_spawn(req, output, actions)
        }
        _ => command_spawn(req, output),
    }
}

type AddCloseFrom =
    unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, libc::c_int) -> libc::c_int;
type AddChdir =
    unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const libc::c_char) -> libc::c_int;

#[derive(Clone, Copy)]
struct SpawnActions {
    closefrom: AddCloseFrom,
    chdir: AddChdir,
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34) and `_addchdir_np` (2.29), when
/// the C library we run with has both.
fn glibc_spawn_actions() -> Option<SpawnActions> {
    static ACTIONS: OnceLock<Option<SpawnActions>> = OnceLock::new();
    *ACTIONS.get_or_init(|| {
        let find = |name: &CStr| {
            // SAFETY: dlsym with RTLD_DEFAULT (a null handle in glibc) and a NUL-terminated
            // name only looks the symbol up; it returns null when there is none.
            let sym = unsafe { libc::dlsym(std::ptr::null_mut(), name.as_ptr()) };
            (!sym.is_null()).then_some(sym)
        };
        let closefrom = find(c"posix_spawn_file_actions_addclosefrom_np")?;
        let chdir = find(c"posix_spawn_file_actions_addchdir_np")?;
        // SAFETY: both symbols are glibc's functions of exactly these C signatures
        // (spawn.h); a function pointer and a data pointer have the same size here.
        unsafe {
            Some(SpawnActions {
                closefrom: std::mem::transmute::<*mut libc::c_void, AddCloseFrom>(closefrom),
                chdir: std::mem::transmute::<*mut libc::c_void, AddChdir>(chdir),
            })
        }
    })
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "nul byte found in provided data"))
}

unsafe extern "C" {
    /// The C library's environment array (`KEY=VALUE` strings, null-terminated).
    static environ: *const *mut libc::c_char;
}

/// The spec's entries as `KEY=VALUE`, the last of duplicate keys winning (as with
/// `Command::envs`), in the spec's order.
fn spec_entries(spec_env: &[(String, String)]) -> io::Result<Vec<CString>> {
    let mut out = Vec::with_capacity(spec_env.len());
    for (i, (key, value)) in spec_env.iter().enumerate() {
        if spec_env[i + 1..].iter().any(|(k, _)| k == key) {
            continue;
        }
        let mut entry = Vec::with_capacity(key.len() + value.len() + 2);
        entry.extend_from_slice(key.as_bytes());
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        out.push(cstring(&entry)?);
    }
    Ok(out)
}

/// The command's envp: the host's `environ` entries whose key the spec does not set, then
/// `spec` (from [`spec_entries`]). The host's strings are pointed at, not copied: this is
/// `environ` as the C library's own `posix_spawn` and `execve` read it (a host that changes
/// its environment while another thread reads it is already undefined in C and in Rust, whose
/// `set_var` is `unsafe` for that reason). Null-terminated.
fn spawn_envp(spec_env: &[(String, String)], spec: &[CString]) -> Vec<*mut libc::c_char> {
    let mut out = Vec::with_capacity(64 + spec.len());
    // SAFETY: `environ` is a null-terminated array of NUL-terminated strings, read only here
    // (see above for a host that writes it concurrently).
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let bytes = CStr::from_ptr(*entry).to_bytes();
            let key = bytes.split(|b| *b == b'=').next().unwrap_or(bytes);
            if !spec_env.iter().any(|(k, _)| k.as_bytes() == key) {
                out.push(*entry);
            }
            entry = entry.add(1);
        }
    }
    out.extend(spec.iter().map(|e| e.as_ptr().cast_mut()));
    out.push(std::ptr::null_mut());
    out
}

/// Owns a `posix_spawn_file_actions_t` and destroys it.
struct FileActions(libc::posix_spawn_file_actions_t);

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialised by posix_spawn_file_actions_init, destroyed once, here.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

/// Owns a `posix_spawnattr_t` and destroys it.
struct Attrs(libc::posix_spawnattr_t);

impl Drop for Attrs {
    fn drop(&mut self) {
        // SAFETY: initialised by posix_spawnattr_init, destroyed once, here.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(rc)) }
}

fn posix_spawn(
    req: &SpawnRequest<'_>,
    output: &OwnedFd,
    actions: SpawnActions,
) -> io::Result<libc::pid_t> {
    let program = cstring(req.program.as_os_str().as_bytes())?;
    let argv = req.argv.iter().map(|a| cstring(a.as_bytes())).collect::<io::Result<Vec<_>>>()?;
    let spec_env = spec_entries(req.env)?;
    let cwd = req.cwd.map(|d| cstring(d.as_os_str().as_bytes())).transpose()?;
    let mut argv_ptrs: Vec<*mut libc::c_char> =
        argv.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv_ptrs.push(std::ptr::null_mut());
    // Without entries of the spec's, the host's `environ` itself, as `raw_spawn` passes it: no
    // copy and no allocation (copying it cost two allocations per variable and run).
    let envp_ptrs = if req.env.is_empty() { None } else { Some(spawn_envp(req.env, &spec_env)) };
    let out = output.as_raw_fd();

    // SAFETY: all-zero bytes are a valid "uninitialised" value for these plain C structs;
    // the init calls below set them up before any other use.
    let mut fa = FileActions(unsafe { std::mem::zeroed() });
    // SAFETY: as above.
    let mut attrs = Attrs(unsafe { std::mem::zeroed() });
    // Every call gets a pointer to a struct we own exclusively and, for paths, a NUL-terminated
    // string that outlives the posix_spawn call below (glibc copies the strings of addopen and
    // addchdir_np anyway). The two `_np` functions were found by name in glibc with these
    // signatures. posix_spawn reads argv and envp, null-terminated arrays of pointers into
    // `argv` and `envp`, which are alive until it returns; it writes only `pid`. The signal
    // mask and defaults are set for the child only.
    // SAFETY: owned structs, live strings and arrays, and glibc's signatures, as said above.
    unsafe {
        check(libc::posix_spawn_file_actions_init(&mut fa.0))?;
        check(libc::posix_spawnattr_init(&mut attrs.0))?;
        // The dup2s come first: should the pipe's write end be descriptor 0 (a host that
        // closed its stdin), opening /dev/null on 0 first would lose it.
        check(libc::posix_spawn_file_actions_adddup2(&mut fa.0, out, 1))?;
        check(libc::posix_spawn_file_actions_adddup2(&mut fa.0, out, 2))?;
        check(libc::posix_spawn_file_actions_addopen(
            &mut fa.0,
            0,
            c"/dev/null".as_ptr(),
            libc::O_RDONLY,
            0,
        ))?;
        if let Some(dir) = &cwd {
            check((actions.chdir)(&mut fa.0, dir.as_ptr()))?;
        }
        // Everything else of the host's stays out of the command, close-on-exec or not.
        check((actions.closefrom)(&mut fa.0, 3))?;

        // As std does for its children: an empty signal mask and SIGPIPE at its default (a
        // Rust host ignores it, and an ignored signal stays ignored across exec).
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        check(libc::posix_spawnattr_setsigmask(&mut attrs.0, &set))?;
        libc::sigaddset(&mut set, libc::SIGPIPE);
        check(libc::posix_spawnattr_setsigdefault(&mut attrs.0, &set))?;
        check(libc::posix_spawnattr_setpgroup(&mut attrs.0, 0))?;
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        check(libc::posix_spawnattr_setflags(&mut attrs.0, flags as libc::c_short))?;

        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            &fa.0,
            &attrs.0,
            argv_ptrs.as_ptr(),
            match &envp_ptrs {
                Some(envp) => envp.as_ptr(),
                None => environ,
            },
        ))?;
        Ok(pid)
    }
}

/// The spawn without glibc's `addclosefrom_np`, or into a cgroup: `Command`, whose `pre_exec`
/// hook moves the child into the run's cgroup and marks every descriptor from 3 up
/// close-on-exec in the child. (Closing them outright would also close std's own pipe that
/// reports a failed exec.)
fn command_spawn(req: &SpawnRequest<'_>, output: &OwnedFd) -> io::Result<libc::pid_t> {
    let write_end = output.try_clone()?;
    let err_end = output.try_clone()?;
    // Read here, not in the child: getrlimit is not on the async-signal-safe list.
    let bound = open_files_limit();
    let cgroup_procs = req.cgroup_procs;
    let mut cmd = Command::new(req.program);
    cmd.arg0(&req.argv[0])
        .args(&req.argv[1..])
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(err_end))
        .process_group(0);
    if let Some(dir) = req.cwd {
        cmd.current_dir(dir);
    }
    // SAFETY: the hook runs in the forked child before exec and only makes raw syscalls
    // (write, close_range, fcntl), which are async-signal-safe; it allocates nothing (an OS
    // error is a plain number) and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            // First: nothing the command does can happen outside the cgroup.
            if let Some(procs) = cgroup_procs {
                cgroup::join(procs)?;
            }
            cloexec_from(3, bound);
            Ok(())
        });
    }
    let child = cmd.spawn();
    // The parent's copies of the write end live in `cmd`: close them now, or EOF never comes.
    drop(cmd);
    // std's Child owns nothing here (no piped stdio, no pidfd); its Drop does not wait.
    child.map(|c| c.id() as libc::pid_t)
}

/// The soft limit on open descriptors: no descriptor can be at or above it.
fn open_files_limit() -> libc::c_int {
    match nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE) {
        Ok((soft, _)) => soft.min(libc::c_int::MAX as libc::rlim_t) as libc::c_int,
        Err(_) => 1 << 20,
    }
}

/// Marks every descriptor from `first` up close-on-exec. Async-signal-safe (the child of a
/// fork): the system's one call for it where there is one ([`os::cloexec_range`]), else `fcntl`
/// on each number below `bound`.
fn cloexec_from(first: libc::c_int, bound: libc::c_int) {
    if os::cloexec_range(first) {
        return;
    }
    for fd in first..bound {
        // SAFETY: fcntl F_GETFD/F_SETFD on a number that may or may not be open: EBADF at
        // worst; no memory is passed.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Whether `path` may be executed by this process: `access(path, X_OK)`.
pub(crate) fn executable(path: &Path) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated path; access() only reads it.
    os_result(unsafe { libc::access(c.as_ptr(), libc::X_OK) }).map(drop)
}

/// A close-on-exec pipe whose read end (first) is nonblocking and whose write end stays
/// blocking, as a child's stdout expects.
pub(crate) fn output_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    // A new pipe's read end has no status flag set (its access mode is not one that F_SETFL
    // changes): no F_GETFL first.
    fcntl(&read_end, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    Ok((read_end, write_end))
}

pub(crate) use os::pidfd_open;

/// Has child `pid` exited? Reads its status with `WNOWAIT`, so it stays a zombie (and keeps its
/// pid and process group reserved) until [`reap`]. `Ok(None)`: still running.
pub(crate) fn exit_status(pid: libc::pid_t) -> io::Result<Option<Exit>> {
    // SAFETY: siginfo_t is a plain C struct for which all-zero bytes are a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    retry_interrupted(|| {
        // SAFETY: waitid on one specific pid with a valid, exclusively borrowed out-pointer;
        // WNOHANG never blocks and WNOWAIT leaves the child unreaped.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        os_result(r).map(drop)
    })?;
    // SAFETY: waitid either filled the SIGCHLD member of the union (the one these accessors
    // read) or left the struct zeroed (si_pid 0: nothing to report).
    let (si_pid, si_status) = unsafe { (info.si_pid(), info.si_status()) };
    if si_pid == 0 {
        return Ok(None);
    }
    Ok(match info.si_code {
        libc::CLD_EXITED => Some(Exit::Code(si_status)),
        libc::CLD_KILLED | libc::CLD_DUMPED => Some(Exit::Signal(si_status)),
        _ => None,
    })
}

/// SIGKILL to the whole process group `pgid`. Only call while the group leader is unreaped
/// (alive or a zombie): then the id cannot have been reused.
pub(crate) fn kill_group(pgid: libc::pid_t) {
    // ESRCH (the group is empty or holds only the zombie leader) is fine.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
}

/// `SIGKILL`, `SIGRTMIN+3`, ...: the name Go's `syscall.Signal` would print, for messages.
pub(crate) fn signal_name(signo: i32) -> String {
    if let Ok(sig) = Signal::try_from(signo) {
        return sig.as_str().to_string();
    }
    os::realtime_signal_name(signo).unwrap_or_else(|| "unknown signal".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(libc::SIGRTMIN()), "SIGRTMIN");
        assert_eq!(signal_name(libc::SIGRTMIN() + 3), "SIGRTMIN+3");
        assert_eq!(signal_name(1000), "unknown signal");
    }

    #[test]
    fn pipe_flags() {
        let (r, w) = output_pipe().unwrap();
        let rf = OFlag::from_bits_retain(fcntl(&r, FcntlArg::F_GETFL).unwrap());
        let wf = OFlag::from_bits_retain(fcntl(&w, FcntlArg::F_GETFL).unwrap());
        assert!(rf.contains(OFlag::O_NONBLOCK));
        assert!(!wf.contains(OFlag::O_NONBLOCK));
        for fd in [&r, &w] {
            let fdf = fcntl(fd, FcntlArg::F_GETFD).unwrap();
            assert_ne!(fdf & libc::FD_CLOEXEC, 0, "pipe ends must be close-on-exec");
        }
    }
}
