//! The [`Engine`]: its state, its targets and workers, and what a host calls to drive it. How it
//! runs probes, schedules workers and turns is in `drive.rs`, `schedule.rs` and `turn.rs`; the
//! host-run calls are in `hostrun_engine.rs`, the [`Handle`](crate::Handle) in `handle.rs`.
//! The queue of work from other threads ([`Shared`]) is here, with the engine that owns it and
//! whose calls it carries.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};
use parking_lot::Mutex;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Role, Schedule};
use prober_io::{Machine, Mailbox, NsPoolStats, PoolStats, Ready, Resolved, SocketPool};
use prober_transport::keep::{KeepStats, KeptConns};

use crate::arena::{Arena, Key};
use crate::config::{EngineConfig, EngineError};
use crate::event::{Event, TargetId};
use crate::hostrun::HostRunStats;
use crate::plan_cache::PlanCache;
use crate::probe::PreparedSpec;
use crate::queue::EventQueue;
use crate::shards::{MAX_THREADS, Shard};
use crate::slots::{CheckDone, Owner, Slot, Target, WorkerSlot};
use crate::timers::{TimerKey, Timers};
use crate::token::{WAKE, run_ctx};
use crate::wake_timer::WakeTimer;
use crate::worker::Worker;

/// The scheduler. Not thread-safe itself (use it from one thread at a time); a
/// [`Handle`](crate::Handle) wakes it and queues work from any thread.
///
/// A target stands for the kubelet's container: up to three workers (startup, readiness,
/// liveness), each running its probe on its [`Schedule`] and publishing a value by the
/// kubelet's rules. The host calls [`Engine::wait`] (or polls [`Engine::fd`] and calls
/// [`Engine::step`]) and reads [`Event`]s.
///
/// ```
/// use std::net::TcpListener;
/// use std::time::{Duration, Instant};
/// use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
/// use prober_engine::{Engine, Event};
///
/// // The target: a listener on a free loopback port.
/// let listener = TcpListener::bind("127.0.0.1:0")?;
/// let port = listener.local_addr()?.port();
///
/// let mut engine = Engine::new()?;
/// let target = engine.add_target();
/// let spec = ProbeSpec::tcp("127.0.0.1", port.into())?;
/// let schedule = Schedule { period: Duration::from_millis(100), ..Schedule::default() };
/// engine.set_probe(target, Role::Readiness, spec, schedule)?;
///
/// // Readiness starts as Failure and is published as Success after the first good run.
/// let mut published = Vec::new();
/// let give_up = Instant::now() + Duration::from_secs(30);
/// while published.last() != Some(&ProbeResult::Success) && Instant::now() < give_up {
///     engine.wait(Some(Duration::from_millis(100)))?;
///     while let Some(event) = engine.next_event() {
///         if let Event::State { target: t, role: Role::Readiness, result, .. } = event {
///             assert_eq!(t, target);
///             published.push(result);
///         }
///     }
/// }
/// assert_eq!(published, [ProbeResult::Failure, ProbeResult::Success]);
/// assert_eq!(engine.published(target, Role::Readiness)?, ProbeResult::Success);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    pub(crate) poll: Poll,
    pub(crate) events: Events,
    pub(crate) waker: Arc<Waker>,
    pub(crate) mailbox: Mailbox,
    pub(crate) answers: Vec<Resolved>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) config: EngineConfig,
    /// In-flight probe runs. A slot's key outlives its run in timers, poll tokens and
    /// resolver tickets; the arena's generations make those stale instead of misdirected.
    pub(crate) slots: Arena<Slot>,
    pub(crate) timers: Timers,
    /// Targets; a [`TargetId`] is the target's key as a number ([`Key::to_u64`]).
    pub(crate) targets: Arena<Target>,
    /// Undrained events, under the policy described at [`Engine::drain`].
    pub(crate) queue: EventQueue,
    /// Scratch list of due timers, kept to reuse its allocation.
    pub(crate) due: Vec<(Instant, TimerKey)>,
    /// Scratch list of one poll's readiness, kept to reuse its allocation.
    pub(crate) ready: Vec<(Token, Ready)>,
    /// Runs that returned [`Step::Yield`]: resumed at the next turn, after its poll.
    pub(crate) yielded: Vec<Key>,
    /// Scratch list for the runs being resumed, kept to reuse its allocation.
    pub(crate) resuming: Vec<Key>,
    /// Disconnected sockets for the next TCP connections (see [`EngineConfig::socket_pool`]).
    pub(crate) pool: SocketPool,
    /// Idle kept-alive connections of keep-alive HTTP and gRPC probes (see
    /// [`prober_transport::keep`]).
    pub(crate) kept: KeptConns,
    /// The ICMP echo sockets shared by this engine's runs (one per family, socket kind,
    /// options and namespace; see `prober_icmp::SharedSockets`).
    pub(crate) icmp: prober_icmp::SharedSockets,
    /// Shared ICMP sockets whose last read stopped at its budget: read again next turn.
    pub(crate) icmp_owed: Vec<usize>,
    /// Scratch list of the runs a shared socket's read woke, kept to reuse its allocation.
    pub(crate) icmp_wake: Vec<u64>,
    /// Counters of host-run probes ([`Engine::host_run_stats`]).
    pub(crate) host_runs: HostRunStats,
    /// The prepared plans of the last HTTP specs submitted as one-shot checks.
    pub(crate) plans: PlanCache,
    pub(crate) rng: u64,
    /// Which engine of a sharded group this is, which its target and run ids say.
    pub(crate) shard: Shard,
    /// The timerfd that ends a poll at the next timer to the nanosecond (see `wake_timer.rs`).
    pub(crate) wake_timer: WakeTimer,
}

