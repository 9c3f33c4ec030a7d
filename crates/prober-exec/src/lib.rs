//! The exec probe: run a command, capture a bounded amount of its output, map its end to an
//! [`Outcome`] with the kubelet's semantics.
//!
//! [`ExecProbe`] is a [`Machine`]: it never blocks and never sleeps. One run:
//!
//! 1. `argv` is `$(VAR)`-expanded from the spec's static environment as written ([`expand`]);
//!    the command's own variables are those values expanded as the kubelet expands a
//!    container's, each against the ones before it ([`container_env`]).
//! 2. The command is spawned with `posix_spawn` in a new process group, stdin from
//!    `/dev/null`, stdout and stderr both the write end of one close-on-exec pipe, so the
//!    output is interleaved as written, and no other descriptor: the host's descriptors
//!    without close-on-exec (a C host's sockets, a shell's redirections) are closed in the
//!    child (see `sys`). Its environment is the host's plus the spec's, expanded (the spec
//!    wins). The parent's copy of the write end is closed right after the spawn.
//!    With [`ExecSpec::namespaces_of`] the command runs inside another process's namespaces
//!    instead: a forked child enters them and clones the command into the target's PID
//!    namespace as our own child (see `sys/nsenter.rs`), so everything below is the same.
//! 3. The nonblocking read end is registered on `token(0)` and drained while the command runs:
//!    the first `output_limit` bytes are kept, every byte is counted, memory stays flat.
//! 4. The child's exit is watched with a pidfd on `token(1)`; where `pidfd_open` is refused, a
//!    5 ms sweep with `waitid(P_PID, pid, WNOHANG | WNOWAIT)` does the same job.
//! 5. When the child has exited: its status is read without reaping it, the pipe is drained,
//!    the rest of its process group is killed (the zombie leader keeps the group id reserved),
//!    then the child is reaped. The probe ends when the command ends, not when the pipe closes,
//!    so a background process that keeps the pipe open cannot hold it up.
//! 6. At the deadline the whole group gets SIGKILL; the outcome is a timeout Failure once the
//!    child is reaped, or after a grace of one second, when the child is handed to
//!    [`prober_io::reaper`].
//!
//! A process that leaves the group (`setsid`, a daemon's double fork) escapes both kills,
//! unless the run is contained ([`ExecSpec::cgroup`]): then the command is born in a cgroup of
//! its own, everything in it is killed wherever the group is (steps 5 and 6, a cancel), and the
//! cgroup is removed once empty (see `sys/cgroup.rs`).
//!
//! Nothing here installs signal handlers, changes signal masks or calls `waitpid(-1)`, so the
//! machine is safe inside a Go process or any multithreaded host. Every descriptor is
//! close-on-exec and owned by an `OwnedFd`.
//!
//! A run that cannot start for want of something on this node (descriptors for the pipe,
//! memory, processes: [`Reason::is_local_spawn_resource`]) is Unknown with reason `resource`,
//! never a Failure of the command.

#![warn(missing_docs)]

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry};
use nix::errno::Errno;
use prober_core::{ExecSpec, Outcome, Reason, Timings};
use prober_core::{format_duration, os_error_text};
use prober_io::{Ctx, Machine, Ready, Step, reaper};

mod expand;
mod sys;

pub use expand::{container_env, expand};

use sys::Exit;

/// Token offsets within the machine's [`prober_io::TOKENS_PER_PROBE`].
const PIPE: usize = 0;
const PIDFD: usize = 1;

/// The read buffer: a fixed array on the stack, never a growing allocation.
const READ_CHUNK: usize = 64 * 1024;
/// Reads per readiness event while the command runs (1 MiB). A command that writes faster
/// than that gets the rest of its turn through an immediate timer, so one busy command cannot
/// starve the other probes on the same poll thread.
const READS_PER_TURN: usize = 16;
/// Reads when the command has exited: more than the largest pipe buffer (1 MiB by default),
/// so everything written before the exit is read, but bounded in case a leftover process keeps
/// writing.
const READS_AT_EXIT: usize = 32;
/// Period of the exit sweep when pidfds are not available.
const SWEEP_EVERY: Duration = Duration::from_millis(5);
/// How long to wait for a killed child to exit before handing it to the reaper thread.
const KILL_GRACE: Duration = Duration::from_secs(1);

