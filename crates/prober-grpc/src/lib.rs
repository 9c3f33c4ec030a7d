//! gRPC health probes (`grpc.health.v1.Health/Check`) with the kubelet's semantics
//! (`pkg/probe/grpc`), poll-driven.
//!
//! The protocol logic is sans-I/O and unit-tested without sockets:
//! - HTTP/2 and HPACK are the `prober_h2` crate's (re-exported here as [`h2`], its client, and
//!   [`hpack`]), shared with every probe that speaks HTTP/2;
//! - [`health`]: the request and response messages (hand-coded protobuf), gRPC message
//!   framing, status from trailers or a trailers-only response, and the kubelet's wording.
//!
//! [`GrpcProbe`] is the thin mio adapter around them, a [`prober_io::Machine`]. It runs over
//! `prober_transport`, so TLS (feature `tls`, on by default) is the same rustls client as
//! HTTPS, with the same [`prober_core::TlsOptions`] and ALPN `h2`.
//!
//! # Semantics in short
//!
//! - Plaintext HTTP/2 with prior knowledge (h2c) unless the spec has TLS options. Request:
//!   `POST /grpc.health.v1.Health/Check` with `content-type: application/grpc`,
//!   `user-agent: kube-probe/1.37`, `te: trailers`, `grpc-timeout` (the time left), and
//!   `HealthCheckRequest{service}`.
//! - One deadline covers resolution, connect, the TLS handshake, the server's SETTINGS (the
//!   connection is established when they arrive, as for grpc-go) and the RPC.
//! - Results and messages as the kubelet (<https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/grpc/grpc.go>):
//!   - `SERVING`: Success, output `service healthy`;
//!   - another status: Failure (reason Status) `service unhealthy (responded with "NOT_SERVING")`;
//!   - gRPC status Unimplemented: Failure `error: this server does not implement the grpc health
//!     protocol (grpc.health.v1.Health): <message>`;
//!   - gRPC status DeadlineExceeded, or our deadline during the RPC: Failure (reason Timeout)
//!     `timeout: health rpc did not complete within 1s`;
//!   - our deadline before the connection is established: Failure (reason Timeout)
//!     `timeout: failed to connect service "127.0.0.1:50051" within 1s: context deadline exceeded`;
//!   - a connection that fails (refused, unreachable, DNS, TLS, a server that does not speak
//!     HTTP/2, closed before its SETTINGS): Failure at once, `error: failed to connect service at
//!     "127.0.0.1:50051": <detail>`, reason from the cause (Refused, Tls, Protocol, ...). The
//!     kubelet's blocking dial retries these until its deadline and then reports the timeout
//!     message above; failing fast with the cause is a deliberate difference (docs/semantics.md);
//!   - any other RPC error: Failure `error: health rpc probe failed: rpc error: code = NotFound
//!     desc = unknown service` (grpc-go's wording), reason Status for a status the server sent,
//!     else Protocol, Reset, ...
//! - Keep-alive (`GrpcSpec::keep_alive`, beyond the kubelet): runs reuse the HTTP/2 connection
//!   and its client, kept by the engine between runs, one stream per check (see the `probe`
//!   module and docs/semantics.md).
//! - An empty host is the local machine, as the kubelet's `":PORT"`: the unspecified address
//!   is dialed, messages name `":PORT"`, `:authority` is `localhost:PORT`.
//! - `http_status` is the response's `:status`; `timings.first_byte` the arrival of the
//!   response head; `timings.tls`, `cert_not_after` and `tls` as for HTTPS; `grpc` the RPC's
//!   status code (grpc-go's: Unavailable when the connection failed, DeadlineExceeded at the
//!   deadline) and the health response's serving status.
//! - Without the `tls` feature, a TLS spec is Unknown, reason Unsupported.

#![warn(missing_docs)]

pub mod health;
mod probe;
mod request;

/// The HTTP/2 client the probe drives (`prober_h2::client`, under its former path).
pub use prober_h2::client as h2;
pub use prober_h2::hpack;

pub use probe::{GrpcPlan, GrpcProbe};

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
