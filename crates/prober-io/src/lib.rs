//! The contract between probe state machines and the poll loops that drive them.
//!
//! A probe (TCP connect, HTTP exchange, exec) is a [`Machine`]: it registers its sockets, pipes
//! and pidfds with a `mio::Registry`, and is driven by readiness events, name-resolution
//! results and one timer until it returns [`Step::Done`] with an [`Outcome`]. Machines never
//! block and never sleep; every deadline is reported through [`Machine::wake_at`] and kept by
//! the driver's timer structure.
//!
//! Two drivers exist: [`run_to_completion`] (one probe on a private `Poll`, used by the
//! blocking `prober::check`) and the engine in `prober-engine` (thousands at once). Both are
//! the same contract, so a probe behaves the same way through either entry point.
//!
//! This crate also owns the helpers for what must not run on a poll thread: the name
//! [`resolver`] pool (getaddrinfo blocks), the [`blocking`] job pool (files: TLS material) and
//! the [`netns`] pool (sockets made in another network namespace), which answer into the
//! asking driver's [`Mailbox`], and the [`reaper`] for killed children that have not exited
//! yet.

#![warn(missing_docs)]

use std::any::Any;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use mio::{Registry, Token};
use prober_core::Outcome;

pub mod blocking;
mod mailbox;
pub mod netns;
mod ns_pool;
mod os_result;
mod pool;
pub mod reaper;
pub mod resolver;
mod retry;
mod run;
mod shared_lookup;
mod sys;
mod workers;

pub use blocking::BlockingJob;
pub use mailbox::{Answer, JobDone, Mailbox, Resolved};
pub use netns::{NsError, NsMade, NsSocketKind, NsSockets, netns_opens, netns_sockets_made};
pub use ns_pool::{NETNS_POOL_IDLE, NETNS_RECHECK, NsPoolStats, NsPools};
pub use os_result::os_result;
pub use pool::{DEFAULT_POOL_CAP, PoolStats, SocketPool};
pub use resolver::{Lookup, Resolver};
pub use retry::retry_interrupted;
pub use run::run_to_completion;

/// How many consecutive tokens a machine may use, starting at [`Ctx::token`]`(0)`: enough for
/// a socket, or an output pipe plus a pidfd.
pub const TOKENS_PER_PROBE: usize = 4;

/// Readiness reported for one of the machine's tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// The source can be read (or has a pending EOF).
    pub readable: bool,
    /// The source can be written (for a connecting socket: the connect finished, well or not).
    pub writable: bool,
    /// EPOLLERR: a pending socket error (read it with `take_error`).
    pub error: bool,
    /// The peer closed (EPOLLHUP or EPOLLRDHUP).
    pub hup: bool,
}

impl Ready {
    /// The readiness of one `mio` event.
    pub fn from_event(ev: &mio::event::Event) -> Ready {
        Ready {
            readable: ev.is_readable(),
            writable: ev.is_writable(),
            error: ev.is_error(),
            hup: ev.is_read_closed() || ev.is_write_closed(),
        }
    }
}

/// What a machine says after each call.
#[derive(Debug)]
pub enum Step {
    /// Still working: wait for readiness, a resolution result, or [`Machine::wake_at`].
    Pending,
    /// Still working and could go on at once, but gives the driver's other work a turn first:
    /// a machine whose peer keeps sending stops after a read budget, so that one flood cannot
    /// hold the poll thread. The driver polls I/O again (without waiting) and then calls
    /// [`Machine::resume`]; readiness, timers and [`Machine::wake_at`] work as after `Pending`.
    Yield,
    /// Finished. The machine has already released every socket, pipe, pidfd and child.
    Done(Outcome),
}

/// What a driver lends a machine for one call.
pub struct Ctx<'a> {
    /// Where to register sources, with tokens from [`Ctx::token`].
    pub registry: &'a Registry,
    /// The driver's clock reading for this call; machines use it instead of calling
    /// `Instant::now()` themselves, so one batch of events shares one reading.
    pub now: Instant,
    base: usize,
    mailbox: &'a Mailbox,
    ticket: u64,
    pool: Option<&'a mut SocketPool>,
    kept: Option<Kept<'a>>,
    shared: Option<&'a mut (dyn Any + Send)>,
}

