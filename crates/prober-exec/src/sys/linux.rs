//! Linux's own calls: pidfds (5.3), `close_range` (5.11), real-time signals.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use prober_io::os_result;

/// `pidfd_open(pid, 0)`: a descriptor that turns readable when `pid` exits. Always
/// close-on-exec.
pub(crate) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and a flags word by value and returns a new descriptor or
    // -1 with errno set; no memory is passed.
    let fd = os_result(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as libc::c_uint) })?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `close_range(first, ~0, CLOSE_RANGE_CLOEXEC)`: every descriptor from `first` up marked
/// close-on-exec in one call. `false` on older kernels (ENOSYS, or EINVAL for the flag).
/// Async-signal-safe.
pub(crate) fn cloexec_range(first: libc::c_int) -> bool {
    // SAFETY: close_range takes three integers and touches no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    rc == 0
}

/// `SIGRTMIN`, `SIGRTMIN+3`, ...: a real-time signal's name as Go prints it.
pub(crate) fn realtime_signal_name(signo: i32) -> Option<String> {
    let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    if signo == min {
        Some("SIGRTMIN".to_string())
    } else if (min..=max).contains(&signo) {
        Some(format!("SIGRTMIN+{}", signo - min))
    } else {
        None
    }
}
