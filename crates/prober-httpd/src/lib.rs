//! Small HTTP/1.1 endpoints (`/metrics`, `/readyz`, later `/probe`) served to many clients at
//! once, on one thread of their own, so that no client can silence them.
//!
//! The server is a [`mio`] poll loop, like the rest of the workspace: every connection is a
//! small state machine (read a request head, answer, keep the connection or close it) driven
//! by readiness events, so a client that sends nothing, or a byte a second, holds one slot and
//! a few kilobytes, never the loop. What bounds it:
//!
//! - a bound on connections ([`Limits::max_connections`]): when it is reached, the connection
//!   that has waited longest for its request head is dropped to make room for the new one (a
//!   scrape sends its request at once, so it is never the one waiting longest); only when every
//!   connection is busy answering is a new one refused;
//! - a bound on requests waiting for a deferred answer ([`Limits::max_deferred`]): the
//!   connections it leaves ([`Limits::reserved_connections`]) keep `/metrics` and health
//!   checks answerable whatever the deferred routes are doing; a deferred request whose client
//!   goes is cancelled ([`CancelSignal`]), so that the work behind it stops too;
//! - per-connection deadlines: a request head must arrive whole within
//!   [`Limits::header_timeout`] of its first byte (of the connection, for the first request,
//!   TLS handshake included), an answer must be taken within [`Limits::write_timeout`], a kept
//!   connection may idle for [`Limits::idle_timeout`];
//! - bounded memory per connection: at most [`Limits::max_request_line`] +
//!   [`Limits::max_header_bytes`] of request is buffered; a longer request line is answered
//!   414, longer headers 431; request bodies are never read (the connection is closed after
//!   the answer); empty lines before a request line are skipped (RFC 9112 section 2.2) and
//!   count against the same bound; a request whose body framing a proxy could read otherwise
//!   (`Transfer-Encoding` with `Content-Length`, differing `Content-Length` values) is answered
//!   400 and its connection closed, so that no body is ever taken for a request.
//!
//! A panic never leaves the process alive with dead endpoints. Handlers run under
//! `catch_unwind` (a panicking handler is answered 500), and so does each connection's whole
//! step (reading, TLS, parsing the head): a panic there closes that connection and the server
//! goes on. Should the server's thread end any other way than by its [`Running`] being dropped
//! (a panic outside a connection, the poller failing), the process is aborted with a message
//! saying so, for a supervisor to restart it.
//!
//! Endpoints can be protected as Prometheus exporters are, with a web configuration file in
//! the exporter-toolkit's format ([`WebConfig`]): TLS (certificates re-read when their files
//! change), client certificates (and the SANs they must carry), basic authentication with
//! bcrypt hashes, extra headers, and a rate limit over every request (a token bucket checked
//! before authentication; an empty one answers 429).
//! [`exposition`] negotiates the Prometheus text formats.
//!
//! Sockets are close-on-exec (mio and the standard library open them so); the server installs
//! no signal handler and touches no signal mask.

mod abort;
mod auth;
mod client_sans;
mod companion;
mod conn;
pub mod exposition;
mod head;
mod limits;
mod pending;
mod rate_limit;
mod reply;
mod request;
mod server;
mod tls;
mod web_config;

pub use companion::Companion;
pub use limits::Limits;
pub use pending::CancelSignal;
pub use reply::{DeferredHandler, Reply};
pub use request::{Handler, Request, Response};
pub use server::{Running, Server};
pub use web_config::WebConfig;

/// The server's parsers of what clients and operators send, without I/O, for the fuzz targets
/// (fuzz/fuzz_targets/httpd_*.rs and web_config.rs). Not part of the API: may change at any
/// time.
#[doc(hidden)]
pub mod fuzz {
    pub use crate::auth::basic;
    pub use crate::head::{Found, Parsed, capacity, find, parse};

    /// Parses the text of a web config whose relative file names are relative to `dir`.
    ///
    /// # Errors
    ///
    /// As [`crate::WebConfig::load`], without the path.
    pub fn web_config(text: &str, dir: &std::path::Path) -> Result<crate::WebConfig, String> {
        crate::WebConfig::parse(text, dir)
    }
}

// The README's example is compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
