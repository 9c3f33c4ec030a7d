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
//! for Rust users who want a channel instead.

#![warn(missing_docs)]

mod arena;
mod event;
mod probe;
mod queue;
mod runner;
#[cfg(feature = "test-panic")]
mod test_panic;
mod timers;
pub mod worker;

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};
use parking_lot::Mutex;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Role, Schedule, SpecError};
use prober_io::{Ctx, Machine, Mailbox, Ready, Resolved, SocketPool, Step, TOKENS_PER_PROBE};
use prober_transport::keep::KeptConns;

use arena::{Arena, Key};
pub use event::{Event, TargetId};
pub use probe::{AnyProbe, PreparedSpec, UnsupportedProbe, check};
pub use prober_io::{DEFAULT_POOL_CAP, PoolStats};
pub use prober_transport::keep::KeepStats;
use queue::EventQueue;
pub use runner::{CHANNEL_CAP, EngineThread, spawn};
use timers::{TimerKey, Timers};
use worker::{Verdict, Worker};

const WAKE: Token = Token(usize::MAX);

// Poll tokens: `generation | slot | sub`. The slot's generation is in the high bits so that
// readiness still queued for a run that has ended (a closed socket's last event, the
// disconnect of a socket that went back to the pool) is recognised as stale even when the
// slot index already serves another run; machines can then trust an event to be about their
// own socket. Generations are compared modulo 2^GEN_BITS: a stale event would have to wait
// through 2^30 reuses of one slot to be mistaken.
const SUB_BITS: u32 = TOKENS_PER_PROBE.trailing_zeros();
const SLOT_BITS: u32 = if usize::BITS >= 64 { 32 } else { 20 };
const GEN_BITS: u32 = usize::BITS - SUB_BITS - SLOT_BITS;
const GEN_MASK: usize = (1 << GEN_BITS) - 1;
const SLOT_MASK: usize = (1 << SLOT_BITS) - 1;
const _: () = assert!(TOKENS_PER_PROBE == 1 << SUB_BITS);

/// The first token of the run in `slot` (see [`prober_io::Ctx::token`]). Slot indexes stay
/// below `SLOT_MASK` (2^32 - 1 on 64-bit targets, 2^20 - 1 on 32-bit ones: more in-flight
/// probes than descriptors a process can hold), so no token is `WAKE`.
fn token_base(slot: Key) -> usize {
    debug_assert!((slot.index as usize) < SLOT_MASK);
    (slot.generation as usize & GEN_MASK) << (SLOT_BITS + SUB_BITS)
        | (slot.index as usize) << SUB_BITS
}

/// The context lent to the run in `slot`: its poll tokens ([`token_base`]) and its mailbox
/// ticket (the slot's key as a number, as `Engine::deliver_answers` reads it back).
fn run_ctx<'a>(poll: &'a Poll, mailbox: &'a Mailbox, now: Instant, slot: Key) -> Ctx<'a> {
    Ctx::new(poll.registry(), now, token_base(slot), mailbox, slot.to_u64())
}

/// `(slot, generation modulo 2^GEN_BITS, sub)` of a token made by [`token_base`].
fn split_token(token: Token) -> (u32, usize, usize) {
    let t = token.0;
    (((t >> SUB_BITS) & SLOT_MASK) as u32, t >> (SLOT_BITS + SUB_BITS), t & (TOKENS_PER_PROBE - 1))
}

/// Engine options.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Also emit [`Event::Run`] for every worker run (for hosts that log or export metrics).
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
    /// How long a kept-alive HTTP connection (`HttpSpec::keep_alive`) may stay idle before
    /// the engine closes it (default [`prober_transport::keep::IDLE_LIMIT`], which says why).
    pub keep_alive_idle: Duration,
    /// How many [`Event::Run`]s may wait to be drained (default
    /// [`DEFAULT_MAX_RUN_EVENTS`]); past that the oldest is dropped and counted
    /// ([`Engine::dropped_events`]), but never one queued by the current step, so that the
    /// queue holds at most this many plus one step's runs. See [`Engine::drain`] for the whole
    /// event policy.
    pub max_run_events: usize,
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
    /// [`Handle`] whose engine was dropped gets [`io::ErrorKind::BrokenPipe`]).
    Io(io::Error),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::UnknownTarget(t) => write!(f, "unknown target {t}"),
            EngineError::NoProbe(t, r) => write!(f, "target {t} has no {r} probe"),
            EngineError::Spec(e) => write!(f, "{e}"),
            EngineError::Io(e) => write!(f, "{e}"),
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
            EngineError::UnknownTarget(_) | EngineError::NoProbe(..) => None,
        }
    }
}

