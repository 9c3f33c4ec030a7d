//! The connect phase of a probe, one owner for HTTP, gRPC, DNS over TCP and the TCP probe with
//! TLS: [`Dial`] resolves the host, connects (Happy Eyeballs through [`Connector`]) and, when
//! the endpoint asks for TLS, loads the TLS files off the poll thread and shakes hands. It yields a connected
//! [`Transport`] with the phase timings ([`DialTimings`]) and the certificate's `notAfter`, or
//! a [`DialError`] in Go's words, which each probe wraps in its own sentence (the kubelet's
//! texts).
//!
//! A dial is a small state machine driven by the probe's own [`prober_io::Machine`] calls: the
//! probe forwards `ready`, `resolved`, `job_done` and `timer` as a [`DialEvent`] to
//! [`Dial::on`] while [`Dial::is_dialing`], and asks [`Dial::wake_at`] for the connector's
//! internal timer. The probe keeps its one deadline;
//! at the deadline it calls [`Dial::cancel`] and words the timeout itself.
//!
//! With [`Endpoint::keep_alive`], a dial is first satisfied by an idle connection of the same
//! origin from the driver's store ([`crate::keep`]), if one is lent and holds a live one; the
//! probe gives the connection back with [`Dial::keep`] when the exchange allowed it, and calls
//! [`Dial::retry`] when a reused connection failed before any response byte.
//!
//! Timings follow the convention of [`prober_core::Timings`] (curl's `-w`): `connect` and `tls`
//! are measured from the start of the run (given to [`Dial::start`]) to where each phase
//! ended, read from the clock there; `resolve` is the duration of the name lookup.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::connect::{ConnectStep, Connector};
use crate::stream::Peer;
use prober_core::{Reason, Timings, TlsInfo};
#[cfg(feature = "tls")]
use prober_io::BlockingJob;
use prober_io::{Answer, Ctx, Ready};

use crate::Transport;
#[cfg(feature = "tls")]
use crate::TransportError;
use crate::keep::{self, Idle, Origin};
#[cfg(feature = "tls")]
use crate::tls::{TlsClient, TlsConn, TlsSetup, finish_setup, start_setup};

pub use crate::endpoint::Endpoint;

/// What a probe's machine received while its dial runs, handed to [`Dial::on`] as one value:
/// the probe forwards every machine call of the dialing phase the same way.
#[derive(Debug)]
pub enum DialEvent {
    /// Readiness of the machine's token `sub` ([`prober_io::Machine::ready`]).
    Ready(usize, Ready),
    /// The resolver's answer ([`prober_io::Machine::resolved`]).
    Resolved(io::Result<Vec<SocketAddr>>),
    /// The answer of the job that loads the TLS files ([`prober_io::Machine::job_done`]).
    JobDone(io::Result<Answer>),
    /// A timer call before the probe's deadline ([`prober_io::Machine::timer`]): the
    /// connector's own timer.
    Timer,
}

/// What a dial says after each call.
#[derive(Debug)]
pub enum DialStep {
    /// Still dialing: wait for readiness, the resolver, the TLS files or [`Dial::wake_at`].
    Pending,
    /// Connected (and TLS established when asked for): the connection is registered on the
    /// machine's token 0.
    Connected(Transport),
    /// No connection; every socket of the dial has been released.
    Failed(DialError),
}

/// Why a dial failed. The texts are Go's, without the probe's own prefix (`Get "url": `,
/// `error: failed to connect service at ...: `), which each probe adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialError {
    /// The endpoint asks for TLS and this build has none (feature `tls` off).
    TlsNotBuiltIn,
    /// The TLS client could not be set up (files, server name): not the target's fault, an
    /// Unknown outcome. `message` is the whole sentence (`TLS setup failed: ...`).
    Setup {
        /// `tls`, or `resource` when the node could not run the job that loads the files.
        reason: Reason,
        /// The sentence for the outcome.
        message: String,
    },
    /// Name lookup, connect or TLS handshake failed: Go's text of the error
    /// (`dial tcp 127.0.0.1:1: connect: connection refused`, `tls: ...`).
    Connect {
        /// Why, as a reason code.
        reason: Reason,
        /// Go's text of the error.
        detail: String,
    },
}

