//! The bounds of a server (a leaf: it names nothing else of the crate).

use std::time::Duration;

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
    /// How long a deferred route ([`crate::Server::route_deferred`]) may take to answer before its
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