/// An exec probe run, driven by a poll loop through [`Machine`].
pub struct ExecProbe {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    /// Run inside the namespaces of this process.
    namespaces_of: Option<u32>,
    /// Contain each run in a new cgroup made in this directory.
    cgroup_parent: Option<PathBuf>,
    timeout: Duration,
    /// Never use a pidfd (tests of the sweep fallback).
    sweep_only: bool,
    /// Never use `posix_spawn` (tests of the fork fallback).
    fork_only: bool,
    capture: Capture,
    started: Option<Instant>,
    first_byte: Option<Duration>,
    child: Option<Child>,
}

impl fmt::Debug for ExecProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecProbe")
            .field("argv", &self.argv)
            .field("cwd", &self.cwd)
            .field("namespaces_of", &self.namespaces_of)
            .field("timeout", &self.timeout)
            .field("captured", &self.capture.total)
            .field("child", &self.child)
            .finish_non_exhaustive()
    }
}

/// The running command: everything that must be released.
#[derive(Debug)]
struct Child {
    /// Also the process group id.
    pid: libc::pid_t,
    /// Read end of the output pipe, registered on `token(PIPE)`; `None` after EOF.
    pipe: Option<OwnedFd>,
    watch: Watch,
    /// When the group was killed at the deadline.
    killed_at: Option<Instant>,
    /// The run's cgroup, when the spec asks for containment.
    cgroup: Option<sys::RunCgroup>,
}

impl Child {
    /// SIGKILL to the process group and, when contained, to everything in the run's cgroup.
    /// Only while the child is unreaped (see [`sys::kill_group`]).
    fn kill_all(&mut self) {
        sys::kill_group(self.pid);
        if let Some(cgroup) = self.cgroup.as_mut() {
            cgroup.kill();
        }
    }
}

#[derive(Debug)]
enum Watch {
    /// Registered on `token(PIDFD)`.
    Pidfd(OwnedFd),
    /// No pidfd: check with `waitid(WNOHANG | WNOWAIT)` at `next`.
    Sweep { next: Instant },
}

/// Output limiting, without I/O: keep the first `limit` bytes, count them all.
#[derive(Debug)]
struct Capture {
    kept: Vec<u8>,
    total: u64,
    limit: usize,
}

impl Capture {
    fn new(limit: usize) -> Capture {
        Capture { kept: Vec::new(), total: 0, limit }
    }

    fn push(&mut self, data: &[u8]) {
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..room.min(data.len())]);
        self.total += data.len() as u64;
    }

    fn truncated(&self) -> bool {
        self.total > self.kept.len() as u64
    }
}

enum Drained {
    /// Nothing more to read now.
    Empty,
    /// The write end is closed everywhere (or the pipe failed): stop watching it.
    Closed,
    /// The budget ran out with data left.
    More,
}

impl ExecProbe {
    /// A run of `spec`'s command with one `timeout` for the whole run, keeping at most
    /// `output_limit` bytes of output. `argv` is expanded here, once.
    pub fn new(spec: &ExecSpec, timeout: Duration, output_limit: usize) -> ExecProbe {
        ExecProbe {
            argv: spec.argv.iter().map(|a| expand(a, &spec.env)).collect(),
            env: container_env(&spec.env),
            cwd: spec.cwd.clone(),
            namespaces_of: spec.namespaces_of,
            cgroup_parent: spec.cgroup.clone(),
            timeout,
            sweep_only: false,
            fork_only: false,
            capture: Capture::new(output_limit),
            started: None,
            first_byte: None,
            child: None,
        }
    }

