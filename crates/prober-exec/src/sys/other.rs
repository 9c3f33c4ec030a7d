//! Stand-ins for Linux's own calls on the other Unix systems, which are compile-checked only.

use std::io;
use std::os::fd::OwnedFd;

/// No pidfds here: the probe falls back to sweeping (`waitid` at a short interval), as on a
/// Linux kernel without them.
pub(crate) fn pidfd_open(_pid: libc::pid_t) -> io::Result<OwnedFd> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "exec probes need pidfd_open (Linux 5.3 or later)",
    ))
}

/// No single call: the caller marks the descriptors one by one.
pub(crate) fn cloexec_range(_first: libc::c_int) -> bool {
    false
}

/// Real-time signals are not named here.
pub(crate) fn realtime_signal_name(_signo: i32) -> Option<String> {
    None
}
