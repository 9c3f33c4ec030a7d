//! libprober for Rust: kubelet-grade health probes (TCP, HTTP(S), exec, gRPC health) and the
//! poll-driven engine that runs thousands of them on one thread.
//!
//! This crate is the one to depend on: it re-exports the specs and outcomes
//! (`prober-core`) and the engine (`prober-engine`), and adds the blocking [`check`]. The
//! crates behind it (one per probe kind, and `prober-io`, the contract their state machines
//! follow) are published for whoever writes a probe of their own.
//!
//! One-shot, blocking: [`check`] runs one probe on the calling thread.
//! ```
//! use std::net::TcpListener;
//! use prober::{ProbeResult, ProbeSpec, Reason};
//!
//! // A server to probe: a listener on a free loopback port.
//! let listener = TcpListener::bind("127.0.0.1:0")?;
//! let port = listener.local_addr()?.port();
//!
//! let spec = ProbeSpec::tcp("127.0.0.1", port.into())?;
//! let outcome = prober::check(&spec);
//! assert_eq!(outcome.result, ProbeResult::Success, "{}", outcome.message);
//!
//! // Once nothing listens there, the same probe fails, and says why.
//! drop(listener);
//! let outcome = prober::check(&spec);
//! assert_eq!((outcome.result, outcome.reason), (ProbeResult::Failure, Reason::Refused));
//! println!("{}: {}", outcome.result, outcome.message); // failure: dial tcp ...: connection refused
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Periodic, by the kubelet's rules (thresholds, startup gating, liveness hold): an [`Engine`]
//! with a target and its probes publishes [`Event`]s when a value changes.
//! ```
//! use std::net::TcpListener;
//! use std::time::{Duration, Instant};
//! use prober::{Engine, Event, ProbeResult, ProbeSpec, Role, Schedule};
//!
//! let listener = TcpListener::bind("127.0.0.1:0")?;
//! let port = listener.local_addr()?.port();
//!
//! let mut engine = Engine::new()?;
//! let target = engine.add_target();
//! let spec = ProbeSpec::tcp("127.0.0.1", port.into())?;
//! let schedule = Schedule {
//!     period: Duration::from_millis(50),
//!     failure_threshold: 2,
//!     ..Schedule::default()
//! };
//! engine.set_probe(target, Role::Liveness, spec, schedule)?;
//!
//! // Waits until liveness publishes `want`; returns every value published on the way.
//! let mut until = |want: ProbeResult| -> std::io::Result<Vec<ProbeResult>> {
//!     let mut seen = Vec::new();
//!     let give_up = Instant::now() + Duration::from_secs(30);
//!     while seen.last() != Some(&want) && Instant::now() < give_up {
//!         engine.wait(Some(Duration::from_millis(100)))?;
//!         while let Some(event) = engine.next_event() {
//!             if let Event::State { role: Role::Liveness, result, .. } = event {
//!                 seen.push(result);
//!             }
//!         }
//!     }
//!     Ok(seen)
//! };
//!
//! // Liveness starts as Success.
//! assert_eq!(until(ProbeResult::Success)?, [ProbeResult::Success]);
//! // The server goes away: after two failed runs in a row, liveness publishes Failure.
//! drop(listener);
//! assert_eq!(until(ProbeResult::Failure)?, [ProbeResult::Failure]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