    /// The command line after `$(VAR)` expansion.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    fn deadline(&self) -> Option<Instant> {
        self.started.map(|s| s + self.timeout)
    }

    /// Finds the program to run, as `execvp` would: a name without `/` is searched in `PATH`
    /// (the spec's, else the host's). Done here rather than left to the spawn so that "no such
    /// file" and "permission denied" are reported the same way everywhere: glibc's
    /// `posix_spawn` relies on `CLONE_VFORK` to report a failed exec, which not every
    /// environment honours (valgrind, for one, turns it into exit code 127).
    fn locate(&self) -> io::Result<PathBuf> {
        let prog = &self.argv[0];
        let executable = |p: &Path| -> io::Result<()> { sys::executable(p) };
        if prog.contains('/') {
            let p = PathBuf::from(prog);
            // Relative paths are left to the spawn: they depend on the working directory.
            if p.is_absolute() {
                executable(&p)?;
            }
            return Ok(p);
        }
        let path = match self.env.iter().rev().find(|(k, _)| k == "PATH") {
            Some((_, v)) => std::ffi::OsString::from(v),
            None => {
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())
            }
        };
        let mut denied = None;
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(prog);
            if candidate.is_file() {
                match executable(&candidate) {
                    Ok(()) => return Ok(candidate),
                    Err(e) => denied = Some(e),
                }
            }
        }
        Err(denied.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ENOENT)))
    }

    /// Starts the command with `write_end` as its stdout and stderr; returns its pid. The
    /// parent's copy of `write_end` is closed on return, or EOF would never come.
    fn spawn(
        &self,
        write_end: OwnedFd,
        cgroup: Option<&sys::RunCgroup>,
    ) -> Result<libc::pid_t, (String, io::Error)> {
        let cgroup_procs = cgroup.map(sys::RunCgroup::procs_fd);
        if let Some(target) = self.namespaces_of {
            // The program is looked for inside the target's root, by the child itself.
            let request = sys::SpawnRequest {
                program: Path::new(&self.argv[0]),
                argv: &self.argv,
                env: &self.env,
                cwd: self.cwd.as_deref(),
                fork_only: true,
                cgroup_procs,
            };
            let pid = sys::spawn_in(&request, &write_end, target);
            drop(write_end);
            return pid.map_err(|e| (e.message, e.error));
        }
        let host = || -> io::Result<libc::pid_t> {
            let program = self.locate()?;
            let request = sys::SpawnRequest {
                program: &program,
                argv: &self.argv,
                env: &self.env,
                cwd: self.cwd.as_deref(),
                fork_only: self.fork_only,
                cgroup_procs,
            };
            sys::spawn(&request, &write_end)
        };
        let pid = host();
        drop(write_end);
        pid.map_err(|e| (self.spawn_error(&e), e))
    }

    /// Spawns with `fork` and a `pre_exec` hook, never `posix_spawn`: the fallback for C
    /// libraries without `posix_spawn_file_actions_addclosefrom_np`, for tests.
    #[doc(hidden)]
    pub fn fork_only_for_test(mut self) -> ExecProbe {
        self.fork_only = true;
        self
    }

    fn spawn_error(&self, err: &io::Error) -> String {
        let prog = &self.argv[0];
        if let Some(dir) = &self.cwd {
            // std reports a failed chdir with the bare errno; name the directory instead.
            match std::fs::metadata(dir) {
                Err(e) => {
                    return format!(
                        "could not start {prog:?}: chdir {}: {}",
                        dir.display(),
                        os_error_text(&e)
                    );
                }
                Ok(m) if !m.is_dir() => {
                    return format!(
                        "could not start {prog:?}: chdir {}: not a directory",
                        dir.display()
                    );
                }
                Ok(_) => {}
            }
        }
        if err.raw_os_error() == Some(libc::EAGAIN) {
            // fork/clone's EAGAIN: the process or thread limit (RLIMIT_NPROC, pid_max).
            return format!("could not start {prog:?}: too many processes: {}", os_error_text(err));
        }
        format!("could not start {prog:?}: {}", os_error_text(err))
    }

    /// Builds the final outcome from `base` plus the captured output and timings.
    fn done(&mut self, cx: &Ctx<'_>, mut base: Outcome) -> Step {
        base.truncated = self.capture.truncated();
        base.output_total = self.capture.total;
        base.output = std::mem::take(&mut self.capture.kept);
        base.timings = Timings {
            first_byte: self.first_byte,
            total: self.started.map(|s| cx.now.saturating_duration_since(s)).unwrap_or_default(),
            ..Timings::default()
        };
        Step::Done(base)
    }

    /// The kubelet's words for an exec probe that timed out, as its CRI client words them
    /// (`command timed out: "sleep 5" timed out after 1s`): the expanded command line joined
    /// by spaces and quoted as Go quotes it.
    fn timeout_outcome(&self) -> Outcome {
        let command = prober_core::go_quote(self.argv.join(" ").as_bytes());
        Outcome::failure(
            Reason::Timeout,
            format!(
                "command timed out: {command} timed out after {}",
                format_duration(self.timeout)
            ),
        )
    }

    /// Reads up to `budget` chunks from the pipe into the capture; true when the budget ran
    /// out with output still coming (the caller yields).
    fn drain(&mut self, cx: &Ctx<'_>, budget: usize) -> bool {
        let Some(child) = self.child.as_mut() else {
            return false;
        };
        let Some(pipe) = child.pipe.as_ref() else {
            return false;
        };
        // On the stack: a heap buffer would cost an allocation per drain, and 64 KiB (one full
        // pipe) is far below any thread stack a host runs the engine on (2 MiB for Rust threads,
        // 8 MiB for the main thread and Go's cgo threads).
        // Uninitialised: zeroing 64 KiB per drain was half of the instructions of a
        // `/bin/true` run (callgrind); `read` only ever hands back what the kernel wrote.
        let mut buf = std::mem::MaybeUninit::<[u8; READ_CHUNK]>::uninit();
        let mut state = Drained::More;
        for _ in 0..budget {
            // SAFETY: read(2) writes at most READ_CHUNK bytes into `buf`, which we own
            // exclusively and which outlives the call.
            let r = unsafe { libc::read(pipe.as_raw_fd(), buf.as_mut_ptr().cast(), READ_CHUNK) };
            match Errno::result(r).map(|n| n as usize) {
                Ok(0) => {
                    state = Drained::Closed;
                    break;
                }
                Ok(n) => {
                    if self.first_byte.is_none() {
                        let start = self.started.unwrap_or(cx.now);
                        self.first_byte = Some(cx.now.saturating_duration_since(start));
                    }
                    // SAFETY: the kernel initialised the first `n` (<= READ_CHUNK) bytes.
                    let data = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
                    self.capture.push(data);
                }
                Err(Errno::EAGAIN) => {
                    state = Drained::Empty;
                    break;
                }
                Err(Errno::EINTR) => {}
                Err(_) => {
                    state = Drained::Closed;
                    break;
                }
            }
        }
        match state {
            Drained::Empty => false,
            Drained::More => true,
            Drained::Closed => {
                if let Some(pipe) = child.pipe.take() {
                    let _ = cx.registry.deregister(&mut SourceFd(&pipe.as_raw_fd()));
                }
                false
            }
        }
    }

    /// One turn's worth of output: yields when the budget ran out with more to read, so that a
    /// command flooding its output cannot hold the poll thread.
    fn read_some(&mut self, cx: &Ctx<'_>) -> Step {
        if self.drain(cx, READS_PER_TURN) { Step::Yield } else { Step::Pending }
    }

    /// Checks whether the child has exited; if so, finishes the run.
    fn check_exit(&mut self, cx: &Ctx<'_>) -> Option<Step> {
        let pid = self.child.as_ref()?.pid;
        match sys::exit_status(pid) {
            Ok(None) => None,
            Ok(Some(exit)) => Some(self.finish_exited(cx, Ok(exit))),
            Err(e) => Some(self.finish_exited(cx, Err(e))),
        }
    }

    /// The child has exited (or was reaped behind our back: `Err`).
    fn finish_exited(&mut self, cx: &Ctx<'_>, exit: io::Result<Exit>) -> Step {
        let _ = self.drain(cx, READS_AT_EXIT);
        let Some(mut child) = self.child.take() else {
            return Step::Pending;
        };
        if exit.is_ok() {
            // The leader is a zombie: its group id cannot have been reused, so this only
            // reaches what is left of the command's own group (and of its cgroup).
            child.kill_all();
            // Exited, so the reaper's first `waitpid(pid, WNOHANG)` reaps it here and now.
            reaper::adopt(child.pid);
        }
        // With Err (ECHILD: the host reaps children behind our back, e.g. SIGCHLD set to
        // SIG_IGN) the pid may already be reused: no group kill, nothing to reap. The cgroup is
        // ours whatever happened to the pid: it is killed all the same.
        if let (Err(_), Some(cgroup)) = (&exit, child.cgroup.as_mut()) {
            cgroup.kill();
        }
        let timed_out = child.killed_at.is_some();
        release(child, Some(cx.registry));
        let outcome = if timed_out {
            self.timeout_outcome()
        } else {
            match exit {
                Ok(Exit::Code(0)) => {
                    let mut o = Outcome::success();
                    o.exit_code = Some(0);
                    o
                }
                Ok(Exit::Code(code)) => {
                    let mut o = Outcome::failure(
                        Reason::ExitCode,
                        format!("command terminated with exit code {code}"),
                    );
                    o.exit_code = Some(code);
                    o
                }
                Ok(Exit::Signal(sig)) => Outcome::failure(
                    Reason::Signal,
                    format!("command terminated by signal {sig} ({})", sys::signal_name(sig)),
                ),
                Err(e) => Outcome::unknown(
                    Reason::Io,
                    format!("could not get the exit status of the command: {}", os_error_text(&e)),
                ),
            }
        };
        self.done(cx, outcome)
    }

    /// Registers the pipe and the exit watch; on failure kills the child.
    fn watch(
        &mut self,
        cx: &Ctx<'_>,
        pid: libc::pid_t,
        pipe: OwnedFd,
        cgroup: Option<sys::RunCgroup>,
    ) -> io::Result<()> {
        if let Err(e) = cx.registry.register(
            &mut SourceFd(&pipe.as_raw_fd()),
            cx.token(PIPE),
            Interest::READABLE,
        ) {
            let watch = Watch::Sweep { next: cx.now };
            let child = Child { pid, pipe: None, watch, killed_at: None, cgroup };
            abandon(child, None);
            return Err(e);
        }
        let pidfd = if self.sweep_only {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        } else {
            sys::pidfd_open(pid)
        };
        let watch = match pidfd {
            Ok(fd) => {
                match cx.registry.register(
                    &mut SourceFd(&fd.as_raw_fd()),
                    cx.token(PIDFD),
                    Interest::READABLE,
                ) {
                    Ok(()) => Watch::Pidfd(fd),
                    Err(_) => Watch::Sweep { next: cx.now + SWEEP_EVERY },
                }
            }
            // ENOSYS (kernel before 5.3), EPERM (seccomp), EMFILE...: sweep instead.
            Err(_) => Watch::Sweep { next: cx.now + SWEEP_EVERY },
        };
        self.child = Some(Child { pid, pipe: Some(pipe), watch, killed_at: None, cgroup });
        Ok(())
    }

    #[cfg(test)]
    fn sweep_only(mut self) -> ExecProbe {
        self.sweep_only = true;
        self
    }
}

