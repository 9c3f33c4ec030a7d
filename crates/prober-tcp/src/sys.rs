//! prober-tcp's system calls, behind one door. Linux is the platform tested by running; other
//! Unix systems are compile-checked (FreeBSD in CI) and fall back where a call is Linux's own.

use std::io;

use mio::net::TcpStream;

/// Ends the connection on `stream` the way `close` with SO_LINGER 0 would (RST to the peer,
/// queues purged, local port released) but keeps the socket for another `connect`:
/// `connect(AF_UNSPEC)` is `tcp_disconnect` in Linux.
///
/// Elsewhere a TCP socket cannot be disconnected this way: the call says `Unsupported`, and the
/// caller closes the socket instead of pooling it.
#[cfg(target_os = "linux")]
pub(crate) fn disconnect(stream: &TcpStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let addr = libc::sockaddr { sa_family: libc::AF_UNSPEC as libc::sa_family_t, sa_data: [0; 14] };
    let len = std::mem::size_of::<libc::sockaddr>() as libc::socklen_t;
    // SAFETY: the descriptor is open for the whole call (borrowed from `stream`), and `addr` is a
    // valid, initialised sockaddr of `len` bytes that the kernel only reads.
    let rc = unsafe { libc::connect(stream.as_raw_fd(), &addr, len) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// See the Linux version: not available here.
#[cfg(not(target_os = "linux"))]
pub(crate) fn disconnect(_stream: &TcpStream) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}
