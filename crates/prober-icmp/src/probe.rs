//! The ICMP echo probe as a [`Machine`]: resolve, open the socket (setup), send the requests
//! at their interval and read what comes back until every request is answered or failed, or
//! the deadline passes.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use mio::Interest;
use mio::unix::SourceFd;
use prober_core::{
    IcmpFacts, IcmpSocket, IcmpSpec, IpFamily, Outcome, ProbeResult, Reason, os_error_text,
};
use prober_io::{Ctx, Machine, NsSocketKind, NsSockets, Ready, Step};

use crate::echoes::{self, Echoes, Fate};
use crate::packet;
use crate::receive::{Received, receive};
use crate::shared::{Inbound, Joined, SharedSockets, SocketKey};
use crate::socket::{EchoSocket, OpenError, Options};

/// The sub-token an engine passes to [`Machine::ready`] when a shared socket has put
/// messages in the run's inbox (see [`SharedSockets::read`]).
pub const SHARED_READY: usize = 1;

/// The socket a run sends on: its own, or its place on one the engine shares.
#[derive(Debug)]
enum RunSocket {
    Own(EchoSocket),
    Shared(Joined),
}

/// How many datagrams one readiness call reads before it gives the loop a turn: a target (or
/// anyone on the path) that floods us cannot hold the poll thread.
const READ_BUDGET: usize = 64;

/// An ICMP echo probe: Success when a reply comes back (with several packets: when the share
/// lost is at most the spec's `max_loss_percent`), Failure with reason `timeout` when none does within
/// the deadline, `unreachable` when a router or the target answers with destination
/// unreachable or time exceeded, `dns` when the name does not resolve; Unknown when this node
/// cannot send (no socket allowed: the message names both ways and the sysctl).
#[derive(Debug)]
pub struct IcmpProbe {
    spec: IcmpSpec,
    timeout: Duration,
    started: Option<Instant>,
    deadline: Option<Instant>,
    next_send: Option<Instant>,
    dst: Option<IpAddr>,
    lookup: Option<prober_io::Lookup>,
    /// The socket being made in the spec's network namespace, off the poll thread.
    ns_job: Option<(prober_io::Lookup, NsSockets)>,
    setup_started: Option<Instant>,
    socket: Option<RunSocket>,
    echoes: Option<Echoes>,
    facts: IcmpFacts,
    /// Readiness was left unread after a budget: [`Machine::resume`] goes on.
    resume_owed: bool,
    buf: Vec<u8>,
}

impl IcmpProbe {
    /// The machine for one run of `spec`, with `timeout` as the run's one deadline. The spec
    /// must have passed [`IcmpSpec::validate`].
    pub fn new(spec: &IcmpSpec, timeout: Duration) -> IcmpProbe {
        IcmpProbe {
            spec: spec.clone(),
            timeout,
            started: None,
            deadline: None,
            next_send: None,
            dst: None,
            lookup: None,
            ns_job: None,
            setup_started: None,
            socket: None,
            echoes: None,
            facts: IcmpFacts::default(),
            resume_owed: false,
            buf: Vec::new(),
        }
    }

    /// What the run learned (complete once it returned [`Step::Done`]).
    pub fn facts(&self) -> &IcmpFacts {
        &self.facts
    }

    fn done(&mut self, cx: &mut Ctx<'_>, mut o: Outcome) -> Step {
        self.close(cx);
        if let Some(echoes) = &self.echoes {
            self.facts.stats = echoes.stats();
        }
        o.timings.resolve = (self.facts.resolve > Duration::ZERO).then_some(self.facts.resolve);
        o.timings.first_byte = self.facts.stats.first_rtt;
        o.timings.total = cx.now.saturating_duration_since(self.started.unwrap_or(cx.now));
        o.peer = self.dst.map(|ip| SocketAddr::new(ip, 0));
        o.icmp = Some(Box::new(self.facts));
        self.deadline = None;
        self.next_send = None;
        Step::Done(o)
    }

