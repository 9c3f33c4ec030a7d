//! Why a read or write on a [`Transport`](crate::Transport) did not succeed, and how that
//! prints. A leaf: the TLS connection and the transport both return it.

use std::fmt;
use std::io;

/// Why a read or write did not succeed.
#[derive(Debug)]
pub enum TransportError {
    /// Nothing can be done until the socket is ready again.
    WouldBlock,
    /// A socket error during `op` (`"read"` or `"write"`).
    Io {
        /// The operation, as Go names it in `net.OpError`.
        op: &'static str,
        /// The socket's error.
        error: io::Error,
    },
    /// TLS failed: handshake, certificate verification, an alert from the peer, a corrupt
    /// record. The text is what follows `tls: ` in messages.
    Tls(String),
    /// The server answered the TLS handshake with plain HTTP (its first five bytes were
    /// `HTTP/`): Go's transport says so instead of naming the broken record.
    HttpResponseToHttps,
}

impl TransportError {
    /// An I/O error of `op`, with `WouldBlock` kept apart.
    pub fn io(op: &'static str, error: io::Error) -> TransportError {
        if error.kind() == io::ErrorKind::WouldBlock {
            TransportError::WouldBlock
        } else {
            TransportError::Io { op, error }
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::WouldBlock => f.write_str("operation would block"),
            TransportError::Io { op, error } => {
                write!(f, "{op}: {}", prober_core::os_error_text(error))
            }
            TransportError::Tls(m) => write!(f, "tls: {m}"),
            TransportError::HttpResponseToHttps => {
                f.write_str("http: server gave HTTP response to HTTPS client")
            }
        }
    }
}