/// The driver's store of idle kept-alive connections and the owner of the run (see
/// [`Ctx::with_kept`]).
struct Kept<'a> {
    store: &'a mut (dyn Any + Send),
    owner: Option<u64>,
}

impl fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("now", &self.now)
            .field("base", &self.base)
            .field("ticket", &self.ticket)
            .field("pool", &self.pool)
            .field("kept", &self.kept.as_ref().map(|k| k.owner))
            .field("shared", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> Ctx<'a> {
    /// `base` is the first of [`TOKENS_PER_PROBE`] tokens reserved for this machine; `ticket`
    /// identifies the machine in the answers posted to the driver's `mailbox`.
    pub fn new(
        registry: &'a Registry,
        now: Instant,
        base: usize,
        mailbox: &'a Mailbox,
        ticket: u64,
    ) -> Ctx<'a> {
        Ctx { registry, now, base, mailbox, ticket, pool: None, kept: None, shared: None }
    }

    /// Lends the driver's store of sockets shared by many runs (`prober_icmp`'s echo sockets;
    /// held as `Any` here because its type lives above this crate). Only for a store whose
    /// sockets are registered with this context's registry.
    pub fn with_shared(mut self, store: &'a mut (dyn Any + Send)) -> Ctx<'a> {
        self.shared = Some(store);
        self
    }

    /// The driver's store of shared sockets, if it keeps one (an engine does;
    /// [`run_to_completion`] does not, and its runs use sockets of their own).
    pub fn shared(&mut self) -> Option<&mut (dyn Any + Send)> {
        self.shared.as_deref_mut()
    }

    /// The machine's ticket: what the driver knows the run by (in answers posted to its
    /// mailbox, and in a shared socket's list of whom to wake).
    pub fn ticket(&self) -> u64 {
        self.ticket
    }

    /// Lends the driver's pool of disconnected sockets (see [`SocketPool`]): connections made
    /// through this context may take a socket from it and put theirs back when done. Only for
    /// a pool whose sockets are registered with this context's registry.
    pub fn with_pool(mut self, pool: &'a mut SocketPool) -> Ctx<'a> {
        self.pool = Some(pool);
        self
    }

    /// Lends the driver's store of idle kept-alive connections (`prober_transport::keep`; held
    /// as `Any` here because its type lives above this crate), for a run of `owner` (the target
    /// whose run this is, `None` for a one-shot check). Connections in the store are registered
    /// with this context's registry, under tokens of their own when the store makes them (the
    /// driver then routes their readiness to the run holding each), else under tokens of runs
    /// that have ended.
    pub fn with_kept(mut self, store: &'a mut (dyn Any + Send), owner: Option<u64>) -> Ctx<'a> {
        self.kept = Some(Kept { store, owner });
        self
    }

    /// The driver's store of kept-alive connections and the run's owner, if the driver keeps
    /// connections (an engine does; [`run_to_completion`] does not).
    pub fn kept(&mut self) -> Option<(&mut (dyn Any + Send), Option<u64>)> {
        self.kept.as_mut().map(|k| (&mut *k.store, k.owner))
    }

    /// The driver's socket pool, if it keeps one.
    pub fn pool(&mut self) -> Option<&mut SocketPool> {
        self.pool.as_deref_mut()
    }

    /// The `sub`-th token of this machine (`sub < TOKENS_PER_PROBE`).
    pub fn token(&self, sub: usize) -> Token {
        debug_assert!(sub < TOKENS_PER_PROBE);
        Token(self.base + sub)
    }

    /// Starts resolving `host` off the poll thread; the answer arrives through
    /// [`Machine::resolved`]. A machine has at most one resolution in flight, and keeps the
    /// returned guard until the answer arrives: dropping it abandons the lookup.
    #[must_use = "dropping the Lookup abandons the lookup"]
    pub fn resolve(&self, host: &str, port: u16) -> resolver::Lookup {
        self.mailbox.submit(self.ticket, host, port)
    }

    /// Makes one TCP socket per address in `netns` off the poll thread (see [`netns`]),
    /// resolving `host` first through the host's resolver when it is given; the answer arrives
    /// through [`Machine::resolved`] as a lookup's, the sockets in `sockets`. As with
    /// [`Ctx::resolve`], keep the returned guard until the answer arrives.
    #[must_use = "dropping the Lookup abandons the sockets"]
    pub fn sockets_in(
        &self,
        netns: &prober_core::NetNs,
        host: Option<&str>,
        addrs: Vec<SocketAddr>,
        port: u16,
        sockets: netns::NsSockets,
    ) -> resolver::Lookup {
        self.mailbox.submit_netns(self.ticket, host, addrs, port, netns, sockets)
    }

    /// [`Ctx::sockets_in`] for addresses already known, unless the path still names the
    /// namespace `kept` (the identity of sockets the driver keeps for it, [`NsPools`]): then
    /// the answer's [`NsMade`] has no sockets, and a kept one may be taken (see
    /// [`Mailbox::submit_netns_unless`]).
    #[must_use = "dropping the Lookup abandons the sockets"]
    pub fn sockets_in_unless(
        &self,
        netns: &prober_core::NetNs,
        addrs: Vec<SocketAddr>,
        kept: (u64, u64),
        sockets: netns::NsSockets,
    ) -> resolver::Lookup {
        self.mailbox.submit_netns_unless(self.ticket, addrs, netns, kept, sockets)
    }

    /// [`Ctx::sockets_in`] for one UDP socket per address (datagram probes: DNS), made in
    /// `netns` off the poll thread; the answer arrives through [`Machine::resolved`] with the
    /// addresses, the sockets in `sockets`.
    #[must_use = "dropping the Lookup abandons the sockets"]
    pub fn udp_sockets_in(
        &self,
        netns: &prober_core::NetNs,
        addrs: Vec<SocketAddr>,
        sockets: netns::NsSockets,
    ) -> resolver::Lookup {
        let port = addrs.first().map_or(0, SocketAddr::port);
        self.mailbox.submit_netns_kind(
            self.ticket,
            None,
            addrs,
            port,
            netns,
            netns::NsSocketKind::Udp,
            sockets,
        )
    }

    /// One ICMP echo socket for `addr`'s family, made in `netns` off the poll thread (`kind`
    /// says which: [`netns::NsSocketKind::Icmp`]); the answer arrives through
    /// [`Machine::resolved`] with the address, the socket in `sockets`.
    #[must_use = "dropping the Lookup abandons the socket"]
    pub fn icmp_socket_in(
        &self,
        netns: &prober_core::NetNs,
        addr: std::net::IpAddr,
        kind: netns::NsSocketKind,
        sockets: netns::NsSockets,
    ) -> resolver::Lookup {
        let addrs = vec![SocketAddr::new(addr, 0)];
        self.mailbox.submit_netns_kind(self.ticket, None, addrs, 0, netns, kind, sockets)
    }

    /// Runs `work` off the poll thread (see [`blocking`]); its answer arrives through
    /// [`Machine::job_done`]. A machine has at most one job in flight, and keeps the returned
    /// guard until the answer arrives: dropping it skips the job if it has not started.
    #[must_use = "dropping the BlockingJob abandons the job"]
    pub fn run_blocking(
        &self,
        work: impl FnOnce() -> blocking::Answer + Send + 'static,
    ) -> blocking::BlockingJob {
        self.mailbox.submit_blocking(self.ticket, work)
    }
}

/// A probe run as a state machine driven by a poll loop.
///
/// Call order: `start` once, then any number of `ready`, `resolved`, `job_done`, `timer` and
/// (after a [`Step::Yield`]) `resume` calls, until one of them returns [`Step::Done`]; or
/// `cancel` at any time instead. After `Done` or `cancel` the driver drops the machine and calls nothing else
/// on it.
///
/// A machine that succeeds once a TCP connection is established, run by
/// [`run_to_completion`] against a loopback listener, then against the same port closed:
///
/// ```
/// use std::net::{SocketAddr, TcpListener};
/// use std::time::{Duration, Instant};
///
/// use mio::Interest;
/// use mio::net::TcpStream;
/// use prober_core::{Outcome, ProbeResult, Reason};
/// use prober_io::{Ctx, Machine, Ready, Step, run_to_completion};
///
/// struct Connect {
///     addr: SocketAddr,
///     stream: Option<TcpStream>,
///     deadline: Option<Instant>,
/// }
///
/// impl Connect {
///     fn new(addr: SocketAddr) -> Connect {
///         Connect { addr, stream: None, deadline: None }
///     }
///
///     /// Ends the run: the socket deregistered and closed first, as `Done` promises.
///     fn finish(&mut self, cx: &mut Ctx<'_>, outcome: Outcome) -> Step {
///         self.cancel(cx);
///         Step::Done(outcome)
///     }
/// }
///
/// fn failed(e: &std::io::Error) -> Outcome {
///     Outcome::failure(Reason::from_io(e), e.to_string())
/// }
///
/// impl Machine for Connect {
///     fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
///         self.deadline = Some(cx.now + Duration::from_secs(5));
///         let mut stream = match TcpStream::connect(self.addr) {
///             Ok(stream) => stream,
///             Err(e) => return Step::Done(failed(&e)),
///         };
///         if let Err(e) = cx.registry.register(&mut stream, cx.token(0), Interest::WRITABLE) {
///             return Step::Done(Outcome::unknown(Reason::Io, e.to_string()));
///         }
///         self.stream = Some(stream);
///         Step::Pending
///     }
///
///     fn ready(&mut self, cx: &mut Ctx<'_>, _sub: usize, ready: Ready) -> Step {
///         let Some(stream) = &self.stream else { return Step::Pending };
///         if !(ready.writable || ready.error) {
///             return Step::Pending;
///         }
///         // Writable: the connect finished, well or not (or the readiness is spurious).
///         let outcome = match stream.take_error() {
///             Ok(Some(e)) | Err(e) => failed(&e),
///             Ok(None) => match stream.peer_addr() {
///                 Ok(_) => Outcome::success(),
///                 Err(e) if e.kind() == std::io::ErrorKind::NotConnected => return Step::Pending,
///                 Err(e) => failed(&e),
///             },
///         };
///         self.finish(cx, outcome)
///     }
///
///     fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
///         self.finish(cx, Outcome::failure(Reason::Timeout, "connect timed out"))
///     }
///
///     fn wake_at(&self) -> Option<Instant> {
///         self.deadline
///     }
///
///     fn cancel(&mut self, cx: &mut Ctx<'_>) {
///         if let Some(mut stream) = self.stream.take() {
///             let _ = cx.registry.deregister(&mut stream);
///         }
///     }
/// }
///
/// let listener = TcpListener::bind("127.0.0.1:0")?;
/// let addr = listener.local_addr()?;
/// let outcome = run_to_completion(&mut Connect::new(addr));
/// assert_eq!(outcome.result, ProbeResult::Success, "{}", outcome.message);
///
/// drop(listener);
/// let outcome = run_to_completion(&mut Connect::new(addr));
/// assert_eq!((outcome.result, outcome.reason), (ProbeResult::Failure, Reason::Refused));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Machine: Send {
    /// Begins the run at `cx.now` (the start of the probe's one deadline).
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step;

    /// One of the machine's tokens (`cx.token(sub)`) became ready. Spurious readiness is
    /// allowed: machines treat `WouldBlock` as "not yet". But a driver never delivers readiness
    /// meant for another run (the engine's tokens carry the slot's generation; a private poll
    /// drives one machine), so the event is about one of this machine's own sources.
    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step;

    /// The answer to [`Ctx::resolve`].
    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        let _ = (cx, addrs);
        Step::Pending
    }

    /// The answer of the job started with [`Ctx::run_blocking`]: what its closure returned, or
    /// an error when it could not be run.
    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<blocking::Answer>) -> Step {
        let _ = (cx, answer);
        Step::Pending
    }

    /// Called when `cx.now >= self.wake_at()`.
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step;

    /// Goes on after a [`Step::Yield`], once the driver has polled I/O again. A readiness
    /// event may have been delivered in between, so there may be nothing left to do: then
    /// this returns `Pending`.
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        let _ = cx;
        Step::Pending
    }

    /// The next instant at which the machine needs [`Machine::timer`]: its deadline, or an
    /// earlier internal timer.
    fn wake_at(&self) -> Option<Instant>;

    /// Stops the run now, without an outcome: sockets closed and deregistered, children killed
    /// (and handed to the [`reaper`] if they have not exited yet).
    fn cancel(&mut self, cx: &mut Ctx<'_>);
}

/// The Go wording helpers, where they were before they moved to `prober_core` beside the
/// other ones.
pub use prober_core::{format_duration, os_error_text};

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
