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

/// Why a spawn inside a target's namespaces failed (here: always).
#[derive(Debug)]
pub(crate) struct NsError {
    pub(crate) message: String,
    pub(crate) error: io::Error,
}

/// Namespaces are Linux's: an exec probe naming a process cannot run here.
pub(crate) fn spawn_in(
    req: &super::SpawnRequest<'_>,
    _output: &OwnedFd,
    pid: u32,
) -> Result<libc::pid_t, NsError> {
    Err(NsError {
        message: format!(
            "could not start {:?} in the namespaces of process {pid}: namespaces need Linux",
            req.argv[0]
        ),
        error: io::Error::from(io::ErrorKind::Unsupported),
    })
}