    fn close(&mut self, cx: &mut Ctx<'_>) {
        match self.socket.take() {
            Some(RunSocket::Own(socket)) => {
                let fd: RawFd = socket.raw_fd();
                let _ = cx.registry.deregister(&mut SourceFd(&fd));
            }
            Some(RunSocket::Shared(_)) => {
                let (registry, ticket) = (cx.registry, cx.ticket());
                if let Some(store) = shared_store(cx) {
                    store.leave(registry, ticket);
                }
            }
            None => {}
        }
        self.lookup = None;
        self.ns_job = None;
    }

    /// The address to probe: the first of the family the spec asks for.
    fn pick(&self, addrs: &[SocketAddr]) -> Option<IpAddr> {
        // An IPv4-mapped IPv6 address counts as IPv4, as for every kind (`IpFamily::is_v6`).
        let of = |v4: bool| addrs.iter().map(SocketAddr::ip).find(|ip| IpFamily::is_v6(*ip) != v4);
        match self.spec.connect.ip_family {
            IpFamily::Any => addrs.first().map(SocketAddr::ip),
            IpFamily::V4 => of(true),
            IpFamily::V6 => of(false),
            IpFamily::PreferV4 => of(true).or_else(|| of(false)),
            IpFamily::PreferV6 => of(false).or_else(|| of(true)),
        }
    }

    /// Opens the socket and sends the first request.
    fn setup(&mut self, cx: &mut Ctx<'_>, dst: IpAddr) -> Step {
        // `::ffff:10.0.0.1` is pinged over IPv4: ICMPv6 cannot reach a mapped address.
        let dst = dst.to_canonical();
        self.dst = Some(dst);
        let name = self.spec.host.parse::<IpAddr>().is_err().then_some(self.spec.host.as_str());
        if let Some(filter) = &self.spec.connect.address_filter {
            // As a connection's check (prober_core::AddressFilter::check) without the port
            // ranges: an echo has no port.
            let ip = prober_core::allow::canonical_ip(dst);
            let ip_text = ip.to_string();
            let denied = if !filter.host_allowed(name.unwrap_or(&ip_text)) {
                Some(format!("host {} is not allowed", name.unwrap_or(&ip_text)))
            } else if !filter.ip_allowed(ip) {
                Some(format!("{ip} is not in an allowed network"))
            } else {
                None
            };
            if let Some(why) = denied {
                return self
                    .done(cx, Outcome::failure(Reason::Denied, format!("ping {dst}: {why}")));
            }
        }
        if let Some(src) = self.spec.connect.source_address {
            if src.is_ipv4() != dst.is_ipv4() {
                let m = format!("ping {dst}: the source address {src} is of the other family");
                return self.done(cx, Outcome::failure(Reason::Unreachable, m));
            }
        }
        self.setup_started = Some(Instant::now());
        if let Some(netns) = &self.spec.connect.netns {
            // The socket is made in the namespace off the poll thread; it arrives as a
            // lookup's answer (`resolved`).
            let kind = NsSocketKind::Icmp {
                raw: self.spec.socket == IcmpSocket::Raw,
                fallback: self.spec.socket == IcmpSocket::Auto,
            };
            let slot = NsSockets::default();
            let job = cx.icmp_socket_in(netns, dst, kind, slot.clone());
            self.ns_job = Some((job, slot));
            return Step::Pending;
        }
        self.open(cx, dst, None)
    }

    /// The socket made in the spec's namespace has come (or why not).
    fn ns_socket_made(&mut self, cx: &mut Ctx<'_>, slot: &NsSockets) -> Step {
        let Some(dst) = self.dst else { return Step::Pending };
        match slot.lock().take() {
            Some(Ok(prober_io::NsMade { sockets: mut fds, .. })) if !fds.is_empty() => {
                self.open(cx, dst, Some(fds.swap_remove(0)))
            }
            Some(Err(e)) => {
                self.done(cx, Outcome::new(e.reason.failed_result(), e.reason, e.message))
            }
            _ => {
                let m = format!("ping {dst}: no socket was made in the network namespace");
                self.done(cx, Outcome::unknown(Reason::Io, m))
            }
        }
    }

