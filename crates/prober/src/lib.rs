//! libprober for Rust: kubelet-grade health probes (TCP, HTTP(S), exec, gRPC health) and the
//! poll-driven engine that runs thousands of them on one thread.
//!
//! One-shot, blocking:
//! ```no_run
//! let spec = prober::ProbeSpec::http("http://127.0.0.1:8080/healthz").unwrap();
//! let outcome = prober::check(&spec);
//! println!("{} {}", outcome.result, outcome.message);
//! ```
//!
//! Periodic, kubelet rules (thresholds, startup gating, liveness hold):
//! ```no_run
//! use prober::{Engine, ProbeSpec, Role, Schedule};
//! let mut engine = Engine::new().unwrap();
//! let target = engine.add_target();
//! let spec = ProbeSpec::tcp("127.0.0.1", 5432).unwrap();
//! engine.set_probe(target, Role::Readiness, spec, Schedule::default()).unwrap();
//! loop {
//!     engine.wait(None).unwrap();
//!     while let Some(event) = engine.next_event() {
//!         println!("{event:?}");
//!     }
//! }
//! ```

pub use prober_core::{
    ClosePolicy, DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT, ExecSpec, GrpcSpec,
    HttpSpec, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy, Role, Schedule,
    Scheme, SpecError, TcpSpec, Timings, TlsOptions, TlsVerify, TlsVersion, Url, UrlError,
};
/// Beyond the kubelet: expected status sets and regular expressions for bodies and replies.
pub use prober_core::{MAX_JITTER_PERCENT, MAX_SEND_LEN, Pattern, StatusSet, unescape};
pub use prober_engine::{
    DEFAULT_POOL_CAP, Engine, EngineConfig, EngineError, EngineThread, Event, Handle, PoolStats,
    TargetId, spawn,
};

/// Runs one probe to completion on the calling thread and returns its outcome.
///
/// This is the engine's own probe machine driven on a private poll: the same code path as a
/// probe run by [`Engine`], so results are identical. An invalid spec gives an Unknown outcome
/// whose message says what is wrong.
pub fn check(spec: &ProbeSpec) -> Outcome {
    prober_engine::check(spec)
}