/// Deregisters and closes everything of `child`, and hands its cgroup over for removal (the
/// caller has dealt with the processes).
fn release(mut child: Child, registry: Option<&Registry>) {
    if let Some(registry) = registry {
        if let Some(pipe) = child.pipe.take() {
            let _ = registry.deregister(&mut SourceFd(&pipe.as_raw_fd()));
        }
        if let Watch::Pidfd(fd) = &child.watch {
            let _ = registry.deregister(&mut SourceFd(&fd.as_raw_fd()));
        }
    }
    if let Some(cgroup) = child.cgroup.take() {
        cgroup.remove();
    }
    // Dropping `child` closes the pipe and the pidfd.
}

/// Stops a run that has not finished: kill the group (and the cgroup), reap now or through the
/// reaper thread.
fn abandon(mut child: Child, registry: Option<&Registry>) {
    let pid = child.pid;
    // Unreaped until `adopt` below, so the group id is still ours.
    child.kill_all();
    release(child, registry);
    reaper::adopt(pid);
}

impl Machine for ExecProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        if self.argv.is_empty() || self.argv[0].is_empty() {
            let o = Outcome::unknown(Reason::Spawn, "exec probe needs a command (argv is empty)");
            return self.done(cx, o);
        }
        let (read_end, write_end) = match sys::output_pipe() {
            Ok(p) => p,
            Err(e) => {
                let msg = format!("could not create the output pipe: {}", os_error_text(&e));
                let reason =
                    if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Io };
                return self.done(cx, Outcome::unknown(reason, msg));
            }
        };
        let cgroup = match &self.cgroup_parent {
            None => None,
            Some(dir) => match sys::RunCgroup::create(dir) {
                Ok(cgroup) => Some(cgroup),
                Err(e) => {
                    // Never run uncontained when containment was asked for.
                    let msg = format!(
                        "could not create a cgroup for the command in {}: {}",
                        dir.display(),
                        os_error_text(&e)
                    );
                    let reason = if Reason::is_local_resource(&e) {
                        Reason::Resource
                    } else {
                        Reason::Spawn
                    };
                    return self.done(cx, Outcome::unknown(reason, msg));
                }
            },
        };
        let pid = match self.spawn(write_end, cgroup.as_ref()) {
            Ok(pid) => pid,
            Err((msg, e)) => {
                if let Some(cgroup) = cgroup {
                    cgroup.remove();
                }
                let reason = if Reason::is_local_spawn_resource(&e) {
                    Reason::Resource
                } else {
                    Reason::Spawn
                };
                return self.done(cx, Outcome::unknown(reason, msg));
            }
        };
        if let Err(e) = self.watch(cx, pid, read_end, cgroup) {
            let msg = format!("could not watch the command: {}", os_error_text(&e));
            let reason = if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Io };
            return self.done(cx, Outcome::unknown(reason, msg));
        }
        Step::Pending
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, _ready: Ready) -> Step {
        if self.child.is_none() {
            return Step::Pending;
        }
        match sub {
            PIPE => self.read_some(cx),
            PIDFD => self.check_exit(cx).unwrap_or(Step::Pending),
            _ => Step::Pending,
        }
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.child.is_none() {
            return Step::Pending;
        }
        let sweep_due = match self.child.as_ref().map(|c| &c.watch) {
            Some(Watch::Sweep { next }) => *next <= cx.now,
            _ => false,
        };
        if sweep_due {
            if let Some(step) = self.check_exit(cx) {
                return step;
            }
            if let Some(Child { watch: Watch::Sweep { next }, .. }) = self.child.as_mut() {
                *next = cx.now + SWEEP_EVERY;
            }
        }
        let deadline = self.deadline();
        let Some(child) = self.child.as_mut() else {
            return Step::Pending;
        };
        match child.killed_at {
            Some(killed) if cx.now >= killed + KILL_GRACE => {
                // Killed a second ago and still not gone (uninterruptible sleep, or a stopped
                // tracee): stop waiting; the reaper thread reaps it when it finally exits.
                let child = self.child.take().expect("checked above");
                let pid = child.pid;
                release(child, Some(cx.registry));
                reaper::adopt(pid);
                let o = self.timeout_outcome();
                self.done(cx, o)
            }
            Some(_) => Step::Pending,
            None if deadline.is_some_and(|d| cx.now >= d) => {
                // It may have exited just now, with its exit event not yet seen: then it was in
                // time.
                if let Some(step) = self.check_exit(cx) {
                    return step;
                }
                if let Some(child) = self.child.as_mut() {
                    child.kill_all();
                    child.killed_at = Some(cx.now);
                }
                Step::Pending
            }
            None => Step::Pending,
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        let child = self.child.as_ref()?;
        let mut at = match child.killed_at {
            Some(killed) => killed + KILL_GRACE,
            None => self.deadline()?,
        };
        if let Watch::Sweep { next } = child.watch {
            at = at.min(next);
        }
        Some(at)
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.child.is_none() {
            return Step::Pending;
        }
        self.read_some(cx)
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        if let Some(child) = self.child.take() {
            abandon(child, Some(cx.registry));
        }
    }
}