    /// Takes a place on the engine's shared socket for the run's family, options and namespace
    /// (opened now if there is none), else opens a socket of its own (outside an engine, or
    /// when the shared one has no room); then sends the first request. `made` is the socket
    /// made in the spec's namespace.
    fn open(&mut self, cx: &mut Ctx<'_>, dst: IpAddr, made: Option<std::os::fd::OwnedFd>) -> Step {
        let options = Options {
            ttl: self.spec.ttl,
            dont_fragment: self.spec.dont_fragment,
            source: self.spec.connect.source_address,
        };
        let ipv6 = dst.is_ipv6();
        let choice = self.spec.socket;
        let random = random_u64();
        let data = echoes::payload(random_u64(), self.spec.payload_size);
        let mut made = made;
        let mut open = |want: u16| match made.take() {
            Some(fd) => EchoSocket::adopt(fd, ipv6, options, want),
            None if self.spec.connect.netns.is_some() => Err(OpenError {
                error: io::Error::other("no socket"),
                message: format!("ping {dst}: no socket was made in the network namespace"),
            }),
            None => EchoSocket::open(dst, choice, options, want),
        };
        // The namespace's identity as its thread last saw it (when it made this socket): a
        // re-created namespace at the same path gets a shared socket of its own.
        let netns = self.spec.connect.netns.as_ref().map(|ns| {
            let open = ns.open_slot().lock().unwrap_or_else(|e| e.into_inner()).clone();
            open.map_or((0, 0), |o| (o.dev, o.ino))
        });
        let key = SocketKey { ipv6, choice, options, netns };
        let (registry, ticket) = (cx.registry, cx.ticket());
        let count = self.spec.packets as u16;
        let joined = match shared_store(cx) {
            Some(store) => {
                let opener = || open(random as u16);
                match store.join(
                    registry,
                    ticket,
                    key,
                    opener,
                    dst,
                    data.clone(),
                    count,
                    random_u64,
                ) {
                    Ok(joined) => joined,
                    Err(e) => return self.open_failed(cx, e),
                }
            }
            None => None,
        };
        let (socket, kind, id, first_seq) = match joined {
            Some(j) => (RunSocket::Shared(j), j.kind, j.id, j.first_seq),
            None => {
                let socket = match open(random as u16) {
                    Ok(s) => s,
                    Err(e) => return self.open_failed(cx, e),
                };
                let fd = socket.raw_fd();
                let token = cx.token(0);
                if let Err(e) = cx.registry.register(&mut SourceFd(&fd), token, Interest::READABLE)
                {
                    let m = format!("epoll: {e}");
                    return self.done(cx, Outcome::unknown(Reason::from_io(&e), m));
                }
                let (kind, id) = (socket.kind, socket.id);
                (RunSocket::Own(socket), kind, id, (random >> 16) as u16)
            }
        };
        self.facts.socket = Some(kind);
        self.facts.id = id;
        let packets = self.spec.packets as usize;
        self.echoes = Some(Echoes::with_data(dst, id, first_seq, packets, data));
        if matches!(socket, RunSocket::Own(_)) {
            self.buf = vec![0; 65_536.min(self.spec.payload_size + 512).max(1500)];
        }
        self.socket = Some(socket);
        self.facts.setup = self.setup_started.map_or(Duration::ZERO, |t| t.elapsed());
        self.send_next(cx)
    }

    /// The run's outcome when no socket could be opened.
    fn open_failed(&mut self, cx: &mut Ctx<'_>, e: OpenError) -> Step {
        let reason = Reason::from_io(&e.error);
        let result =
            if reason == Reason::Unreachable { ProbeResult::Failure } else { ProbeResult::Unknown };
        let reason = if result == ProbeResult::Unknown && reason != Reason::Resource {
            Reason::Io
        } else {
            reason
        };
        self.done(cx, Outcome::new(result, reason, e.message))
    }

