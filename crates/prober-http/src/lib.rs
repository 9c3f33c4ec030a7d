//! HTTP/1.1 GET probes with the kubelet's semantics (`pkg/probe/http`), poll-driven.
//!
//! The protocol logic is sans-I/O and unit-tested without sockets:
//! - [`request`]: the request bytes (headers as Go writes the kubelet's request);
//! - [`response`]: the response head (httparse) and the body framing it implies;
//! - [`body`]: Content-Length, chunked and close-delimited decoding into a bounded sink;
//! - [`cookies`]: the cookie jar of one run, when the spec keeps cookies (Go's `cookiejar`);
//! - [`redirect`]: which 3xx responses are followed (policy, the limit: 9 by default, as the
//!   kubelet, `Host` carry-over);
//! - [`verdict`]: the kubelet's `DoHTTPProbe` mapping from status and body to a result;
//! - [`oauth2`]: the OAuth 2 token request and the reading of its answer, for
//!   [`OAuth2Probe`], which runs the token exchange and then the request with the token.
//!
//! [`HttpProbe`] is the thin mio adapter around them, a [`prober_io::Machine`], over a
//! [`prober_transport::Transport`]: plain TCP, or TLS (feature `tls`, which turns on
//! `prober-transport`'s). An [`HttpPlan`] is what all the runs of one spec share (the spec and
//! the first request's bytes, made once); the engine keeps one per periodic worker.
//!
//! HTTP/2 (`probe/h2.rs`): on `https://` TLS offers ALPN `h2` and `http/1.1`
//! ([`prober_core::HttpVersion::Auto`], as the kubelet's transport), and an `http://` probe with
//! [`prober_core::HttpVersion::H2c`] speaks h2c with prior knowledge; the exchange is
//! prober-h2's client, with the same redirect, body-limit and verdict logic as HTTP/1.1.
//!
//! # Semantics in short
//!
//! - One deadline (`timeout` from `start`) covers resolution, connect, every redirect hop, the
//!   head and the body. A timeout is a Failure with reason Timeout and Go's wording:
//!   `Get "<url>": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`
//!   before the final response head, `... (Client.Timeout or context cancellation while reading
//!   body)` after it.
//! - 200..=299: Success, output = body. A final 300..=399: Warning, reason Redirect, message
//!   `Probe terminated redirects, Response body: <body>`. Else Failure, reason Status, message
//!   `HTTP probe failed with statuscode: N`. `http_status` is the last status received.
//! - At most `output_limit` body bytes are read and kept; then the connection is closed and the
//!   status decides (see [`body`] for `truncated`). A body that ends early (EOF before its
//!   declared end) is a Failure with reason BrokenBody (not a dropped error, kubernetes#122591);
//!   broken chunked framing is reason Protocol. On these failures `output` holds the body bytes
//!   read so far.
//! - Errors before a usable response are `Get "<url>": <detail>` Failures: connect errors
//!   (`dial tcp 127.0.0.1:1: connect: connection refused`, reason Refused/Unreachable/Dns...),
//!   socket errors (`read tcp a->b: read: connection reset by peer`, reason Reset), a connection
//!   closed before any response byte (`EOF`, reason Protocol) or inside the head
//!   (`unexpected EOF`, reason Protocol), a malformed head (Go's words: `net/http: HTTP/1.x transport connection broken: ...`,
//!   reason Protocol), a head over 64 KiB (`net/http: server response headers exceeded 65536
//!   bytes; aborted`, Protocol).
//! - `https://` (also as a redirect target, within the redirect policy) runs over TLS
//!   (`prober_transport::tls`, feature `tls`, on by default) with the spec's [`prober_core::TlsOptions`]: by
//!   default no certificate verification, as the kubelet. The handshake is part of the one
//!   deadline (a stalled handshake is the "awaiting headers" timeout). TLS failures are
//!   Failures with reason Tls: `Get "<url>": tls: <rustls error>`, e.g.
//!   `tls: invalid peer certificate: UnknownIssuer` or `tls: received fatal alert:
//!   CertificateRequired`. CA, certificate or key files are loaded off the poll thread within
//!   the deadline (cached while unchanged; regular files of at most 1 MiB); files that cannot
//!   be used make the run Unknown (reason Tls, `TLS setup failed: cannot read CA file "/x": no
//!   such file or directory`). `timings.tls` is when the last hop's handshake ended and `cert_not_after` the
//!   expiry of the certificate that hop's server sent; `tls` that handshake's version, cipher
//!   suite and certificates ([`prober_core::TlsInfo`]). ALPN offers `h2` and `http/1.1` with
//!   [`prober_core::HttpVersion::Auto`] (the default), `http/1.1` only with
//!   [`prober_core::HttpVersion::Http1`] (and with [`prober_core::HttpVersion::H2c`] on a
//!   redirect to `https://`).
//! - `http_version` is the final response's (HTTP/1.0, HTTP/1.1 or HTTP/2, whatever the earlier
//!   hops spoke); `http_phases` sums each phase's duration over all hops
//!   ([`prober_core::HttpPhases`]).
//! - Without the `tls` feature, `https://` is Unknown, reason Unsupported,
//!   `TLS not built in: cannot probe https://...`.
//! - Proxy environment variables are never read; the request goes straight to the URL's host.

#![warn(missing_docs)]

pub mod body;
pub mod coding;
pub mod cookies;
pub mod oauth2;
mod oauth2_probe;
mod probe;
pub mod proxy;
pub mod redirect;
pub mod request;
pub mod response;
pub mod verdict;

pub use oauth2_probe::OAuth2Probe;
pub use probe::{HttpPlan, HttpProbe};

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