/// The phase timings of the last dial (see the module docs for the convention). All `None`
/// for a dial that got no further, or that was satisfied by a kept connection (then `reused`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DialTimings {
    /// How long the name lookup took (`None` for an IP literal).
    pub resolve: Option<Duration>,
    /// Start of the run to the established TCP connection.
    pub connect: Option<Duration>,
    /// Start of the run to the end of the TLS handshake (`None` without TLS).
    pub tls: Option<Duration>,
    /// The connection was a kept one, made by an earlier run: nothing was resolved, connected
    /// or shaken hands.
    pub reused: bool,
}

impl DialTimings {
    /// Copies these phases into an outcome's timings.
    pub fn apply(&self, timings: &mut Timings) {
        timings.resolve = self.resolve;
        timings.connect = self.connect;
        timings.tls = self.tls;
        timings.reused = self.reused;
    }
}

// The connector is inline: boxing it would cost every run an allocation (tests/allocations.rs
// in `prober-engine` counts them), and the dial lives in the probe, not in a state enum.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Default)]
enum Phase {
    #[default]
    Idle,
    /// Waiting for the TLS files, loaded off the poll thread, before connecting.
    #[cfg(feature = "tls")]
    LoadingTls(BlockingJob),
    Connecting(Connector),
    /// Boxed: the TLS state is large and only `https` and TLS gRPC need it.
    #[cfg(feature = "tls")]
    Handshake(Box<TlsConn>),
}

/// One probe's connect phase (see the module docs). Reused across the hops of a run: its TLS
/// client is built once per run and kept for later hops with the same options.
#[derive(Debug, Default)]
pub struct Dial {
    phase: Phase,
    started: Option<Instant>,
    timings: DialTimings,
    cert_not_after: Option<i64>,
    /// What the last dial's handshake showed (also that of a kept connection).
    tls_info: Option<Arc<TlsInfo>>,
    #[cfg(feature = "tls")]
    tls: Option<TlsClient>,
    /// The origin of the kept connection this dial was given, kept to file the connection
    /// under again without allocating.
    origin: Option<Origin>,
    /// A plain connection waiting for its TLS client to shake hands (STARTTLS, see
    /// [`Dial::start_tls`]).
    upgrade: Option<crate::conn::Conn>,
    /// The TCP address of the last dial's connection.
    peer: Option<SocketAddr>,
    /// The protocol state kept with the connection this dial was given.
    session: Option<keep::Session>,
}

impl Dial {
    /// A dial that has not started.
    pub fn new() -> Dial {
        Dial::default()
    }

    /// Starts dialing `ep`; `started` is the start of the run, which the timings count from.
    /// Forgets the timings and certificate of a previous dial.
    pub fn start(&mut self, cx: &mut Ctx<'_>, started: Instant, ep: &Endpoint<'_>) -> DialStep {
        self.started = Some(started);
        self.forget_last();
        if ep.keep_alive {
            if let Some(conn) = self.take_kept(cx, ep) {
                return DialStep::Connected(conn);
            }
        }
        self.dial(cx, ep)
    }