/// Beyond the kubelet: decoding a body's content coding ([`ProbeSpec::set_compression`]).
pub use prober_core::Compression;
/// The local address a probe's sockets are bound to ([`ProbeSpec::set_source_address`]).
pub use prober_core::parse_source_address;
/// Beyond the kubelet: CEL expressions over a JSON body ([`ProbeSpec::set_expect_body_cel`]).
pub use prober_core::{
    BodyCel, CelMode, MAX_CEL_BODY_LEN, MAX_CEL_CONCAT_BYTES, MAX_CEL_LEN, MAX_CEL_STEPS,
};
/// Facts a run learns beyond its verdict ([`Outcome::tls`], [`Outcome::http_version`],
/// [`Outcome::http_phases`], [`Outcome::grpc`]).
pub use prober_core::{CertInfo, GrpcFacts, HttpPhases, HttpResponseVersion, TlsInfo};
pub use prober_core::{
    ClosePolicy, ConnectOptions, DEFAULT_MAX_REDIRECTS, DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT, ExecSpec, GrpcSpec, HttpSpec, HttpVersion, MAX_MAX_REDIRECTS, Outcome,
    ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy, Role, Schedule, Scheme, SpecError,
    TcpSpec, Timings, TlsOptions, TlsVerify, TlsVersion, Url, UrlError, percent_decode,
};
/// ICMP echo probes ([`ProbeSpec::icmp`], [`ProbeSpec::icmp_with`]) and what a run learns
/// ([`Outcome::icmp`]).
pub use prober_core::{
    DEFAULT_PAYLOAD_SIZE, EchoStats, IcmpError, IcmpFacts, IcmpSocket, IcmpSocketKind, IcmpSpec,
    MAX_PACKETS, MAX_PAYLOAD_SIZE, MIN_INTERVAL,
};
/// DNS probes ([`ProbeSpec::dns`]; beyond the kubelet, as blackbox_exporter's dns prober):
/// the spec on [`ProbeKind::Dns`], the facts on [`Outcome::dns`]. They run with this crate's
/// feature `dns`; without it they end Unknown, reason `unsupported`.
pub use prober_core::{DnsFacts, DnsPhases, DnsRrChecks, DnsSpec, DnsTransport};
/// Beyond the kubelet: expected status sets and regular expressions for bodies and replies.
pub use prober_core::{
    Expansion, MAX_BODY_LEN, MAX_JITTER_PERCENT, MAX_SEND_LEN, MAX_UNIX_PATH, Pattern, StatusSet,
    UnixSocket, unescape, validate_method,
};
/// Host-run probes: the engine schedules and judges the runs, the host performs them.
pub use prober_core::{HostRunSpec, MAX_HOST_RUN_LABEL};
/// Beyond the kubelet: HTTP probes through a proxy ([`ProbeSpec::set_http_proxy`]).
pub use prober_core::{HttpProxy, MAX_CONNECT_HEADERS, MAX_NO_PROXY_ENTRIES, NoProxy, ProxyServer};
/// The address family a probe connects over ([`ProbeSpec::set_ip_family`]).
pub use prober_core::{IP_FAMILIES, IpFamily};
/// Containers: a probe's network namespace ([`ProbeSpec::set_netns`]).
pub use prober_core::{MAX_NETNS_PATH, NetNs};
/// Beyond the kubelet: multi-step TCP exchanges ([`ProbeSpec::add_tcp_step`]).
pub use prober_core::{
    MAX_TCP_STEP_LINE, MAX_TCP_STEPS, MAX_TCP_STEPS_READ, TCP_BYTES_DIFFER, TcpStep,
};
pub use prober_engine::{Completion, HostRunStats, RunId};
pub use prober_engine::{
    DEFAULT_POOL_CAP, Engine, EngineConfig, EngineError, EngineThread, Event, Handle, KeepStats,
    MAX_THREADS, PoolStats, TargetId, spawn, spawn_sharded,
};
pub use prober_engine::{
    EngineEnd, EngineGroup, EventSink, HostWaker, ShardedEngine, spawn_sharded_into,
};

/// Runs one probe to completion on the calling thread and returns its outcome.
///
/// This is the engine's own probe machine driven on a private poll: the same code path as a
/// probe run by [`Engine`], so results are identical. An invalid spec gives an Unknown outcome
/// whose message says what is wrong.
pub fn check(spec: &ProbeSpec) -> Outcome {
    prober_engine::check(spec)
}

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
