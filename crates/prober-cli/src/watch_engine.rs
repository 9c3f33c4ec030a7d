//! The engine behind `prober watch`: one engine on the watch's own thread (the default), or
//! `--threads N` engines on threads of their own whose events the watch's thread takes the same
//! way (a descriptor to poll, a step, a drain).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use prober::{
    Engine, EngineConfig, EngineError, Event, ProbeSpec, Role, Schedule, ShardedEngine, TargetId,
};

/// `--threads` 1: today's engine, driven by the watch's loop; more: a sharded group.
#[allow(
    clippy::large_enum_variant,
    reason = "one value for the whole watch; boxing the common case buys nothing"
)]
pub enum WatchEngine {
    One(Engine),
    Sharded(ShardedEngine),
}

/// An engine thread that is gone, as an I/O error (its engine's targets report nothing more).
fn gone(e: &ShardedEngine) -> io::Result<()> {
    match e.ended() {
        None => Ok(()),
        Some(end) => Err(io::Error::other(format!(
            "engine thread {} {}: {}",
            end.engine,
            if end.panicked { "panicked" } else { "failed" },
            end.message
        ))),
    }
}

impl WatchEngine {
    /// `threads` engines made with `config`; 1 is [`Engine::with_config`], no thread started.
    pub fn start(config: EngineConfig, threads: usize) -> io::Result<WatchEngine> {
        Ok(if threads == 1 {
            WatchEngine::One(Engine::with_config(config)?)
        } else {
            WatchEngine::Sharded(ShardedEngine::start(config, threads)?)
        })
    }

    pub fn add_target(&mut self) -> Result<TargetId, EngineError> {
        match self {
            WatchEngine::One(e) => Ok(e.add_target()),
            WatchEngine::Sharded(e) => e.handle().add_target().map_err(EngineError::Io),
        }
    }

    pub fn set_probe(
        &mut self,
        target: TargetId,
        role: Role,
        spec: ProbeSpec,
        schedule: Schedule,
    ) -> Result<(), EngineError> {
        match self {
            WatchEngine::One(e) => e.set_probe(target, role, spec, schedule),
            WatchEngine::Sharded(e) => e.handle().set_probe(target, role, spec, schedule),
        }
    }

    pub fn remove_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        match self {
            WatchEngine::One(e) => e.remove_target(target),
            WatchEngine::Sharded(e) => e.remove_target(target),
        }
    }

    pub fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        match self {
            WatchEngine::One(e) => e.submit(spec, tag),
            WatchEngine::Sharded(e) => e.handle().submit(spec, tag),
        }
    }

    pub fn drain(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        match self {
            WatchEngine::One(e) => e.drain(out, max),
            WatchEngine::Sharded(e) => e.drain(out, max),
        }
    }

    /// When the loop must step without I/O: engine threads keep their own timers.
    pub fn timeout(&self) -> Option<Duration> {
        match self {
            WatchEngine::One(e) => e.timeout(),
            WatchEngine::Sharded(_) => None,
        }
    }

    pub fn fd(&self) -> RawFd {
        match self {
            WatchEngine::One(e) => e.fd(),
            WatchEngine::Sharded(e) => e.fd(),
        }
    }

    /// Processes what is ready without blocking; an engine thread that ended is an error.
    pub fn step(&mut self) -> io::Result<()> {
        match self {
            WatchEngine::One(e) => e.step().map(drop),
            WatchEngine::Sharded(e) => {
                e.step()?;
                gone(e)
            }
        }
    }
}