impl From<SpecError> for EngineError {
    fn from(e: SpecError) -> EngineError {
        EngineError::Spec(e)
    }
}

/// Who an in-flight probe belongs to.
#[derive(Clone, Copy, Debug)]
enum Owner {
    /// `late_us`: how long after its scheduled instant the run started (for run events).
    Worker {
        target: Key,
        role: Role,
        late_us: u64,
    },
    Check {
        tag: u64,
    },
}

#[derive(Debug)]
struct Slot {
    probe: AnyProbe,
    owner: Owner,
    /// The instant of this slot's live timer entry, if any.
    timer: Option<Instant>,
    /// On the list of runs to resume: a run that yields again before its resume (from a
    /// readiness event) is not queued twice, so it gets one budget of work a turn.
    resume_queued: bool,
}

#[derive(Debug)]
struct WorkerSlot {
    spec: PreparedSpec,
    state: Worker,
    /// The instant of the worker's live timer entry (its next scheduled run).
    next_run: Option<Instant>,
    /// The in-flight run's slot.
    in_flight: Option<Key>,
    /// A tick or trigger arrived while a run was in flight: run again right after it (the
    /// kubelet's worker buffers one tick and one manual trigger the same way).
    run_after: bool,
    /// The last scheduled tick and the state's period that placed `next_run` from it: when a
    /// result changes the state's period (per-state periods), the next run is moved.
    tick: Option<(Instant, Duration)>,
}

#[derive(Debug)]
struct Target {
    /// When the target (re)started: initial delays count from here.
    started_at: Instant,
    workers: [Option<WorkerSlot>; 3],
}

impl Target {
    /// The kubelet's `Started`: no startup probe, or it published Success.
    fn started(&self) -> bool {
        match &self.workers[Role::Startup.index()] {
            None => true,
            Some(w) => w.state.value() == ProbeResult::Success,
        }
    }
}

/// State shared with [`Handle`]s on other threads.
#[derive(Debug, Default)]
struct Shared {
    commands: Mutex<Commands>,
}

#[derive(Debug, Default)]
struct Commands {
    queue: Vec<Command>,
    /// Set when the engine is dropped: handles then refuse work instead of queueing it forever.
    closed: bool,
}

impl Shared {
    fn push(&self, c: Command) -> io::Result<()> {
        let mut cmds = self.commands.lock();
        if cmds.closed {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the engine is gone"));
        }
        cmds.queue.push(c);
        Ok(())
    }
}

enum Command {
    Submit(Box<ProbeSpec>, u64),
    Trigger(TargetId, Role),
    Call(Box<dyn FnOnce(&mut Engine) + Send>),
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Submit(_, tag) => write!(f, "Submit(tag {tag})"),
            Command::Trigger(t, r) => write!(f, "Trigger({t}, {r})"),
            Command::Call(_) => f.write_str("Call"),
        }
    }
}

/// The scheduler. Not thread-safe itself (use it from one thread at a time); a [`Handle`]
/// wakes it and queues work from any thread.
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
    poll: Poll,
    events: Events,
    waker: Arc<Waker>,
    mailbox: Mailbox,
    answers: Vec<Resolved>,
    shared: Arc<Shared>,
    config: EngineConfig,
    /// In-flight probe runs. A slot's key outlives its run in timers, poll tokens and
    /// resolver tickets; the arena's generations make those stale instead of misdirected.
    slots: Arena<Slot>,
    timers: Timers,
    /// Targets; a [`TargetId`] is the target's key as a number ([`Key::to_u64`]).
    targets: Arena<Target>,
    /// Undrained events, under the policy described at [`Engine::drain`].
    queue: EventQueue,
    /// Scratch list of due timers, kept to reuse its allocation.
    due: Vec<(Instant, TimerKey)>,
    /// Scratch list of one poll's readiness, kept to reuse its allocation.
    ready: Vec<(Token, Ready)>,
    /// Runs that returned [`Step::Yield`]: resumed at the next turn, after its poll.
    yielded: Vec<Key>,
    /// Scratch list for the runs being resumed, kept to reuse its allocation.
    resuming: Vec<Key>,
    /// Disconnected sockets for the next TCP connections (see [`EngineConfig::socket_pool`]).
    pool: SocketPool,
    /// Idle kept-alive connections of keep-alive HTTP probes (see [`prober_transport::keep`]).
    kept: KeptConns,
    rng: u64,
}