    /// Sends the next request, and schedules the one after.
    fn send_next(&mut self, cx: &mut Ctx<'_>) -> Step {
        let (Some(socket), Some(echoes), Some(dst)) = (&self.socket, &mut self.echoes, self.dst)
        else {
            return Step::Pending;
        };
        let Some(seq) = echoes.next_seq() else { return Step::Pending };
        let msg = packet::echo_request(dst.is_ipv6(), echoes.id, seq, &echoes.data);
        let sent_at = Instant::now();
        let sent = match socket {
            RunSocket::Own(socket) => socket.send(&msg, dst),
            RunSocket::Shared(j) => match shared_store(cx) {
                Some(store) => store.send(j.socket, &msg, dst),
                None => Err(io::Error::other("the engine's shared ICMP sockets are gone")),
            },
        };
        match sent {
            Ok(()) => echoes.sent(Some(sent_at)),
            Err(e)
                if Reason::from_io(&e) == Reason::Unreachable
                    || e.raw_os_error() == Some(libc::EMSGSIZE) =>
            {
                echoes.sent(None);
                if self.spec.packets == 1 {
                    let m = format!("ping {dst}: sendto: {}", os_error_text(&e));
                    return self.done(cx, Outcome::failure(Reason::from_io(&e), m));
                }
            }
            Err(e) => {
                let m = format!("ping {dst}: sendto: {}", os_error_text(&e));
                return self.done(
                    cx,
                    Outcome::new(Reason::from_io(&e).failed_result(), Reason::from_io(&e), m),
                );
            }
        }
        self.next_send = echoes.next_seq().map(|_| cx.now + self.spec.interval);
        if echoes.settled() { self.conclude(cx) } else { Step::Pending }
    }

    /// Reads what the run's own socket has (the error queue first), up to the budget.
    fn read(&mut self, cx: &mut Ctx<'_>) -> Step {
        let (Some(RunSocket::Own(socket)), Some(echoes)) = (&self.socket, &mut self.echoes) else {
            return Step::Pending;
        };
        for _ in 0..READ_BUDGET {
            match receive(socket, &mut self.buf) {
                Ok(Some(Received::Reply { from, id, seq, data, at, hop_limit })) => {
                    echoes.reply(from, id, seq, data, at, hop_limit);
                }
                Ok(Some(Received::Error { to, id, seq, error })) => {
                    echoes.error(to, id, seq, error);
                }
                Ok(None) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(_) => continue,
            }
            if echoes.settled() {
                return self.conclude(cx);
            }
        }
        self.resume_owed = true;
        Step::Yield
    }

    /// Takes what the engine's shared socket put in the run's inbox.
    fn take_inbox(&mut self, cx: &mut Ctx<'_>) -> Step {
        let ticket = cx.ticket();
        let (Some(RunSocket::Shared(_)), Some(echoes)) = (&self.socket, &mut self.echoes) else {
            return Step::Pending;
        };
        let Some(store) = shared_store(cx) else { return Step::Pending };
        store.drain_inbox(ticket, |m| match m {
            Inbound::Reply { from, id, seq, at, hop_limit } => {
                echoes.reply_checked(from, id, seq, at, hop_limit);
            }
            Inbound::Error { to, id, seq, error } => {
                echoes.error(to, id, seq, error);
            }
        });
        if echoes.settled() { self.conclude(cx) } else { Step::Pending }
    }

    /// The verdict from the echoes as they stand (requests still waiting are lost).
    fn conclude(&mut self, cx: &mut Ctx<'_>) -> Step {
        let Some(echoes) = &self.echoes else { return Step::Pending };
        let stats = echoes.stats();
        let dst = self.dst.map_or_else(String::new, |d| d.to_string());
        let timed_out = echoes.fates.iter().any(|f| matches!(f, Fate::Waiting(_)));
        let failed_reason = match (stats.last_error, timed_out) {
            (Some(_), _) => Reason::Unreachable,
            (None, true) => Reason::Timeout,
            (None, false) => Reason::Unreachable,
        };
        let lost = stats.sent.max(self.spec.packets) - stats.received;
        let why = match stats.last_error {
            Some(e) => format!("{e}"),
            None if timed_out => format!("no reply within {:?}", self.timeout),
            None => "the request could not be sent".to_string(),
        };
        let o = if stats.received == 0 {
            Outcome::failure(failed_reason, format!("ping {dst}: {why}"))
        } else if u64::from(lost) * 100
            > u64::from(self.spec.max_loss_percent) * u64::from(self.spec.packets)
        {
            let m = format!(
                "ping {dst}: {lost} of {} echo requests lost ({:.0}%, over the {}% allowed); last: {why}",
                self.spec.packets,
                stats.loss() * 100.0,
                self.spec.max_loss_percent
            );
            Outcome::failure(failed_reason, m)
        } else {
            Outcome::success()
        };
        self.done(cx, o)
    }
}

