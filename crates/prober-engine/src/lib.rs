//! The poll-driven scheduler: thousands of kubelet-style probe workers on one thread.
//!
//! One [`Engine`] is one `mio::Poll`, a timer heap, the in-flight probe machines and an event
//! queue. Nothing blocks: probes are state machines driven by readiness, name lookups run on
//! the resolver pool, exec children are watched through pidfds in the same poll.
//!
//! Host integration follows curl's multi interface: [`Engine::fd`] is pollable,
//! [`Engine::timeout`] says when to call next, [`Engine::step`] never blocks, [`Engine::wait`]
//! blocks up to a limit, [`Handle::wakeup`] interrupts it from any thread, and
//! [`Engine::drain`] hands over events in batches. [`spawn`] runs an engine on its own thread
//! for Rust users who want a channel instead, and [`spawn_sharded`] runs one engine per thread
//! behind one [`Handle`] and one channel, for loads past one core.

#![warn(missing_docs)]

mod arena;
mod check_done;
mod config;
mod drive;
mod engine;
mod event;
mod handle;
mod hostrun;
mod hostrun_engine;
mod plan_cache;
mod probe;
mod queue;
mod runner;
mod schedule;
mod sharded;
mod shards;
mod slots;
#[cfg(feature = "test-panic")]
mod test_panic;
mod timers;
mod token;
mod turn;
mod wake_timer;
pub mod worker;

pub use config::{DEFAULT_MAX_RUN_EVENTS, EngineConfig, EngineError};
pub use engine::Engine;
pub use event::{Event, RunId, TargetId};
pub use handle::Handle;
pub use hostrun::{Completion, HostRunProbe, HostRunStats};
pub use probe::{AnyProbe, PreparedSpec, UnsupportedProbe, check};
pub use prober_io::{DEFAULT_POOL_CAP, PoolStats};
pub use prober_transport::keep::KeepStats;
pub use runner::{
    CHANNEL_CAP, EngineEnd, EngineGroup, EngineThread, EventSink, spawn, spawn_sharded,
    spawn_sharded_into,
};
pub use sharded::{HostWaker, ShardedEngine};
pub use shards::MAX_THREADS;

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