impl Drop for ExecProbe {
    /// Safety net for a machine dropped mid-run: kill the group and make sure it is reaped.
    /// (Closing the descriptors removes them from the poll as well.)
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            abandon(child, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::ProbeResult;
    use prober_io::run_to_completion;

    fn spec(argv: &[&str]) -> ExecSpec {
        ExecSpec {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            cwd: None,
            namespaces_of: None,
            cgroup: None,
        }
    }

    #[test]
    fn capture_keeps_the_first_bytes_and_counts_all() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        assert!(!c.truncated());
        c.push(b"de");
        assert_eq!((c.kept.as_slice(), c.total, c.truncated()), (&b"abcde"[..], 5, false));
        c.push(b"fgh");
        c.push(b"");
        c.push(&[0u8; 100]);
        assert_eq!((c.kept.as_slice(), c.total, c.truncated()), (&b"abcde"[..], 108, true));
    }

    #[test]
    fn argv_is_expanded_once_at_construction() {
        let mut s = spec(&["$(CMD)", "-c", "echo $(A) $$(A) $(B)"]);
        s.env = vec![("A".into(), "x".into()), ("CMD".into(), "sh".into())];
        let p = ExecProbe::new(&s, Duration::from_secs(1), 10);
        assert_eq!(p.argv(), ["sh", "-c", "echo x $(A) $(B)"]);
    }