impl Engine {
    /// An engine with the default [`EngineConfig`].
    ///
    /// # Errors
    ///
    /// As [`Engine::with_config`].
    pub fn new() -> io::Result<Engine> {
        Engine::with_config(EngineConfig::default())
    }

    /// An engine with `config`: its poll, its wake-up descriptor and its resolver pool (whose
    /// threads start on the first name lookup).
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of creating the poll (epoll), the wake-up descriptor (eventfd) or the
    /// timer descriptor (timerfd, Linux): out of descriptors, say.
    pub fn with_config(config: EngineConfig) -> io::Result<Engine> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
        let wake_timer = WakeTimer::new(poll.registry())?;
        let mailbox = Mailbox::new(waker.clone());
        let seed = match config.jitter_seed {
            0 => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9e37_79b9, |d| d.as_nanos() as u64),
            s => s,
        };
        Ok(Engine {
            poll,
            events: Events::with_capacity(1024),
            waker,
            mailbox,
            answers: Vec::new(),
            shared: Arc::default(),
            config,
            slots: Arena::default(),
            timers: Timers::default(),
            targets: Arena::default(),
            queue: EventQueue::new(config.max_run_events),
            due: Vec::new(),
            ready: Vec::new(),
            yielded: Vec::new(),
            resuming: Vec::new(),
            pool: SocketPool::with_netns_bounds(
                config.socket_pool,
                config.netns_pool_idle,
                config.netns_recheck,
            ),
            kept: KeptConns::default()
                .with_idle_limit(config.keep_alive_idle)
                .with_tokens(crate::token::kept_token),
            icmp: prober_icmp::SharedSockets::new(crate::token::shared_token),
            icmp_owed: Vec::new(),
            icmp_wake: Vec::new(),
            host_runs: HostRunStats::default(),
            plans: PlanCache::default(),
            rng: seed | 1,
            shard: Shard::ALONE,
            wake_timer,
        })
    }

    /// Engine `index` of `count` sharing one [`Handle`](crate::Handle): its target ids and run
    /// ids name it (`crate::shards` says how), and a fixed jitter seed is varied per
    /// engine so that the engines do not jitter in step.
    pub(crate) fn shard(config: EngineConfig, index: usize, count: usize) -> io::Result<Engine> {
        assert!(index < count && count <= MAX_THREADS, "engine {index} of {count}");
        let seed = match config.jitter_seed {
            0 => 0,
            s => s.wrapping_add(index as u64).max(1),
        };
        let mut engine = Engine::with_config(EngineConfig { jitter_seed: seed, ..config })?;
        // Both fit in u32: count <= MAX_THREADS.
        let shard = Shard { index: index as u32, count: count as u32 };
        engine.targets = Arena::strided(shard.count, shard.index);
        engine.shard = shard;
        Ok(engine)
    }

    // ---- targets and workers -------------------------------------------------------------

    /// Adds a target with no probes; it counts as started now.
    pub fn add_target(&mut self) -> TargetId {
        let target = Target { started_at: Instant::now(), workers: [None, None, None] };
        // Never 0 (no generation is 0): C hosts keep 0 for "no target".
        self.targets.insert(target).to_u64()
    }

    pub(crate) fn target_mut(&mut self, id: TargetId) -> Result<&mut Target, EngineError> {
        self.targets.get_mut(Key::from_u64(id)).ok_or(EngineError::UnknownTarget(id))
    }

    /// Sets (or replaces) the target's probe for `role`. The worker starts from the role's
    /// initial value, which is published as an [`Event::State`] without an outcome.
    ///
    /// # Errors
    ///
    /// [`EngineError::Spec`] for an invalid spec or a schedule invalid for `role`, and
    /// [`EngineError::UnknownTarget`]; the target is then unchanged.
    pub fn set_probe(
        &mut self,
        target: TargetId,
        role: Role,
        spec: ProbeSpec,
        schedule: Schedule,
    ) -> Result<(), EngineError> {
        spec.validate()?;
        schedule.validate(role)?;
        self.target_mut(target)?;
        self.cancel_worker_run(target, role);
        let t = self.target_mut(target)?;
        let started_at = t.started_at;
        let state = Worker::new(role, schedule);
        let value = state.value();
        t.workers[role.index()] = Some(Box::new(WorkerSlot {
            spec: PreparedSpec::new(spec),
            state,
            next_run: None,
            in_flight: None,
            run_after: false,
            tick: None,
        }));
        // The initial delay counts from the target's (re)start, as the kubelet counts it from
        // the container's start, not from when the probe was set.
        let first = (started_at + schedule.initial_delay).max(Instant::now());
        let first = first + self.jitter(schedule);
        self.schedule_worker(target, role, first);
        self.queue.push(Event::State { target, role, result: value, outcome: None });
        // The spec replaced may have been the last naming a namespace.
        self.pool.netns().release_unnamed();
        Ok(())
    }

    /// Removes the target's probe for `role` (an in-flight run is cancelled).
    ///
    /// # Errors
    ///
    /// [`EngineError::UnknownTarget`], or [`EngineError::NoProbe`] when there is no probe to
    /// remove.
    pub fn clear_probe(&mut self, target: TargetId, role: Role) -> Result<(), EngineError> {
        self.target_mut(target)?;
        self.cancel_worker_run(target, role);
        let t = self.target_mut(target)?;
        let removed = t.workers[role.index()].take().ok_or(EngineError::NoProbe(target, role));
        drop(removed?);
        // A namespace only its spec named: its kept sockets close now.
        self.pool.netns().release_unnamed();
        Ok(())
    }

    /// The kubelet's "new container ID": every worker back to its initial value, holds lifted,
    /// in-flight runs cancelled, initial delays and startup gating start over.
    ///
    /// # Errors
    ///
    /// [`EngineError::UnknownTarget`].
    pub fn restart_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        self.target_mut(target)?;
        for role in Role::ALL {
            self.cancel_worker_run(target, role);
        }
        let now = Instant::now();
        let t = self.target_mut(target)?;
        t.started_at = now;
        let mut changes = Vec::new();
        let mut firsts = Vec::new();
        for role in Role::ALL {
            if let Some(w) = t.workers[role.index()].as_mut() {
                w.state.restart();
                w.run_after = false;
                // Published even when unchanged: a new container starts from the initial
                // value, as the kubelet's results cache does for a new container ID.
                changes.push((role, w.state.value()));
                firsts.push((role, *w.state.schedule()));
            }
        }
        for (role, v) in changes {
            self.queue.push(Event::State { target, role, result: v, outcome: None });
        }
        for (role, schedule) in firsts {
            let first = now + schedule.initial_delay + self.jitter(schedule);
            self.schedule_worker(target, role, first);
        }
        Ok(())
    }

    /// Removes a target: in-flight probes are cancelled (exec children killed and reaped) and
    /// no event about it is delivered afterwards, including ones queued but not yet drained.
    ///
    /// # Errors
    ///
    /// [`EngineError::UnknownTarget`] (removing a target twice is refused the second time).
    pub fn remove_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        self.target_mut(target)?;
        for role in Role::ALL {
            self.cancel_worker_run(target, role);
        }
        // The connections its runs kept are of no use to anyone else's.
        self.kept.close_owner(target);
        self.targets.remove(Key::from_u64(target));
        self.queue.remove_target(target);
        // A namespace only its specs named: its kept sockets close now.
        self.pool.netns().release_unnamed();
        Ok(())
    }

    /// Runs the target's `role` probe now and restarts its period from this run. While a run
    /// is in flight, one more run follows right after it. The initial delay, startup gating
    /// and holds still apply (a trigger during the initial delay runs when the delay ends).
    ///
    /// # Errors
    ///
    /// [`EngineError::UnknownTarget`], or [`EngineError::NoProbe`] for a role without a probe.
    pub fn trigger(&mut self, target: TargetId, role: Role) -> Result<(), EngineError> {
        let now = Instant::now();
        let t = self.target_mut(target)?;
        let started_at = t.started_at;
        let w = t.workers[role.index()].as_mut().ok_or(EngineError::NoProbe(target, role))?;
        if w.in_flight.is_some() {
            w.run_after = true;
            return Ok(());
        }
        let at = (started_at + w.state.schedule().initial_delay).max(now);
        self.schedule_worker(target, role, at);
        Ok(())
    }

    /// The published value of a worker.
    ///
    /// # Errors
    ///
    /// [`EngineError::UnknownTarget`], or [`EngineError::NoProbe`] for a role without a probe.
    pub fn published(&mut self, target: TargetId, role: Role) -> Result<ProbeResult, EngineError> {
        let t = self.target_mut(target)?;
        let w = t.workers[role.index()].as_ref().ok_or(EngineError::NoProbe(target, role))?;
        Ok(w.state.value())
    }

    /// Starts a one-shot probe; its outcome arrives as [`Event::Check`] with `tag`.
    ///
    /// # Errors
    ///
    /// [`EngineError::Spec`] for an invalid spec, [`EngineError::HostRunCheck`] for a host-run
    /// probe (only a target's worker runs one); nothing is started.
    ///
    /// An HTTP spec equal to one of the last few submitted is neither validated nor prepared
    /// again: its run shares the plan (URL, headers, request bytes) made the first time, as a
    /// worker's runs share theirs.
    pub fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        let probe = self.plans.probe(spec)?;
        self.start_probe(probe, Owner::Check { tag });
        Ok(())
    }

    /// Cancels the one-shot probes started by [`Engine::submit`] with `tag` that are still
    /// running: each stops at once (socket closed; command and its process group killed and
    /// reaped) and its [`Event::Check`] is queued now, with an Unknown outcome of reason
    /// [`Reason::Cancelled`](prober_core::Reason::Cancelled). Returns how many were cancelled:
    /// 0 when none runs (finished already, or never submitted). Submits queued through a
    /// [`Handle`](crate::Handle) and not started yet are not affected.
    pub fn cancel_check(&mut self, tag: u64) -> usize {
        let mut cancelled = 0;
        // A scan of the in-flight runs: cancelling is rare, and a tag index would cost every
        // submit.
        let slots: Vec<Key> = self
            .slots
            .iter()
            .filter(|(_, s)| matches!(s.owner, Owner::Check { tag: t } if t == tag))
            .map(|(k, _)| k)
            .collect();
        for slot in slots {
            let Some(mut s) = self.slots.remove(slot) else { continue };
            let mut cx = run_ctx(&self.poll, &self.mailbox, Instant::now(), slot)
                .with_pool(&mut self.pool)
                .with_shared(&mut self.icmp);
            s.probe.cancel(&mut cx);
            let outcome = Outcome::new(
                ProbeResult::Unknown,
                prober_core::Reason::Cancelled,
                "probe cancelled by the host",
            );
            match s.done {
                Some(done) => done.call(outcome),
                None => self.queue.push(Event::Check { tag, outcome: Box::new(outcome) }),
            }
            cancelled += 1;
        }
        cancelled
    }

    /// How many targets the engine has.
    pub fn target_count(&self) -> usize {
        self.targets.len()
    }

    /// Probes running right now.
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// The socket pool's counters: sockets kept now, connections made on a kept socket, and
    /// sockets put back (see [`EngineConfig::socket_pool`]).
    pub fn socket_pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// The counters of the disconnected sockets kept for probes in other network namespaces:
    /// namespaces and sockets kept now, connections made on a kept one, sockets put back and
    /// sockets closed with their namespace (see [`EngineConfig::netns_pool_idle`]).
    pub fn netns_pool_stats(&self) -> NsPoolStats {
        self.pool.netns_ref().stats()
    }

    /// The counters of kept-alive connections: idle now, kept, reused, found closed before
    /// reuse, retried, expired, closed with their target (see [`prober_transport::keep`]).
    pub fn keep_alive_stats(&self) -> KeepStats {
        self.kept.stats()
    }

    // ---- host integration ----------------------------------------------------------------

    /// A descriptor that is readable when the engine has I/O to process (the epoll fd). Pair it
    /// with [`Engine::timeout`] for timers. On Linux it also becomes readable by itself when
    /// the next timer known at the end of the last [`Engine::step`] or [`Engine::wait`] is due
    /// (a timerfd in the poll: at that instant, or at most 1 ms after the last poll when a busy
    /// engine's timers fall due in quick succession), so a host polling it with a millisecond
    /// timeout is still woken on time.
    pub fn fd(&self) -> RawFd {
        self.poll.as_raw_fd()
    }

    /// How long the host may wait before calling [`Engine::step`]: `Some(ZERO)` when there is
    /// work now (an event queued since the last turn included: a check that ended within its
    /// submit, whose event a host that waits before draining would otherwise sleep on), `None`
    /// when only I/O or a wake-up can make work. Kept-alive connections count
    /// as timers: their idle limit is kept even when nothing else is scheduled.
    pub fn timeout(&self) -> Option<Duration> {
        // An event queued outside a turn (a check that ended within its submit) must not wait
        // for the next I/O or timer: a host that submits, waits, then drains would sleep on it.
        if !self.yielded.is_empty()
            || !self.icmp_owed.is_empty()
            || self.queue.queued_outside_turn()
            || !self.shared.commands.lock().queue.is_empty()
        {
            return Some(Duration::ZERO);
        }
        self.next_timer().map(|t| t.saturating_duration_since(Instant::now()))
    }

    /// The instant of the next timer: a worker's run, a run's deadline, a kept-alive
    /// connection's idle limit, or the idle limit of a namespace's kept sockets.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        [self.timers.next(), self.kept.next_expiry(), self.pool.netns_ref().next_expiry()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Processes ready I/O, due timers and queued commands without blocking. Returns how many
    /// things were processed.
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of the poll, other than an interruption (which counts as no events).
    /// Runs waiting to resume are kept for the next call.
    pub fn step(&mut self) -> io::Result<usize> {
        self.turn(Some(Duration::ZERO))
    }

    /// Blocks until something happens, the next timer is due, a
    /// [`Handle::wakeup`](crate::Handle::wakeup), or `timeout` passes (`None`: no limit but
    /// timers), then processes like [`Engine::step`].
    /// A signal that interrupts the poll ends the wait early too (EINTR is not an error):
    /// callers wait in a loop.
    ///
    /// # Errors
    ///
    /// As [`Engine::step`].
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let until_timer = self.timeout();
        let t = match (timeout, until_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.turn(t)
    }

    /// Moves up to `max` queued events into `out` (in order); returns how many.
    ///
    /// # When the host drains late
    ///
    /// Probing never waits for the host, and the queue's memory stays bounded whatever the
    /// host does (drains rarely, or never):
    ///
    /// - [`Event::State`] is coalesced: while a worker's state event is queued, a later change
    ///   of the same (target, role) replaces it in place (value and outcome). A host that
    ///   catches up sees each worker's latest published value, once; at most three state
    ///   events per target wait.
    /// - [`Event::Run`] (with [`EngineConfig::every_run`]) is dropped oldest-first past
    ///   [`EngineConfig::max_run_events`] queued, and counted in [`Engine::dropped_events`].
    ///   Only runs queued before the current [`Engine::step`] or [`Engine::wait`] are dropped:
    ///   a host that drains after every step loses none, however many runs one step makes.
    /// - [`Event::Check`] is neither coalesced nor dropped: one per submit, so the host bounds
    ///   them by what it submits.
    /// - [`Event::HostRun`] is neither coalesced nor dropped, but withdrawn when its run ends
    ///   (timed out, cancelled) before the host drained it: at most one per worker waits.
    ///
    /// Events come out in the order they were queued; a coalesced state event keeps the place
    /// of the change it replaced. [`Engine::published`] always gives the current value.
    pub fn drain(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some(ev) = self.queue.pop() else { break };
            out.push(ev);
            n += 1;
        }
        n
    }

    /// The next queued event, if any.
    pub fn next_event(&mut self) -> Option<Event> {
        self.queue.pop()
    }

    /// How many [`Event::Run`]s were dropped because more than
    /// [`EngineConfig::max_run_events`] waited to be drained (see [`Engine::drain`]).
    pub fn dropped_events(&self) -> u64 {
        self.queue.dropped()
    }

    /// How many events are queued and not yet drained.
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }
}

