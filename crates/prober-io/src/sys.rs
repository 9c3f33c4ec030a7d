//! prober-io's system calls, behind one door: reaping one specific child. Portable across
//! Unix systems (Linux is tested by running, FreeBSD compile-checked in CI).

use std::io;

/// `waitpid(pid, flags)` on one specific pid, its status discarded. Retried when a signal
/// interrupts it: an EINTR taken for "gone" would leave a zombie. Never `waitpid(-1)`: no other
/// child of the host process is touched.
pub(crate) fn waitpid(pid: libc::pid_t, flags: libc::c_int) -> io::Result<libc::pid_t> {
    crate::retry_interrupted(|| {
        let mut status = 0;
        // SAFETY: waitpid on a specific pid (never -1: no other child of the host is touched)
        // with a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
    })
}
