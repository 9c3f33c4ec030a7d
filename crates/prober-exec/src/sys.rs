//! The syscall boundary: the output pipe, pidfds, exit status without reaping, group kill,
//! reaping one specific pid. Nothing here installs a signal handler, changes a signal mask or
//! waits for "any child".

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// How a child ended, read without reaping it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
}

/// A close-on-exec pipe whose read end (first) is nonblocking and whose write end stays
/// blocking, as a child's stdout expects.
pub(crate) fn output_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let flags = OFlag::from_bits_retain(fcntl(&read_end, FcntlArg::F_GETFL)?);
    fcntl(&read_end, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok((read_end, write_end))
}

/// `pidfd_open(pid, 0)`: a descriptor that turns readable when `pid` exits. Always
/// close-on-exec.
pub(crate) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and a flags word by value and returns a new descriptor or
    // -1 with errno set; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Has child `pid` exited? Reads its status with `WNOWAIT`, so it stays a zombie (and keeps its
/// pid and process group reserved) until [`reap`]. `Ok(None)`: still running.
pub(crate) fn exit_status(pid: libc::pid_t) -> io::Result<Option<Exit>> {
    // SAFETY: siginfo_t is a plain C struct for which all-zero bytes are a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
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
        if r == 0 {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
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

/// Reaps `pid`, which must be our child and already exited (so this does not block).
pub(crate) fn reap(pid: libc::pid_t) {
    loop {
        match waitpid(Pid::from_raw(pid), None) {
            Err(Errno::EINTR) => continue,
            // Reaped (an unparsable status is still reaped), or not our child any more.
            _ => return,
        }
    }
}

/// `SIGKILL`, `SIGRTMIN+3`, ...: the name Go's `syscall.Signal` would print, for messages.
pub(crate) fn signal_name(signo: i32) -> String {
    if let Ok(sig) = Signal::try_from(signo) {
        return sig.as_str().to_string();
    }
    let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    if signo == min {
        "SIGRTMIN".to_string()
    } else if (min..=max).contains(&signo) {
        format!("SIGRTMIN+{}", signo - min)
    } else {
        "unknown signal".to_string()
    }
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