impl Machine for IcmpProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        if let Ok(ip) = self.spec.host.parse::<IpAddr>() {
            let wrong = match self.spec.connect.ip_family {
                IpFamily::V4 => IpFamily::is_v6(ip),
                IpFamily::V6 => !IpFamily::is_v6(ip),
                _ => false,
            };
            if wrong {
                let m = format!("ping {ip}: not an address of the family asked for");
                return self.done(cx, Outcome::failure(Reason::Dns, m));
            }
            return self.setup(cx, ip);
        }
        self.lookup = Some(cx.resolve(&self.spec.host, 0));
        Step::Pending
    }

    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        if let Some((_job, slot)) = self.ns_job.take() {
            return match addrs {
                Ok(_) => self.ns_socket_made(cx, &slot),
                Err(e) => {
                    let m = format!("ping {}: {}", self.spec.host, os_error_text(&e));
                    self.done(cx, Outcome::unknown(Reason::Io, m))
                }
            };
        }
        self.lookup = None;
        self.facts.resolve = cx.now.saturating_duration_since(self.started.unwrap_or(cx.now));
        let host = self.spec.host.clone();
        match addrs {
            Ok(addrs) => match self.pick(&addrs) {
                Some(ip) => self.setup(cx, ip),
                None => {
                    let m = format!("lookup {host}: no address of the family asked for");
                    self.done(cx, Outcome::failure(Reason::Dns, m))
                }
            },
            Err(e) => {
                let reason = if Reason::from_io(&e) == Reason::Resource {
                    Reason::Resource
                } else {
                    Reason::Dns
                };
                let m = format!("lookup {host}: {}", os_error_text(&e));
                self.done(cx, Outcome::new(reason.failed_result(), reason, m))
            }
        }
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, _ready: Ready) -> Step {
        if sub == SHARED_READY {
            return self.take_inbox(cx);
        }
        if sub != 0 || self.resume_owed {
            return Step::Pending;
        }
        self.read(cx)
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.resume_owed = false;
        self.read(cx)
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.deadline.is_some_and(|d| cx.now >= d) {
            if self.echoes.is_none() {
                let what = if self.lookup.is_some() { "lookup" } else { "ping" };
                let m = format!("{what} {}: no answer within {:?}", self.spec.host, self.timeout);
                return self.done(cx, Outcome::failure(Reason::Timeout, m));
            }
            return self.conclude(cx);
        }
        if self.next_send.is_some_and(|t| cx.now >= t) {
            return self.send_next(cx);
        }
        Step::Pending
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.deadline, self.next_send) {
            (Some(d), Some(n)) => Some(d.min(n)),
            (d, _) => d,
        }
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.close(cx);
        self.deadline = None;
        self.next_send = None;
    }
}

/// The engine's shared sockets, when the driver lends them.
fn shared_store<'c>(cx: &'c mut Ctx<'_>) -> Option<&'c mut SharedSockets> {
    cx.shared().and_then(|s| s.downcast_mut::<SharedSockets>())
}

/// 64 random bits from the kernel (`getrandom`), for echo ids, sequences and cookies; the
/// clock's nanoseconds mixed with a counter if it fails (it does not block after boot).
fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    // On Linux the system call, not glibc's wrapper (glibc 2.25): the prebuilt archives of the
    // Go module need no glibc newer than 2.17 (ci/go-module.sh checks).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: `bytes` is valid for writes of its 8 bytes for the whole call.
    let n = unsafe {
        libc::syscall(libc::SYS_getrandom, bytes.as_mut_ptr(), bytes.len(), libc::GRND_NONBLOCK)
    };
    // Elsewhere the C library's `getrandom` (FreeBSD 12, compile-checked in CI).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    // SAFETY: `bytes` is valid for writes of its 8 bytes for the whole call.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), libc::GRND_NONBLOCK) };
    if n == 8 {
        return u64::from_ne_bytes(bytes);
    }
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let c = COUNTER.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (t ^ c).rotate_left(17).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}