    #[test]
    fn sweep_fallback_success_and_failure() {
        let mut p =
            ExecProbe::new(&spec(&["sh", "-c", "printf hi; exit 3"]), Duration::from_secs(10), 100)
                .sweep_only();
        let o = run_to_completion(&mut p);
        assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
        assert_eq!(o.reason, Reason::ExitCode);
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.output, b"hi");
        assert!(p.child.is_none());

        let mut p = ExecProbe::new(
            &spec(&["sh", "-c", "sleep 30 & echo $!"]),
            Duration::from_secs(60),
            100,
        )
        .sweep_only();
        let started = Instant::now();
        let o = run_to_completion(&mut p);
        assert!(started.elapsed() < Duration::from_secs(10), "did not hang on the pipe");
        assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    }

    #[test]
    fn sweep_fallback_timeout() {
        let mut p = ExecProbe::new(
            &spec(&["sh", "-c", "printf partial; exec sleep 30"]),
            Duration::from_millis(100),
            100,
        )
        .sweep_only();
        let started = Instant::now();
        let o = run_to_completion(&mut p);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
        assert_eq!(o.reason, Reason::Timeout);
        assert_eq!(
            o.message,
            r#"command timed out: "sh -c printf partial; exec sleep 30" timed out after 100ms"#
        );
        assert_eq!(o.output, b"partial");
        assert_eq!(reaper::pending(), 0);
    }

    #[test]
    fn empty_argv_is_unknown() {
        let mut p = ExecProbe::new(&spec(&[]), Duration::from_secs(1), 100);
        let o = run_to_completion(&mut p);
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Spawn));
    }
}

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