/// Thread-safe handle: wakes the engine and queues one-shot checks and triggers.
#[derive(Clone, Debug)]
pub struct Handle {
    waker: Arc<Waker>,
    shared: Arc<Shared>,
}

impl Handle {
    /// Interrupts a [`Engine::wait`] in progress (or makes the next one return at once).
    ///
    /// # Errors
    ///
    /// The error of writing to the engine's wake-up descriptor (an eventfd).
    pub fn wakeup(&self) -> io::Result<()> {
        self.waker.wake()
    }

    /// Queues a one-shot probe; the engine starts it on its next step.
    ///
    /// # Errors
    ///
    /// [`EngineError::Spec`] for an invalid spec (checked here, before queueing), and
    /// [`EngineError::Io`] when the engine is gone or cannot be woken.
    pub fn submit(&self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        spec.validate()?;
        self.shared.push(Command::Submit(Box::new(spec), tag)).map_err(EngineError::Io)?;
        self.waker.wake().map_err(EngineError::Io)
    }

    /// Runs `f` on the engine's thread at its next turn and returns its result: the way to use
    /// the whole engine API (targets, probes, restarts) from another thread. Blocks until the
    /// engine thread gets to it; must not be called from that thread itself.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone (dropped, or its thread ended) before running
    /// `f`, or cannot be woken.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> io::Result<R> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = move |e: &mut Engine| {
            let _ = tx.send(f(e));
        };
        self.shared.push(Command::Call(Box::new(job)))?;
        self.waker.wake()?;
        rx.recv().map_err(|_| io::Error::other("the engine stopped before running the call"))
    }

    /// Queues a manual trigger; unknown targets or roles are ignored when it is applied.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone or cannot be woken.
    pub fn trigger(&self, target: TargetId, role: Role) -> io::Result<()> {
        self.shared.push(Command::Trigger(target, role))?;
        self.waker.wake()
    }
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
    /// The [`io::Error`] of creating the poll (epoll) or the wake-up descriptor (eventfd): out
    /// of descriptors, say.
    pub fn with_config(config: EngineConfig) -> io::Result<Engine> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
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
            pool: SocketPool::new(config.socket_pool),
            kept: KeptConns::default().with_idle_limit(config.keep_alive_idle),
            rng: seed | 1,
        })
    }

    /// A [`Handle`] for other threads: wakes this engine and queues work on it.
    pub fn handle(&self) -> Handle {
        Handle { waker: self.waker.clone(), shared: self.shared.clone() }
    }

    // ---- targets and workers -------------------------------------------------------------

    /// Adds a target with no probes; it counts as started now.
    pub fn add_target(&mut self) -> TargetId {
        let target = Target { started_at: Instant::now(), workers: [None, None, None] };
        // Never 0 (no generation is 0): C hosts keep 0 for "no target".
        self.targets.insert(target).to_u64()
    }

    fn target_mut(&mut self, id: TargetId) -> Result<&mut Target, EngineError> {
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
        t.workers[role.index()] = Some(WorkerSlot {
            spec: PreparedSpec::new(spec),
            state,
            next_run: None,
            in_flight: None,
            run_after: false,
            tick: None,
        });
        // The initial delay counts from the target's (re)start, as the kubelet counts it from
        // the container's start, not from when the probe was set.
        let first = (started_at + schedule.initial_delay).max(Instant::now());
        let first = first + self.jitter(schedule);
        self.schedule_worker(target, role, first);
        self.queue.push(Event::State { target, role, result: value, outcome: None });
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
        t.workers[role.index()].take().ok_or(EngineError::NoProbe(target, role))?;
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
    /// [`EngineError::Spec`] for an invalid spec; nothing is started.
    pub fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        spec.validate()?;
        self.start_probe(AnyProbe::from_spec(spec), Owner::Check { tag });
        Ok(())
    }

    /// Cancels the one-shot probes started by [`Engine::submit`] with `tag` that are still
    /// running: each stops at once (socket closed; command and its process group killed and
    /// reaped) and its [`Event::Check`] is queued now, with an Unknown outcome of reason
    /// [`Reason::Cancelled`](prober_core::Reason::Cancelled). Returns how many were cancelled:
    /// 0 when none runs (finished already, or never submitted). Submits queued through a
    /// [`Handle`] and not started yet are not affected.
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
            let mut cx =
                run_ctx(&self.poll, &self.mailbox, Instant::now(), slot).with_pool(&mut self.pool);
            s.probe.cancel(&mut cx);
            let outcome = Outcome::new(
                ProbeResult::Unknown,
                prober_core::Reason::Cancelled,
                "probe cancelled by the host",
            );
            self.queue.push(Event::Check { tag, outcome: Box::new(outcome) });
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

    /// The counters of kept-alive connections: idle now, kept, reused, found closed before
    /// reuse, retried, expired, closed with their target (see [`prober_transport::keep`]).
    pub fn keep_alive_stats(&self) -> KeepStats {
        self.kept.stats()
    }

    // ---- host integration ----------------------------------------------------------------

    /// A descriptor that is readable when the engine has I/O to process (the epoll fd). Pair it
    /// with [`Engine::timeout`] for timers.
    pub fn fd(&self) -> RawFd {
        self.poll.as_raw_fd()
    }

    /// How long the host may wait before calling [`Engine::step`]: `Some(ZERO)` when there is
    /// work now, `None` when only I/O or a wake-up can make work. Kept-alive connections count
    /// as timers: their idle limit is kept even when nothing else is scheduled.
    pub fn timeout(&self) -> Option<Duration> {
        if !self.yielded.is_empty() || !self.shared.commands.lock().queue.is_empty() {
            return Some(Duration::ZERO);
        }
        let next = match (self.timers.next(), self.kept.next_expiry()) {
            (Some(timer), Some(expiry)) => Some(timer.min(expiry)),
            (timer, expiry) => timer.or(expiry),
        };
        next.map(|t| t.saturating_duration_since(Instant::now()))
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

    /// Blocks until something happens, the next timer is due, a [`Handle::wakeup`], or
    /// `timeout` passes (`None`: no limit but timers), then processes like [`Engine::step`].
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

    fn turn(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        self.queue.start_turn();
        // Runs that yielded before this turn go on after its poll: their own readiness and
        // everyone else's I/O and timers come first.
        std::mem::swap(&mut self.resuming, &mut self.yielded);
        let timeout = if self.resuming.is_empty() { timeout } else { Some(Duration::ZERO) };
        // A wake-up that arrived since the last turn makes the waker's fd readable, so the poll
        // below returns at once: no wake-up is lost between turns.
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                // The runs to resume wait for the next turn, which must not sleep first.
                std::mem::swap(&mut self.resuming, &mut self.yielded);
                self.yielded.append(&mut self.resuming);
                return Err(e);
            }
        }
        let mut done = 0;
        let now = Instant::now();
        // Collect first: handling an event needs `&mut self`.
        let mut ready = std::mem::take(&mut self.ready);
        ready.extend(self.events.iter().map(|e| (e.token(), Ready::from_event(e))));
        for &(token, r) in &ready {
            done += 1;
            if token == WAKE {
                self.apply_commands();
                self.deliver_answers();
            } else {
                let (index, low_generation, sub) = split_token(token);
                match self.slots.key_at(index) {
                    Some(slot) if slot.generation as usize & GEN_MASK == low_generation => {
                        self.drive(slot, |p, cx| p.ready(cx, sub, r));
                    }
                    _ => {} // about a run that has ended
                }
            }
        }
        ready.clear();
        self.ready = ready;
        done += self.fire_timers(now);
        let mut resuming = std::mem::take(&mut self.resuming);
        for &slot in &resuming {
            done += 1;
            if let Some(s) = self.slots.get_mut(slot) {
                s.resume_queued = false;
            }
            self.drive(slot, |p, cx| p.resume(cx)); // a run that ended is skipped
        }
        resuming.clear();
        self.resuming = resuming;
        if !self.kept.is_empty() {
            self.kept.expire(now);
        }
        if self.timers.len() > 4 * (self.slots.len() + 3 * self.targets.len()) + 1024 {
            self.compact_timers();
        }
        Ok(done)
    }

    fn apply_commands(&mut self) {
        let commands = std::mem::take(&mut self.shared.commands.lock().queue);
        for c in commands {
            match c {
                Command::Submit(spec, tag) => {
                    self.start_probe(AnyProbe::from_spec(*spec), Owner::Check { tag })
                }
                Command::Trigger(t, r) => {
                    let _ = self.trigger(t, r);
                }
                Command::Call(f) => f(self),
            }
        }
    }

    fn deliver_answers(&mut self) {
        self.mailbox.drain_into(&mut self.answers);
        let answers = std::mem::take(&mut self.answers);
        for a in answers {
            self.drive(Key::from_u64(a.ticket), |p, cx| p.resolved(cx, a.addrs));
        }
        // Blocking jobs (TLS material) answer through the same waker; a job of an ended run is
        // skipped by `drive` like a stale lookup.
        let mut jobs = Vec::new();
        self.mailbox.drain_jobs_into(&mut jobs);
        for j in jobs {
            self.drive(Key::from_u64(j.ticket), |p, cx| p.job_done(cx, j.answer));
        }
    }

    fn fire_timers(&mut self, now: Instant) -> usize {
        let mut n = 0;
        // Take everything due first: a timer that a machine re-arms for "now" while these run
        // fires next turn, after I/O has been polled again.
        let mut due = std::mem::take(&mut self.due);
        self.timers.drain_due(now, &mut due);
        for (at, key) in due.drain(..) {
            match key {
                TimerKey::Probe { slot } => {
                    if let Some(s) = self.slots.get_mut(slot).filter(|s| s.timer == Some(at)) {
                        n += 1;
                        s.timer = None;
                        self.drive(slot, |p, cx| p.timer(cx));
                    }
                }
                TimerKey::Worker { target, role } => {
                    let role = Role::ALL[role as usize];
                    let id = target.to_u64();
                    let due_now = match self.target_mut(id) {
                        Ok(t) => t.workers[role.index()]
                            .as_mut()
                            .filter(|w| w.next_run == Some(at))
                            .map(|w| w.next_run = None)
                            .is_some(),
                        Err(_) => false,
                    };
                    if due_now {
                        n += 1;
                        self.worker_tick(id, role, at, now);
                    }
                }
            }
        }
        self.due = due;
        n
    }

    fn compact_timers(&mut self) {
        let slots = &self.slots;
        let targets = &self.targets;
        self.timers.compact(|at, key| match *key {
            TimerKey::Probe { slot } => slots.get(slot).is_some_and(|s| s.timer == Some(*at)),
            TimerKey::Worker { target, role } => targets.get(target).is_some_and(|t| {
                t.workers[role as usize].as_ref().is_some_and(|w| w.next_run == Some(*at))
            }),
        });
    }

    // ---- running probes ------------------------------------------------------------------

    fn worker_tick(&mut self, id: TargetId, role: Role, scheduled: Instant, now: Instant) {
        // The generator is borrowed apart from the target (both live in `self`).
        let rng = &mut self.rng;
        let Some(t) = self.targets.get_mut(Key::from_u64(id)) else { return };
        let started = t.started();
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        // The period of the worker's state (the schedule's period without the extensions).
        let base = w.state.period();
        let percent = w.state.schedule().jitter_percent;
        w.tick = Some((scheduled, base));
        let period = if percent == 0 { base } else { spread(rng, base, percent) };
        // Fixed rate from the scheduled instant; if the engine fell behind by more than a
        // period, skip the missed ticks (as Go's ticker drops them) instead of bursting.
        let mut next = scheduled + period;
        if next <= now {
            next = now + period;
        }
        if w.in_flight.is_some() {
            w.run_after = true;
        }
        let run = w.in_flight.is_none() && w.state.should_run(started);
        // Built from the prepared spec: nothing of the spec is copied per run.
        let probe = if run { Some(AnyProbe::prepared(&w.spec)) } else { None };
        self.schedule_worker(id, role, next);
        if let Some(probe) = probe {
            // Lateness is measured at the start of the run, not at its end: it says how well
            // the scheduler kept time, not how long the probe took.
            let late_us = Instant::now().saturating_duration_since(scheduled).as_micros() as u64;
            let owner = Owner::Worker { target: Key::from_u64(id), role, late_us };
            self.start_probe(probe, owner);
        }
    }

    fn schedule_worker(&mut self, id: TargetId, role: Role, at: Instant) {
        if let Ok(t) = self.target_mut(id) {
            if let Some(w) = t.workers[role.index()].as_mut() {
                w.next_run = Some(at);
                let key = TimerKey::Worker { target: Key::from_u64(id), role: role as u8 };
                self.timers.push(at, key);
            }
        }
    }

    fn jitter(&mut self, schedule: Schedule) -> Duration {
        if !schedule.jitter {
            return Duration::ZERO;
        }
        let r = next_random(&mut self.rng);
        let nanos = schedule.period.as_nanos().max(1) as u64;
        Duration::from_nanos(r % nanos)
    }

    /// After a recorded result: when the worker's per-state period changed (Failure published,
    /// a transition begun or ended), move the next run to the last tick plus the new period,
    /// or to now if that is already past. Nothing to do for kubelet schedules, whose period
    /// never changes.
    fn reperiod(&mut self, id: TargetId, role: Role, now: Instant) {
        let Ok(t) = self.target_mut(id) else { return };
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        let schedule = w.state.schedule();
        if schedule.unhealthy_period.is_none() && schedule.transition_period.is_none() {
            return;
        }
        let (Some((tick, used)), Some(_)) = (w.tick, w.next_run) else { return };
        let base = w.state.period();
        if base == used {
            return;
        }
        let percent = schedule.jitter_percent;
        w.tick = Some((tick, base));
        let period = if percent == 0 { base } else { spread(&mut self.rng, base, percent) };
        self.schedule_worker(id, role, (tick + period).max(now));
    }

    fn start_probe(&mut self, probe: AnyProbe, owner: Owner) {
        let slot = self.slots.insert(Slot { probe, owner, timer: None, resume_queued: false });
        if let Owner::Worker { target, role, .. } = owner {
            if let Some(t) = self.targets.get_mut(target) {
                if let Some(w) = t.workers[role.index()].as_mut() {
                    w.in_flight = Some(slot);
                }
            }
        }
        self.drive(slot, |p, cx| p.start(cx));
    }

    /// Calls into one in-flight machine, then reschedules its timer or completes it. The
    /// clock is read here, per call: a turn that starts hundreds of probes must not hand the
    /// last ones a start time (and so a deadline) from the beginning of the turn.
    fn drive(&mut self, slot: Key, f: impl FnOnce(&mut AnyProbe, &mut Ctx<'_>) -> Step) {
        let now = Instant::now();
        let Some(s) = self.slots.get_mut(slot) else { return };
        let owner = match s.owner {
            Owner::Worker { target, .. } => Some(target.to_u64()),
            Owner::Check { .. } => None,
        };
        let mut cx = run_ctx(&self.poll, &self.mailbox, now, slot)
            .with_pool(&mut self.pool)
            .with_kept(&mut self.kept, owner);
        // A panic in a probe's own code ends that run, not the engine: the machine is
        // cancelled (or, should that panic too, dropped: closing its descriptors and killing
        // its child) and the run completes Unknown, while every other run and target goes on.
        let step = match catch_unwind(AssertUnwindSafe(|| f(&mut s.probe, &mut cx))) {
            Ok(step) => step,
            Err(payload) => {
                let _ = catch_unwind(AssertUnwindSafe(|| s.probe.cancel(&mut cx)));
                Step::Done(probe::panicked(payload.as_ref()))
            }
        };
        if matches!(step, Step::Yield) && !s.resume_queued {
            s.resume_queued = true;
            self.yielded.push(slot);
        }
        match step {
            Step::Pending | Step::Yield => {
                let want = s.probe.wake_at();
                if want != s.timer {
                    s.timer = want;
                    if let Some(at) = want {
                        self.timers.push(at, TimerKey::Probe { slot });
                    }
                }
            }
            Step::Done(outcome) => {
                let s = self.slots.remove(slot).expect("slot checked above");
                self.complete(s.owner, outcome, now);
            }
        }
    }

    fn complete(&mut self, owner: Owner, outcome: Outcome, now: Instant) {
        match owner {
            Owner::Check { tag } => {
                self.queue.push(Event::Check { tag, outcome: Box::new(outcome) })
            }
            Owner::Worker { target, role, late_us } => {
                let id = target.to_u64();
                let Ok(t) = self.target_mut(id) else { return };
                let Some(w) = t.workers[role.index()].as_mut() else { return };
                w.in_flight = None;
                let verdict = w.state.record(outcome.result);
                let retry =
                    matches!(verdict, Verdict::RetryNow).then(|| AnyProbe::prepared(&w.spec));
                let run_again = retry.is_none() && std::mem::take(&mut w.run_after);
                if self.config.every_run {
                    let o = Box::new(outcome.clone());
                    self.queue.push(Event::Run { target: id, role, outcome: o, late_us });
                }
                if let Some(probe) = retry {
                    self.start_probe(probe, owner);
                } else if run_again {
                    self.schedule_worker(id, role, now);
                } else {
                    self.reperiod(id, role, now);
                }
                if let Verdict::Published(result) = verdict {
                    let o = Some(Box::new(outcome));
                    self.queue.push(Event::State { target: id, role, result, outcome: o });
                    if role == Role::Startup && result == ProbeResult::Success {
                        // As the kubelet's status sync does: check readiness right away once
                        // the target has started, instead of up to a period later.
                        let _ = self.trigger(id, Role::Readiness);
                    }
                }
            }
        }
    }

    fn cancel_worker_run(&mut self, target: TargetId, role: Role) {
        let Ok(t) = self.target_mut(target) else { return };
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        w.next_run = None;
        let Some(slot) = w.in_flight.take() else { return };
        if let Some(mut s) = self.slots.remove(slot) {
            let mut cx =
                run_ctx(&self.poll, &self.mailbox, Instant::now(), slot).with_pool(&mut self.pool);
            s.probe.cancel(&mut cx);
        }
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
            let mut cx = run_ctx(&self.poll, &self.mailbox, now, slot);
            s.probe.cancel(&mut cx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn tokens_carry_slot_generation_and_sub() {
        for (index, generation) in [(0, 1), (1, 2), (7, 12345), (u32::MAX >> 12, u32::MAX)] {
            for sub in 0..TOKENS_PER_PROBE {
                let t = Token(token_base(Key { index, generation }) + sub);
                assert_ne!(t, WAKE);
                assert_eq!(split_token(t), (index, generation as usize & GEN_MASK, sub));
            }
        }
        // The same slot in its next generation gets other tokens: events left for the old run
        // cannot reach the new one.
        let key = |index, generation| Key { index, generation };
        assert_ne!(token_base(key(3, 8)), token_base(key(3, 9)));
        assert_ne!(token_base(key(3, GEN_MASK as u32)), token_base(key(3, GEN_MASK as u32 + 1)));
    }
}

/// xorshift64*: plenty for spreading start times and periods; no need for a crate.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// `period` ± `percent` %, uniformly (Envoy's `interval_jitter_percent`): workers that start
/// together drift apart instead of probing in lockstep forever.
fn spread(rng: &mut u64, period: Duration, percent: u32) -> Duration {
    let nanos = period.as_nanos().min(u64::MAX as u128 / 2) as u64;
    let span = nanos / 100 * u64::from(percent) + nanos % 100 * u64::from(percent) / 100;
    let offset = next_random(rng) % (2 * span + 1);
    Duration::from_nanos((nanos - span + offset).max(1))
}

#[cfg(test)]
mod spread_tests {
    use super::*;

    #[test]
    fn spread_stays_within_the_percentage_and_varies() {
        let mut rng = 7;
        let p = Duration::from_millis(1000);
        let draws: Vec<Duration> = (0..2000).map(|_| spread(&mut rng, p, 10)).collect();
        assert!(
            draws
                .iter()
                .all(|d| (Duration::from_millis(900)..=Duration::from_millis(1100)).contains(d))
        );
        let (lo, hi) = (draws.iter().min().unwrap(), draws.iter().max().unwrap());
        assert!(
            *lo < Duration::from_millis(910) && *hi > Duration::from_millis(1090),
            "{lo:?} {hi:?}"
        );
        let mean = draws.iter().sum::<Duration>() / draws.len() as u32;
        assert!(
            (Duration::from_millis(990)..=Duration::from_millis(1010)).contains(&mean),
            "{mean:?}"
        );
        // Tiny periods and the largest ones neither underflow nor overflow.
        assert!(spread(&mut rng, Duration::from_nanos(1), 50) >= Duration::from_nanos(1));
        let week = Duration::from_secs(7 * 24 * 3600);
        assert!(spread(&mut rng, week, 50) <= week * 3 / 2);
    }
}
