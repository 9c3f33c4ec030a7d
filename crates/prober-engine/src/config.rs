//! The engine's options and errors.

use std::io;
use std::time::Duration;

use prober_core::{Role, SpecError};

use crate::event::TargetId;

/// Engine options.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Also emit [`Event::Run`](crate::Event::Run) for every worker run (for hosts that log or export metrics).
    pub every_run: bool,
    /// Seed for first-run jitter; 0 picks one from the clock.
    pub jitter_seed: u64,
    /// How many disconnected TCP sockets to keep for reuse, per address family (default
    /// [`prober_io::DEFAULT_POOL_CAP`]; 0 closes every socket after its probe). A TCP or HTTP
    /// probe with the reset close policy then ends its connection with the same RST but keeps
    /// the socket for the next probe, which saves the kernel making and freeing one: about 40 %
    /// of a loopback TCP probe's CPU (docs/benchmarks.md). The kept sockets hold descriptors
    /// (closed, connected to nothing) until the engine is dropped.
    pub socket_pool: usize,
    /// How long a kept-alive HTTP or gRPC connection (`ConnectOptions::keep_alive`
    /// of an HTTP or gRPC spec) may stay idle before the engine closes it (default
    /// [`prober_transport::keep::IDLE_LIMIT`], which says why).
    pub keep_alive_idle: Duration,
    /// How many [`Event::Run`](crate::Event::Run)s may wait to be drained (default
    /// [`DEFAULT_MAX_RUN_EVENTS`]); past that the oldest is dropped and counted
    /// ([`Engine::dropped_events`](crate::Engine::dropped_events)), but never one queued by the current step, so that the
    /// queue holds at most this many plus one step's runs. See [`Engine::drain`](crate::Engine::drain) for the whole
    /// event policy.
    pub max_run_events: usize,
    /// How long the disconnected sockets kept for probes in another network namespace (up to
    /// [`EngineConfig::socket_pool`] per namespace and family) may stay unused before they are
    /// closed (default [`prober_io::NETNS_POOL_IDLE`]). A kept socket keeps its namespace in
    /// existence: they are also closed when no spec names the path any more.
    pub netns_pool_idle: Duration,
    /// How long a check of a namespace path's identity (its `stat`, by a `prober-netns`
    /// thread) lets later probes in that namespace take kept sockets without checking again
    /// (default [`prober_io::NETNS_RECHECK`], which says why). It bounds how long after the
    /// path comes to name another namespace (a restarted container) a probe may still run in
    /// the old one. After it a probe still reuses a kept socket, once a thread has checked
    /// the path (a round trip, no `setns`, no new socket); [`Duration::ZERO`] checks before
    /// every probe, as without the pool.
    pub netns_recheck: Duration,
}

/// The default [`EngineConfig::max_run_events`].
pub const DEFAULT_MAX_RUN_EVENTS: usize = 1024;

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            every_run: false,
            jitter_seed: 0,
            socket_pool: prober_io::DEFAULT_POOL_CAP,
            keep_alive_idle: prober_transport::keep::IDLE_LIMIT,
            max_run_events: DEFAULT_MAX_RUN_EVENTS,
            netns_pool_idle: prober_io::NETNS_POOL_IDLE,
            netns_recheck: prober_io::NETNS_RECHECK,
        }
    }
}

/// Why an engine call was refused. The engine keeps running after any of these.
///
/// More causes may be added: the enum is `#[non_exhaustive]`, so a `match` on it needs a
/// wildcard arm.
#[derive(Debug)]
#[non_exhaustive]
pub enum EngineError {
    /// No live target has this id: never added, removed, or from another engine.
    UnknownTarget(TargetId),
    /// The target has no probe for this role.
    NoProbe(TargetId, Role),
    /// The spec or schedule was refused (see [`SpecError`]).
    Spec(SpecError),
    /// A system call failed (making the poll, waking the engine), or the engine is gone (a
    /// [`Handle`](crate::Handle) whose engine was dropped gets [`io::ErrorKind::BrokenPipe`]).
    Io(io::Error),
    /// A one-shot submit of a host-run probe ([`prober_core::HostRunSpec`]): only a target's
    /// worker runs one, announced to the host that completes it.
    HostRunCheck,
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::UnknownTarget(t) => write!(f, "unknown target {t}"),
            EngineError::NoProbe(t, r) => write!(f, "target {t} has no {r} probe"),
            EngineError::Spec(e) => write!(f, "{e}"),
            EngineError::Io(e) => write!(f, "{e}"),
            EngineError::HostRunCheck => f.write_str(
                "a host-run probe cannot be submitted as a one-shot check: set it as a \
                 target's probe, whose runs are announced to the host",
            ),
        }
    }
}

impl std::error::Error for EngineError {
    /// The wrapped [`SpecError`] or [`io::Error`] (for its errno, say), whose text is also the
    /// whole message of these variants.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Spec(e) => Some(e),
            EngineError::Io(e) => Some(e),
            EngineError::UnknownTarget(_)
            | EngineError::NoProbe(..)
            | EngineError::HostRunCheck => None,
        }
    }
}

impl From<SpecError> for EngineError {
    fn from(e: SpecError) -> EngineError {
        EngineError::Spec(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::ProbeSpec;
    use std::error::Error as _;

    #[test]
    fn engine_errors_give_the_error_they_wrap_as_source() {
        let e = EngineError::Io(io::Error::from_raw_os_error(libc::EMFILE));
        let inner = e.source().and_then(|s| s.downcast_ref::<io::Error>()).expect("io source");
        assert_eq!(inner.raw_os_error(), Some(libc::EMFILE));

        // A refused URL: engine error -> spec error -> URL error.
        let spec_error = ProbeSpec::http("ftp://example.com/").unwrap_err();
        let e = EngineError::from(spec_error.clone());
        let spec = e.source().and_then(|s| s.downcast_ref::<SpecError>()).expect("spec source");
        assert_eq!(spec, &spec_error);
        let url = spec.source().and_then(|s| s.downcast_ref::<prober_core::UrlError>());
        assert!(url.is_some(), "{spec:?} wraps no URL error");

        assert!(EngineError::UnknownTarget(7).source().is_none());
    }
}
