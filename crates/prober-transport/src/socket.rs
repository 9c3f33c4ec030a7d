//! Making and arming the sockets of a connection attempt: a new nonblocking, close-on-exec
//! socket, or one from the driver's pool, with the close policy and options applied and its
//! `connect` started.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mio::net::TcpStream;
use prober_core::ClosePolicy;
use socket2::{Domain, Protocol, Socket, Type};

/// Whether `port` is one the kernel may hand out as a local ephemeral port: only then can a
/// connect to it end up connected to itself. Read once from /proc; the usual default when
/// that fails.
pub(crate) fn in_ephemeral_range(port: u16) -> bool {
    static RANGE: std::sync::OnceLock<(u16, u16)> = std::sync::OnceLock::new();
    let (low, high) = *RANGE.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|s| {
                let mut it = s.split_whitespace().map(|p| p.parse::<u16>().ok());
                Some((it.next()??, it.next()??))
            })
            .unwrap_or((32768, 60999))
    });
    (low..=high).contains(&port)
}

/// A new nonblocking, close-on-exec socket with its close policy applied, bound to `source`
/// when one is given, connecting to `addr`.
/// An error comes with the step that failed, for the message ("cannot create socket: too many
/// open files").
pub(crate) fn open(
    addr: SocketAddr,
    close: ClosePolicy,
    nodelay: bool,
    source: Option<IpAddr>,
) -> Result<TcpStream, (&'static str, io::Error)> {
    // socket2 creates sockets with SOCK_CLOEXEC; `nonblocking()` adds SOCK_NONBLOCK atomically.
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM.nonblocking(), Some(Protocol::TCP))
            .map_err(|e| ("cannot create socket", e))?;
    arm(socket, addr, close, nodelay, source)
}

/// Applies the close policy and options to a new nonblocking socket, binds it to `source` (port
/// 0: the system's choice) when one is given, and starts connecting it to `addr`. The socket
/// may have been made in another network namespace: the bind then looks for `source` there.
pub(crate) fn arm(
    socket: Socket,
    addr: SocketAddr,
    close: ClosePolicy,
    nodelay: bool,
    source: Option<IpAddr>,
) -> Result<TcpStream, (&'static str, io::Error)> {
    if close == ClosePolicy::Reset {
        // SO_LINGER {on, 0}: close() sends RST and frees the port at once, leaving no TIME_WAIT.
        socket.set_linger(Some(Duration::ZERO)).map_err(|e| ("setsockopt", e))?;
    }
    if nodelay {
        socket.set_tcp_nodelay(true).map_err(|e| ("setsockopt", e))?;
    }
    if let Some(ip) = source {
        // Only an optimisation (the port chosen at connect, per four-tuple): a kernel without
        // it still binds, reserving the port at bind.
        let _ = crate::sys::bind_address_no_port(&socket);
        socket.bind(&SocketAddr::new(ip, 0).into()).map_err(|e| ("bind", e))?;
    }
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if started(&e) => {}
        Err(e) => return Err(("connect", e)),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// Whether a failed `connect` on a nonblocking socket has in fact started: EINPROGRESS, or
/// EINTR, after which the connection goes on in the background (POSIX; a second `connect`
/// would fail with EALREADY). Either way the socket turns writable once it is decided.
pub(crate) fn started(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINPROGRESS | libc::EINTR))
}

/// Starts connecting a socket taken from the pool (disconnected, SO_LINGER 0 already set).
pub(crate) fn reconnect(stream: TcpStream, addr: SocketAddr) -> io::Result<TcpStream> {
    match socket2::SockRef::from(&stream).connect(&addr.into()) {
        Ok(()) => Ok(stream),
        Err(e) if started(&e) => Ok(stream),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::ClosePolicy;

    /// A socket bound to a source address gets its local port at connect, not at bind: the
    /// bound address reads port 0 until then (IP_BIND_ADDRESS_NO_PORT), so probes from one
    /// address share the ephemeral range by four-tuple. After connecting it has a port, from
    /// that address.
    #[test]
    fn source_bind_leaves_the_port_to_connect() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap();
        let source: IpAddr = "127.0.0.2".parse().unwrap();
        for v6 in [false, true] {
            let (domain, bind_to) = if v6 {
                (Domain::IPV6, SocketAddr::new("::1".parse().unwrap(), 0))
            } else {
                (Domain::IPV4, SocketAddr::new(source, 0))
            };
            let socket = Socket::new(domain, Type::STREAM, Some(Protocol::TCP)).unwrap();
            crate::sys::bind_address_no_port(&socket).unwrap();
            socket.bind(&bind_to.into()).unwrap();
            let bound = socket.local_addr().unwrap().as_socket().unwrap();
            assert_eq!((bound.ip(), bound.port()), (bind_to.ip(), 0), "v6: {v6}");
        }
        let stream =
            open(target, ClosePolicy::Reset, false, Some(source)).map_err(|(_, e)| e).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), source);
        assert_ne!(peer.port(), 0);
        drop(stream);
    }
}