    /// Dials `ep` again on a fresh connection, after a reused one failed before any response
    /// byte (the caller has closed it): the server closed it just as it was reused. The run's
    /// start and deadline stay.
    pub fn retry(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> DialStep {
        if let Some((store, _)) = keep::store(cx) {
            store.note_retry();
        }
        self.forget_last();
        self.dial(cx, ep)
    }

    /// Forgets the phase, timings and certificate of the previous dial (not the run's start,
    /// nor the TLS client built for the run).
    fn forget_last(&mut self) {
        self.phase = Phase::Idle;
        self.timings = DialTimings::default();
        self.cert_not_after = None;
        self.tls_info = None;
        self.peer = None;
        self.session = None;
    }

    /// Whether the connection of the last dial was a kept one (see [`Dial::retry`]).
    pub fn reused(&self) -> bool {
        self.timings.reused
    }

    /// Ends the exchange on `conn`, which may carry another request: into the driver's store
    /// when it lends one with room, else closed. The caller has checked that the response
    /// allowed it (read to its end, no `Connection: close`).
    pub fn keep(&mut self, cx: &mut Ctx<'_>, conn: Transport, ep: &Endpoint<'_>) {
        self.keep_with(cx, conn, ep, None);
    }

    /// [`Dial::keep`] for a protocol that keeps state with the connection (an HTTP/2 client):
    /// the next run of the same origin gets it back from [`Dial::take_session`].
    pub fn keep_session(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        ep: &Endpoint<'_>,
        session: keep::Session,
    ) {
        self.keep_with(cx, conn, ep, Some(session));
    }

    /// The protocol state kept with the connection this dial was given, if any (taken once).
    pub fn take_session(&mut self) -> Option<keep::Session> {
        self.session.take()
    }

    fn keep_with(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        ep: &Endpoint<'_>,
        session: Option<keep::Session>,
    ) {
        self.session = None;
        let origin = match self.origin.take() {
            Some(o) if o.matches(ep) => Some(o),
            _ => None,
        };
        let cert_not_after = self.cert_not_after;
        let tls_info = self.tls_info.clone();
        let registry = cx.registry;
        let mut conn = conn;
        if let Some((store, owner)) = keep::store(cx).filter(|(s, _)| s.has_room()) {
            // A connection that cannot be registered under its own token is closed.
            if store.adopt(registry, &mut conn).is_ok() {
                let origin = origin.unwrap_or_else(|| Origin::of(ep));
                let since = Instant::now();
                store.put(Idle { origin, conn, since, owner, cert_not_after, tls_info, session });
                return;
            }
        }
        conn.close(cx);
    }

    /// An idle connection of `ep`'s origin from the driver's store, lent to this run (its
    /// readiness routed to the run's token 0, see [`keep::KeptConns::lend`]).
    fn take_kept(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> Option<Transport> {
        let (token, registry, now) = (cx.token(0), cx.registry, cx.now);
        let (store, _) = keep::store(cx)?;
        // The driver's clock reading for this call: no second reading for the idle check.
        let mut idle = store.take(ep, now)?;
        // A connection kept by a probe with another allow-list (or none) is this probe's only
        // if its address passes this one's: dropped (closed) otherwise, and the dial goes on.
        let peer = tcp_addr(idle.conn.peer());
        if let (Some(filter), Some(addr)) = (ep.filter, peer) {
            filter.check(Some(ep.host), addr).ok()?;
        }
        // A connection that cannot be registered again is closed (dropped) and a new one made.
        store.lend(registry, &mut idle.conn, token).ok()?;
        self.timings.reused = true;
        self.peer = peer;
        self.cert_not_after = idle.cert_not_after;
        self.tls_info = idle.tls_info;
        self.origin = Some(idle.origin);
        self.session = idle.session;
        Some(idle.conn)
    }

    fn dial(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> DialStep {
        if ep.tls.is_some() {
            match self.tls_setup(cx, ep) {
                Ok(true) => {}
                Ok(false) => return DialStep::Pending,
                Err(e) => return DialStep::Failed(e),
            }
        }
        self.connect(cx, ep)
    }

    /// Upgrades `conn`, a plain connection this dial made, to TLS with `ep.tls` (STARTTLS: the
    /// protocol's exchange has asked the server to start TLS): the TLS files are loaded if
    /// needed, then the handshake runs on the same connection, and the dial says `Connected`
    /// with a TLS transport, or `Failed`, as a dial with TLS from the start would. The
    /// connect timing stays; `tls` is when this handshake ended.
    pub fn start_tls(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: crate::conn::Conn,
        ep: &Endpoint<'_>,
    ) -> DialStep {
        self.upgrade = Some(conn);
        match self.tls_setup(cx, ep) {
            Ok(true) => self.upgrade_now(cx, ep),
            Ok(false) => DialStep::Pending,
            Err(e) => {
                if let Some(conn) = self.upgrade.take() {
                    conn.close(cx);
                }
                DialStep::Failed(e)
            }
        }
    }

    /// The TLS client is ready: shake hands on the connection waiting for it.
    #[cfg(feature = "tls")]
    fn upgrade_now(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> DialStep {
        let Some(conn) = self.upgrade.take() else {
            return DialStep::Pending;
        };
        let client = self.tls.as_ref().expect("set up before the upgrade");
        match client.connect(conn, cx.token(0), tls_name(ep)) {
            Ok(tls) => self.handshake(cx, Box::new(tls)),
            Err((conn, e)) => {
                conn.close(cx);
                let message = format!("TLS setup failed: {e}");
                DialStep::Failed(DialError::Setup { reason: Reason::Tls, message })
            }
        }
    }

    /// Without TLS built in, `tls_setup` has refused already.
    #[cfg(not(feature = "tls"))]
    fn upgrade_now(&mut self, cx: &mut Ctx<'_>, _: &Endpoint<'_>) -> DialStep {
        if let Some(conn) = self.upgrade.take() {
            conn.close(cx);
        }
        DialStep::Failed(DialError::TlsNotBuiltIn)
    }

    /// Whether a dial is in progress (its calls must be forwarded).
    pub fn is_dialing(&self) -> bool {
        !matches!(self.phase, Phase::Idle) || self.upgrade.is_some()
    }

    /// The phase timings of the last dial, as far as it got.
    pub fn timings(&self) -> DialTimings {
        self.timings
    }

    /// `notAfter` of the leaf certificate of the last dial's handshake (seconds since the
    /// epoch), also when verification failed; `None` without TLS.
    pub fn cert_not_after(&self) -> Option<i64> {
        self.cert_not_after
    }

    /// What the last dial's TLS handshake showed (version, cipher suite, certificates); that
    /// of the handshake which made a kept connection when it was reused; `None` without TLS.
    pub fn tls_info(&self) -> Option<Arc<TlsInfo>> {
        self.tls_info.clone()
    }

    /// The TCP address the last dial connected to (after resolution); `None` before a
    /// connection and for a Unix socket.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// When the dial needs [`Dial::timer`]: the start of the connector's second address family.
    pub fn wake_at(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Connecting(c) => c.wake_at(),
            _ => None,
        }
    }

    /// One event of the probe's machine while dialing: the one entry point a probe needs (the
    /// four below, by event).
    pub fn on(&mut self, cx: &mut Ctx<'_>, event: DialEvent, ep: &Endpoint<'_>) -> DialStep {
        match event {
            DialEvent::Ready(sub, ready) => self.ready(cx, sub, ready, ep),
            DialEvent::Resolved(addrs) => self.resolved(cx, addrs, ep),
            DialEvent::JobDone(answer) => self.job_done(cx, answer, ep),
            DialEvent::Timer => self.timer(cx, ep),
        }
    }

    /// Readiness of one of the machine's tokens: the connector may race two sockets (tokens 0
    /// and 1); the handshake is on token 0.
    pub fn ready(
        &mut self,
        cx: &mut Ctx<'_>,
        sub: usize,
        ready: Ready,
        ep: &Endpoint<'_>,
    ) -> DialStep {
        match std::mem::take(&mut self.phase) {
            Phase::Connecting(mut connector) => {
                let step = connector.ready(cx, sub, ready);
                self.on_connect_step(cx, ep, connector, step)
            }
            #[cfg(feature = "tls")]
            Phase::Handshake(tls) if sub == 0 => self.handshake(cx, tls),
            other => {
                self.phase = other;
                DialStep::Pending
            }
        }
    }

    /// The resolver's answer (see [`Ctx::resolve`]).
    pub fn resolved(
        &mut self,
        cx: &mut Ctx<'_>,
        addrs: io::Result<Vec<SocketAddr>>,
        ep: &Endpoint<'_>,
    ) -> DialStep {
        match std::mem::take(&mut self.phase) {
            Phase::Connecting(mut connector) => {
                let step = connector.resolved(cx, addrs);
                self.on_connect_step(cx, ep, connector, step)
            }
            other => {
                self.phase = other;
                DialStep::Pending
            }
        }
    }

    /// The answer of the job that loads the TLS files (see [`Ctx::run_blocking`]).
    pub fn job_done(
        &mut self,
        cx: &mut Ctx<'_>,
        answer: io::Result<Answer>,
        ep: &Endpoint<'_>,
    ) -> DialStep {
        match std::mem::take(&mut self.phase) {
            #[cfg(feature = "tls")]
            Phase::LoadingTls(_job) => {
                let built = match ep.tls {
                    Some(opts) => finish_setup(answer, opts, ep.alpn, ep.tls_sessions),
                    // Never loads without them.
                    None => Err((Reason::Tls, "no TLS options".to_string())),
                };
                match built {
                    Ok(client) => {
                        self.tls = Some(client);
                        if self.upgrade.is_some() {
                            return self.upgrade_now(cx, ep);
                        }
                        self.connect(cx, ep)
                    }
                    Err((reason, e)) => {
                        if let Some(conn) = self.upgrade.take() {
                            conn.close(cx);
                        }
                        let message = format!("TLS setup failed: {e}");
                        DialStep::Failed(DialError::Setup { reason, message })
                    }
                }
            }
            other => {
                let _ = (cx, answer, ep);
                self.phase = other;
                DialStep::Pending
            }
        }
    }

    /// The connector's timer (its second address family); the probe's deadline is its own.
    pub fn timer(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> DialStep {
        match std::mem::take(&mut self.phase) {
            Phase::Connecting(mut connector) => {
                let step = connector.timer(cx);
                self.on_connect_step(cx, ep, connector, step)
            }
            other => {
                self.phase = other;
                DialStep::Pending
            }
        }
    }

    /// Stops dialing: half-open sockets and a handshake in progress are closed, a file job or
    /// a lookup is abandoned.
    pub fn cancel(&mut self, cx: &mut Ctx<'_>) {
        if let Some(conn) = self.upgrade.take() {
            conn.close(cx);
        }
        match std::mem::take(&mut self.phase) {
            Phase::Connecting(mut c) => c.cancel(cx),
            #[cfg(feature = "tls")]
            Phase::Handshake(tls) => tls.close(cx),
            #[cfg(feature = "tls")]
            Phase::LoadingTls(_) => {}
            Phase::Idle => {}
        }
    }

    /// Time from the start of the run to now. Phases are stamped with the clock read where
    /// they end, not the driver's reading for the call: one call can carry a run through
    /// several phases.
    fn since_start(&self) -> Duration {
        let now = Instant::now();
        now.saturating_duration_since(self.started.unwrap_or(now))
    }

    /// Makes sure a TLS client is ready: `Ok(true)` when it is, `Ok(false)` when its files are
    /// being loaded off the poll thread (the dial goes on in `job_done`).
    #[cfg(feature = "tls")]
    fn tls_setup(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> Result<bool, DialError> {
        let Some(opts) = ep.tls else { return Ok(true) };
        if self.tls.is_some() {
            return Ok(true);
        }
        match start_setup(cx, opts, ep.alpn, ep.tls_sessions) {
            TlsSetup::Ready(Ok(c)) => {
                self.tls = Some(c);
                Ok(true)
            }
            TlsSetup::Ready(Err(e)) => Err(DialError::Setup {
                reason: Reason::Tls,
                message: format!("TLS setup failed: {e}"),
            }),
            TlsSetup::Loading(job) => {
                self.phase = Phase::LoadingTls(job);
                Ok(false)
            }
        }
    }

    #[cfg(not(feature = "tls"))]
    fn tls_setup(&mut self, _: &mut Ctx<'_>, ep: &Endpoint<'_>) -> Result<bool, DialError> {
        match ep.tls {
            Some(_) => Err(DialError::TlsNotBuiltIn),
            None => Ok(true),
        }
    }

    fn connect(&mut self, cx: &mut Ctx<'_>, ep: &Endpoint<'_>) -> DialStep {
        let mut connector = match ep.unix {
            Some(socket) => Connector::unix(socket, ep.close),
            None => Connector::new(ep.host, ep.port, ep.close)
                .with_nodelay(ep.nodelay)
                .with_filter(ep.filter.cloned())
                .with_netns(ep.netns)
                .with_ip_family(ep.ip_family)
                .with_source(ep.source),
        };
        let step = connector.start(cx, 0);
        self.on_connect_step(cx, ep, connector, step)
    }

    fn on_connect_step(
        &mut self,
        cx: &mut Ctx<'_>,
        ep: &Endpoint<'_>,
        connector: Connector,
        step: ConnectStep,
    ) -> DialStep {
        self.timings.resolve = connector.resolve_time();
        match step {
            ConnectStep::Pending => {
                self.phase = Phase::Connecting(connector);
                DialStep::Pending
            }
            ConnectStep::Connected(conn) => {
                self.timings.connect = Some(self.since_start());
                self.peer = tcp_addr(conn.peer());
                #[cfg(feature = "tls")]
                if ep.tls.is_some() {
                    let client = self.tls.as_ref().expect("set up before connecting");
                    return match client.connect(conn, cx.token(0), tls_name(ep)) {
                        Ok(tls) => self.handshake(cx, Box::new(tls)),
                        Err((conn, e)) => {
                            conn.close(cx);
                            let message = format!("TLS setup failed: {e}");
                            DialStep::Failed(DialError::Setup { reason: Reason::Tls, message })
                        }
                    };
                }
                let _ = (cx, ep);
                DialStep::Connected(Transport::Plain(conn))
            }
            ConnectStep::Failed(e) => {
                DialStep::Failed(DialError::Connect { reason: e.reason, detail: e.message })
            }
        }
    }

    #[cfg(feature = "tls")]
    fn handshake(&mut self, cx: &mut Ctx<'_>, mut tls: Box<TlsConn>) -> DialStep {
        let mut r = tls.handshake();
        // A resumed handshake's facts are those of the full one that made its session.
        if let (Ok(true), Some(client)) = (&r, &self.tls) {
            if let Err(e) = client.settle(&tls) {
                r = Err(TransportError::Tls(e));
            }
        }
        if !matches!(r, Ok(false)) {
            self.cert_not_after = self.tls.as_ref().and_then(TlsClient::cert_not_after);
            self.tls_info = self.tls.as_ref().and_then(|c| c.tls_info(Some(&tls)));
        }
        match r {
            Ok(true) => {
                self.timings.tls = Some(self.since_start());
                DialStep::Connected(Transport::Tls(tls))
            }
            Ok(false) | Err(TransportError::WouldBlock) => {
                tls.sync_interest(cx.registry);
                self.phase = Phase::Handshake(tls);
                DialStep::Pending
            }
            Err(e) => {
                let mut conn = Transport::Tls(tls);
                let (reason, detail) = e.describe(&mut conn);
                conn.close(cx);
                DialStep::Failed(DialError::Connect { reason, detail })
            }
        }
    }
}

/// The address of a TCP peer (`None` for a Unix socket).
fn tcp_addr(peer: &Peer) -> Option<SocketAddr> {
    match peer {
        Peer::Tcp(addr) => Some(*addr),
        Peer::Unix(_) => None,
    }
}

/// The name a TLS connection to `ep` sends as SNI and verifies: its options' server name, else
/// its host. Taken per connection, not from the run's [`TlsClient`] (built once, for the first
/// TLS hop): an HTTP redirect hop to another host has the same options without the name.
#[cfg(feature = "tls")]
fn tls_name<'a>(ep: &Endpoint<'a>) -> &'a str {
    ep.tls.and_then(|o| o.server_name.as_deref()).unwrap_or(ep.host)
}
