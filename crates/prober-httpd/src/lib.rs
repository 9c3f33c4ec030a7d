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
//! change), client certificates, basic authentication with bcrypt hashes, extra headers.
//! [`exposition`] negotiates the Prometheus text formats.
//!
//! Sockets are close-on-exec (mio and the standard library open them so); the server installs
//! no signal handler and touches no signal mask.

mod auth;
mod conn;
pub mod exposition;
mod head;
mod pending;
mod server;
mod tls;
mod web_config;

use std::time::Duration;

pub use pending::CancelSignal;
pub use server::{Reply, Running, Server};
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

/// The bounds of a server. The defaults suit a metrics or probe endpoint scraped by a few
/// Prometheus servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once (512, as Prometheus' own `--web.max-connections`).
    pub max_connections: usize,
    /// How long a request head may take to arrive, from its first byte (10 s).
    pub header_timeout: Duration,
    /// How long a kept connection may wait for its next request (90 s, as Go's HTTP client
    /// keeps idle connections: a scraper's kept connection outlives a scrape interval).
    pub idle_timeout: Duration,
    /// How long the client may take to read an answer (10 s).
    pub write_timeout: Duration,
    /// The longest request line, in bytes; longer ones are answered 414 (8 KiB).
    pub max_request_line: usize,
    /// The most header bytes after the request line; more are answered 431 (8 KiB).
    pub max_header_bytes: usize,
    /// How long a deferred route ([`Server::route_deferred`]) may take to answer before its
    /// connection is closed (125 s: blackbox_exporter's scrape timeout when Prometheus sends
    /// none, 120 s, with a margin).
    pub deferred_timeout: Duration,
    /// Connections kept for routes that answer at once (`/metrics`, health checks): requests
    /// of deferred routes may hold at most [`Limits::max_deferred`] connections, so that
    /// clients that wait on slow answers (or hang up and leave them running) can never take
    /// every slot. Further deferred requests are answered 503 at once (64).
    pub reserved_connections: usize,
}

impl Limits {
    /// How many requests may wait for a deferred answer at once: [`Limits::max_connections`]
    /// less [`Limits::reserved_connections`], but never less than half of the connections
    /// (448 by default).
    pub fn max_deferred(&self) -> usize {
        self.max_connections - self.reserved_connections.min(self.max_connections / 2)
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            write_timeout: Duration::from_secs(10),
            max_request_line: 8 << 10,
            max_header_bytes: 8 << 10,
            deferred_timeout: Duration::from_secs(125),
            reserved_connections: 64,
        }
    }
}

/// A request as a handler sees it. Its `Debug` prints the values of `Authorization`,
/// `Proxy-Authorization` and `Cookie` as `<secret>` (a client's credentials).
#[derive(Clone)]
pub struct Request {
    /// `GET` or `HEAD` (the server answers other methods 405 itself, but on a route that
    /// takes every method: [`Server::route_deferred_any_method`]).
    pub method: String,
    /// The path, still percent-encoded, without the query.
    pub path: String,
    /// What follows `?`, still percent-encoded ("" when there is none).
    pub query: String,
    /// The headers, in their order, names as sent.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("headers", &RedactedHeaders(&self.headers))
            .finish()
    }
}

/// Header fields as `Debug` prints them, a client's credentials redacted.
struct RedactedHeaders<'a>(&'a [(String, String)]);

impl std::fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const CREDENTIALS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];
        let secret = |n: &str| CREDENTIALS.iter().any(|c| n.eq_ignore_ascii_case(c));
        f.debug_list()
            .entries(self.0.iter().map(|(n, v)| (n, if secret(n) { "<secret>" } else { v })))
            .finish()
    }
}

impl Request {
    /// The value of the first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An answer: status, content type, body, and any further headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: String,
    /// The body (left out for `HEAD`; its length is sent either way).
    pub body: Vec<u8>,
    /// Further headers.
    pub headers: Vec<(String, String)>,
}

impl Response {
    /// An answer with `body` of `content_type`.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: content_type.to_string(),
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A plain text answer (`text/plain; charset=utf-8`).
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// The same answer with a further header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// What answers the requests of a route. It runs on the server's thread: it must be quick
/// (encode what is there, never wait for something).
pub type Handler = Box<dyn Fn(&Request) -> Response + Send>;

/// What answers the requests of a deferred route: it runs on the server's thread and must
/// return at once, handing the [`Reply`] to whatever produces the answer later (another
/// thread, an engine's event).
pub type DeferredHandler = Box<dyn Fn(&Request, Reply) + Send>;

// The README's example is compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
