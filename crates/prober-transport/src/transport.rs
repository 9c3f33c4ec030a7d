//! The byte stream itself: [`Transport`], plain TCP or TLS over it, and Go's texts for its
//! socket errors.

use std::io::{self, Read, Write};

use crate::conn::Conn;
use crate::stream::Peer;
use mio::{Interest, Registry, Token};
use prober_core::Reason;
use prober_io::{Ctx, retry_interrupted};

use crate::error::TransportError;
use crate::quiet::peer_is_quiet;

/// ALPN for HTTP/1.1 probes.
pub const ALPN_HTTP1: &[u8] = b"http/1.1";
/// ALPN for HTTP/2 (gRPC).
pub const ALPN_H2: &[u8] = b"h2";

/// A connected stream: plain TCP or TLS.
#[derive(Debug)]
pub enum Transport {
    /// Plain TCP (`http`, h2c gRPC).
    Plain(Conn),
    /// TLS over TCP (`https`, gRPC with TLS); boxed, the TLS state is large.
    #[cfg(feature = "tls")]
    Tls(Box<crate::tls::TlsConn>),
}

impl Transport {
    /// Reads into `buf`; `Ok(0)` is the end of the stream (for TLS also a close without
    /// `close_notify`, which many servers do and which framing detects where it matters).
    ///
    /// # Errors
    /// [`TransportError::WouldBlock`] when nothing is there yet; a socket or TLS error.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, TransportError> {
        match self {
            Transport::Plain(c) => retry_interrupted(|| c.stream().read(buf))
                .map_err(|e| TransportError::io("read", e)),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.read(buf),
        }
    }

    /// Writes some of `buf`. With TLS the bytes may still be buffered as records: they go out
    /// with later calls (every `read` and `write` sends what is pending first), or [`flush`].
    ///
    /// [`flush`]: Transport::flush
    ///
    /// # Errors
    /// [`TransportError::WouldBlock`] when the socket (or rustls's buffer) is full; a socket
    /// or TLS error.
    pub fn write(&mut self, buf: &[u8]) -> Result<usize, TransportError> {
        match self {
            Transport::Plain(c) => retry_interrupted(|| c.stream().write(buf))
                .map_err(|e| TransportError::io("write", e)),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.write(buf),
        }
    }

    /// Sends buffered TLS records.
    ///
    /// # Errors
    /// [`TransportError::WouldBlock`] when some are left; a socket error.
    pub fn flush(&mut self) -> Result<(), TransportError> {
        match self {
            Transport::Plain(_) => Ok(()),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.flush(),
        }
    }

    /// Updates the registration's interest to what the stream waits for. Call before waiting.
    pub fn sync_interest(&mut self, registry: &Registry) {
        match self {
            Transport::Plain(_) => {}
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.sync_interest(registry),
        }
        let _ = registry;
    }

    /// Whether an idle connection is still fit for another request: the peer has neither
    /// closed it nor sent anything (a non-blocking `recv(MSG_PEEK)` would block), and TLS holds
    /// no unread data or `close_notify`.
    pub fn is_quiet(&mut self) -> bool {
        match self {
            Transport::Plain(c) => peer_is_quiet(c),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.is_quiet(),
        }
    }

    /// [`Transport::is_quiet`] without the `recv(MSG_PEEK)`: whether TLS holds no unread data,
    /// `close_notify` or unsent records (always for plain TCP). For a kept connection whose
    /// socket's readiness the driver's poll reports while it idles, which stands for the peek.
    pub fn holds_nothing(&mut self) -> bool {
        match self {
            Transport::Plain(_) => true,
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.holds_nothing(),
        }
    }

    /// Registers the connection under `token` (a kept connection taken by another run): for
    /// both directions as a new plain connection is, for TLS with the interest
    /// [`Transport::sync_interest`] would give it.
    ///
    /// # Errors
    /// The `epoll_ctl` error.
    pub fn rearm(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match self {
            Transport::Plain(c) => {
                registry.reregister(c.stream(), token, Interest::READABLE | Interest::WRITABLE)
            }
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.rearm(registry, token),
        }
    }

    /// The protocol the server chose by ALPN (`None` for plain TCP, or when the server chose
    /// none): an HTTPS probe that offered `h2` speaks HTTP/2 when this is [`ALPN_H2`].
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        match self {
            Transport::Plain(_) => None,
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.alpn_protocol(),
        }
    }

    /// The TCP connection underneath.
    pub fn conn(&self) -> &Conn {
        match self {
            Transport::Plain(c) => c,
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.conn(),
        }
    }

    /// The TCP connection underneath, mutably (its socket for `local_addr`, `peek`).
    pub fn conn_mut(&mut self) -> &mut Conn {
        match self {
            Transport::Plain(c) => c,
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.conn_mut(),
        }
    }

    /// What the connection is connected to: a TCP address or a Unix socket.
    pub fn peer(&self) -> &Peer {
        self.conn().peer()
    }

    /// The local address as Go prints it (`@` for a Unix socket), for error texts (`None` if
    /// the socket cannot say).
    pub fn local_addr(&mut self) -> Option<String> {
        self.conn_mut().stream().local_addr_text()
    }

    /// Closes or recycles (with the connection's close policy; TLS first sends
    /// `close_notify` when the policy is an orderly close).
    pub fn close(self, cx: &mut Ctx<'_>) {
        match self {
            Transport::Plain(c) => c.close(cx),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.close(cx),
        }
    }
}

impl TransportError {
    /// The reason and Go's text of this error on `transport`: a socket error worded like Go's
    /// `net.OpError` (`read tcp 127.0.0.1:5000->127.0.0.1:80: read: connection reset by
    /// peer`), a TLS failure as `tls: ...` (reason `tls`).
    pub fn describe(&self, transport: &mut Transport) -> (Reason, String) {
        match self {
            TransportError::Io { op, error } => {
                (Reason::from_io(error), op_error_text(transport, op, error))
            }
            TransportError::Tls(_) | TransportError::HttpResponseToHttps => {
                (Reason::Tls, self.to_string())
            }
            TransportError::WouldBlock => (Reason::Io, self.to_string()),
        }
    }
}

/// Go's `net.OpError` text for a socket error on `transport`:
/// `read tcp 127.0.0.1:5000->127.0.0.1:80: read: connection reset by peer`, or
/// `write unix @->/run/app.sock: write: broken pipe`.
pub fn op_error_text(transport: &mut Transport, op: &str, e: &io::Error) -> String {
    let local = transport.local_addr().unwrap_or_else(|| "?".to_string());
    let peer = transport.peer();
    let net = peer.network();
    format!("{op} {net} {local}->{peer}: {op}: {}", prober_core::os_error_text(e))
}
