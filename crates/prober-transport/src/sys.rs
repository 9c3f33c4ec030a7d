//! prober-tcp's system calls, behind one door. Linux is the platform tested by running; other
//! Unix systems are compile-checked (FreeBSD in CI) and fall back where a call is Linux's own.

use std::io;

use mio::net::TcpStream;
use prober_io::os_result;

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
    os_result(unsafe { libc::connect(stream.as_raw_fd(), &addr, len) }).map(drop)
}

/// See the Linux version: not available here.
#[cfg(not(target_os = "linux"))]
pub(crate) fn disconnect(_stream: &TcpStream) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Sets `IP_BIND_ADDRESS_NO_PORT` on a socket about to be bound to a source address with port
/// 0: the kernel then picks the local port at `connect`, by the whole four-tuple, instead of
/// reserving one at `bind` for that address alone. Without it every probe bound to one source
/// address holds a port of the ephemeral range exclusively, whatever it connects to, and ~28,000
/// of them in flight exhaust the range (`bind: address already in use`). Linux 4.2 and later,
/// IPv4 and IPv6 sockets alike.
#[cfg(target_os = "linux")]
pub(crate) fn bind_address_no_port(socket: &socket2::Socket) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the descriptor is open for the whole call (borrowed from `socket`), and `on` is an
    // initialised c_int of `len` bytes that the kernel only reads.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&on as *const libc::c_int).cast(),
            len,
        )
    };
    os_result(rc).map(drop)
}

/// See the Linux version: not available here; the port is reserved at `bind`.
#[cfg(not(target_os = "linux"))]
pub(crate) fn bind_address_no_port(_socket: &socket2::Socket) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// `recv(MSG_PEEK)` on a Unix stream (std's `UnixStream::peek` is not stable).
pub(crate) fn peek(stream: &mio::net::UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the whole call (borrowed from `stream`), and `buf` is
    // valid for writes of `buf.len()` bytes.
    let n = unsafe {
        libc::recv(stream.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK)
    };
    os_result(n).map(|n| n as usize)
}

/// Starts connecting a new nonblocking, close-on-exec Unix stream socket to `socket` (mio
/// creates it with `SOCK_NONBLOCK | SOCK_CLOEXEC`). An abstract name is Linux's own: elsewhere
/// it is `Unsupported`.
pub(crate) fn connect_unix(socket: &prober_core::UnixSocket) -> io::Result<mio::net::UnixStream> {
    match socket {
        prober_core::UnixSocket::Path(p) => mio::net::UnixStream::connect(p),
        #[cfg(any(target_os = "linux", target_os = "android"))]
        prober_core::UnixSocket::Abstract(name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            mio::net::UnixStream::connect_addr(&addr)
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        prober_core::UnixSocket::Abstract(_) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "abstract Unix sockets exist on Linux only",
        )),
    }
}

/// Writes to a Unix stream with `send(MSG_NOSIGNAL)`: a plain `write` to a socket whose peer
/// has gone raises SIGPIPE, which kills a C host with the default disposition (std's TCP
/// writes already pass the flag; its Unix ones do not). The library installs no handler and
/// changes no mask, so the flag is the only way.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
pub(crate) fn send_nosignal(stream: &mio::net::UnixStream, buf: &[u8]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the whole call (borrowed from `stream`), and `buf` is
    // valid for reads of `buf.len()` bytes.
    let n = unsafe {
        libc::send(stream.as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL)
    };
    os_result(n).map(|n| n as usize)
}

/// Elsewhere (no `MSG_NOSIGNAL`): a plain write; such systems set `SO_NOSIGPIPE` instead,
/// which is not done here (compile-checked only).
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
pub(crate) fn send_nosignal(stream: &mio::net::UnixStream, buf: &[u8]) -> io::Result<usize> {
    use std::io::Write;
    (&*stream).write(buf)
}
