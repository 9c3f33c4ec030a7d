//! The byte stream under an exchange: a plain TCP (or Unix socket) connection, or TLS over one
//! (module [`tls`], feature `tls`, on by default: rustls with the ring provider).
//!
//! Its pieces, bottom up: [`Connector`] resolves a name and races its addresses without
//! blocking (Happy Eyeballs, address family, source address, network namespace) and hands over
//! a connected [`Conn`] over a [`Stream`]; [`dial`] adds the TLS files and handshake on top and
//! yields a [`Transport`]. The probes own what is said over it: HTTP (`prober-http`), gRPC
//! (`prober-grpc`), DNS over TCP and TLS (`prober-dns`) and the TCP probe with its exchange,
//! plain or with TLS (`prober-tcp`).
//!
//! Both never block: an operation that cannot make progress returns
//! [`TransportError::WouldBlock`] and the owner waits for readiness on the connection's token.
//! [`Transport::sync_interest`] keeps that token's interest in line with what TLS needs next
//! (plain connections stay registered for both directions). The HTTP/1.1 probe
//! (`prober-http`) and the gRPC probe (`prober-grpc`) both run over it; [`cert`] reads the
//! expiry of the certificate a TLS server sent. Errors print as Go's `net.OpError` does
//! ([`op_error_text`]), since both probes quote them in the kubelet's words.

#![warn(missing_docs)]

pub mod cert;
mod conn;
mod connect;
pub mod dial;
mod endpoint;
mod error;
pub mod keep;
mod quiet;
mod sessions;
mod socket;
mod stream;
mod sys;
#[cfg(feature = "tls")]
pub mod tls;
mod transport;

pub use conn::Conn;
pub use connect::{ConnectError, ConnectStep, Connector};
pub use error::TransportError;
pub use sessions::TlsSessions;
pub use stream::{Peer, Stream};
pub use transport::{ALPN_H2, ALPN_HTTP1, Transport, op_error_text};

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