impl Drop for Engine {
    /// Cancels every in-flight probe so that no socket, pipe or child outlives the engine, and
    /// closes the command queue: pending `Handle::call`s fail instead of waiting forever.
    fn drop(&mut self) {
        let pending = {
            let mut cmds = self.shared.commands.lock();
            cmds.closed = true;
            std::mem::take(&mut cmds.queue)
        };
        drop(pending);
        let now = Instant::now();
        for (slot, mut s) in self.slots.drain() {
            let mut cx = run_ctx(&self.poll, &self.mailbox, now, slot).with_shared(&mut self.icmp);
            s.probe.cancel(&mut cx);
        }
    }
}

/// State shared with [`Handle`](crate::Handle)s on other threads.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) commands: Mutex<Commands>,
}

#[derive(Debug, Default)]
pub(crate) struct Commands {
    pub(crate) queue: Vec<Command>,
    /// Set when the engine is dropped: handles then refuse work instead of queueing it forever.
    pub(crate) closed: bool,
}

impl Shared {
    pub(crate) fn push(&self, c: Command) -> io::Result<()> {
        let mut cmds = self.commands.lock();
        if cmds.closed {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the engine is gone"));
        }
        cmds.queue.push(c);
        Ok(())
    }
}

/// Work a [`Handle`](crate::Handle) queued for the engine's next turn.
pub(crate) enum Command {
    Submit(Box<ProbeSpec>, u64),
    SubmitWith(Box<ProbeSpec>, u64, CheckDone),
    Trigger(TargetId, Role),
    Call(Box<dyn FnOnce(&mut Engine) + Send>),
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Submit(_, tag) => write!(f, "Submit(tag {tag})"),
            Command::SubmitWith(_, tag, _) => write!(f, "SubmitWith(tag {tag})"),
            Command::Trigger(t, r) => write!(f, "Trigger({t}, {r})"),
            Command::Call(_) => f.write_str("Call"),
        }
    }
}
