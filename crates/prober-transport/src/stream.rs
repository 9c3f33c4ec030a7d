//! The socket under a connection ([`Stream`]: TCP, or a Unix domain socket beyond the kubelet)
//! and what it is connected to ([`Peer`]), so that the exchanges above (HTTP, TLS, gRPC,
//! send/expect) read and write either the same way.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use prober_core::UnixSocket;

/// A connected, nonblocking socket.
#[derive(Debug)]
pub enum Stream {
    /// TCP.
    Tcp(TcpStream),
    /// A Unix domain socket (`SOCK_STREAM`).
    Unix(UnixStream),
}

impl Stream {
    /// The socket's descriptor (the key of a kept connection's poll token).
    pub fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Reads without taking the bytes (`recv(MSG_PEEK)`).
    ///
    /// # Errors
    /// The socket's error; `WouldBlock` when nothing is there.
    pub fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.peek(buf),
            Stream::Unix(s) => crate::sys::peek(s, buf),
        }
    }

    /// The local address as Go prints it in `net.OpError`: `127.0.0.1:5000`, or `@` for an
    /// unnamed Unix socket (`write unix @->/run/app.sock: ...`). `None` if the socket cannot
    /// say.
    pub fn local_addr_text(&self) -> Option<String> {
        match self {
            Stream::Tcp(s) => s.local_addr().ok().map(|a| a.to_string()),
            Stream::Unix(_) => Some("@".to_string()),
        }
    }

    /// `SO_ERROR`.
    ///
    /// # Errors
    /// The `getsockopt` error.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Unix(s) => s.take_error(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            // Never SIGPIPE (see `sys::send_nosignal`).
            Stream::Unix(s) => crate::sys::send_nosignal(s, buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, token, interest),
            Stream::Unix(s) => s.register(r, token, interest),
        }
    }

    fn reregister(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, token, interest),
            Stream::Unix(s) => s.reregister(r, token, interest),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
        }
    }
}

/// What a connection is connected to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket.
    Unix(UnixSocket),
}

impl Peer {
    /// The network as Go names it in messages: `tcp` or `unix`.
    pub fn network(&self) -> &'static str {
        match self {
            Peer::Tcp(_) => "tcp",
            Peer::Unix(_) => "unix",
        }
    }

    /// The TCP address, `None` for a Unix socket.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            Peer::Tcp(a) => Some(*a),
            Peer::Unix(_) => None,
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Peer::Tcp(a) => write!(f, "{a}"),
            Peer::Unix(u) => write!(f, "{u}"),
        }
    }
}
