//! The probe as a [`Machine`]: a query over UDP, TCP or TLS within one deadline, replies that
//! do not answer it ignored, the answer checked as blackbox_exporter checks it. The stream
//! transports are [`crate::stream`]'s.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use mio::Interest;
use mio::net::UdpSocket;
use prober_core::{DEFAULT_OUTPUT_LIMIT, IpFamily, Outcome, ProbeResult, Reason, os_error_text};
use prober_io::{Answer, Ctx, Lookup, Machine, NsSockets, Ready, Step};
use prober_transport::dial::{Dial, DialEvent, DialStep};

use crate::DnsFacts;
use crate::source::{admitted, bind_udp};
use crate::spec::{DnsSpec, Server, Transport};
use crate::stream::{Drive, Exchange, Target, dial_failure};
use crate::validate::{check_rrs, rcode_name};
use crate::wire::{Header, Message, Query};

/// Datagrams or TCP reads handled in one call before yielding to the driver's other work.
const READ_BUDGET: usize = 64;

/// The smallest UDP receive buffer: RFC 1035's 512 bytes, when no EDNS0 size is advertised.
const MIN_UDP_BUFFER: usize = 512;

/// The socket of the current attempt.
#[derive(Debug)]
enum Conn {
    Udp(UdpSocket),
    /// TCP or TLS, while [`DnsProbe::dial`] connects it.
    Dialing,
    /// TCP or TLS, connected.
    Stream(Box<Exchange>),
}

/// A DNS probe run. See the crate documentation.
#[derive(Debug)]
pub struct DnsProbe {
    spec: DnsSpec,
    timeout: Duration,
    query: Query,
    wire: Vec<u8>,
    conn: Option<Conn>,
    /// The connect phase of TCP and TLS attempts.
    dial: Dial,
    /// Where they connect, once the address is chosen.
    target: Option<Target>,
    transport: Transport,
    /// The server's address: the spec's, or the one chosen among its name's.
    server: Option<SocketAddr>,
    /// The lookup of the server's name while it runs.
    lookup: Option<Lookup>,
    /// The making of the UDP socket in the spec's network namespace while it runs.
    ns_udp: Option<(Lookup, NsSockets)>,
    /// How long that lookup took, once done.
    resolve_time: Option<Duration>,
    started: Option<Instant>,
    deadline: Option<Instant>,
    /// When the current attempt began and when its socket was ready to send.
    attempt_started: Option<Instant>,
    connected_at: Option<Instant>,
    facts: DnsFacts,
    /// The last reply that carried our id but could not be read (told at the deadline).
    malformed: Option<String>,
    resume_owed: bool,
    /// The target's TLS sessions when its options ask for resumption (DNS over TLS; see
    /// [`DnsProbe::with_tls_sessions`]).
    tls_sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    /// The UDP receive buffer (the advertised size), kept for the run.
    buf: Vec<u8>,
}

/// The answer section as the outcome's output, one record a line as miekg/dns prints it (what
/// `dig` shows as its ANSWER SECTION, and what the checks matched), kept up to
/// [`DEFAULT_OUTPUT_LIMIT`] bytes with the rest counted: a 64 KiB message of compressed names
/// prints to far more than it weighs.
fn answer_output(o: &mut Outcome, answer: &[crate::wire::Record]) {
    for rr in answer {
        let line = crate::render::record_text(rr);
        let len = line.len() as u64 + 1;
        o.output_total = o.output_total.saturating_add(len);
        if !o.truncated && o.output.len() + line.len() < DEFAULT_OUTPUT_LIMIT {
            o.output.extend_from_slice(line.as_bytes());
            o.output.push(b'\n');
        } else {
            o.truncated = true;
        }
    }
}

/// A random message id: SipHash with the process's random keys over the clock and a
/// counter; an id is one guard among the source port and the question.
fn random_id() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    (h.finish() >> 17) as u16
}

impl DnsProbe {
    /// The machine for one run of `spec`, with `timeout` as the run's one deadline.
    pub fn new(spec: DnsSpec, timeout: Duration) -> DnsProbe {
        let query = Query {
            id: random_id(),
            name: spec.name.clone(),
            qtype: spec.qtype,
            qclass: spec.qclass,
            recursion_desired: spec.recursion_desired,
            edns_udp_size: spec.edns_udp_size,
        };
        let wire = query.encode();
        let transport = spec.transport;
        DnsProbe {
            spec,
            timeout,
            query,
            wire,
            conn: None,
            dial: Dial::new(),
            target: None,
            transport,
            server: None,
            lookup: None,
            ns_udp: None,
            resolve_time: None,
            started: None,
            deadline: None,
            attempt_started: None,
            connected_at: None,
            facts: DnsFacts::default(),
            malformed: None,
            resume_owed: false,
            tls_sessions: None,
            buf: Vec::new(),
        }
    }

    /// The run resumes TLS sessions from `sessions`, the target's (DNS over TLS), and keeps
    /// there what the server gives (see [`prober_transport::TlsSessions`]); `None`: full
    /// handshakes.
    pub fn with_tls_sessions(
        mut self,
        sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    ) -> DnsProbe {
        self.tls_sessions = sessions;
        self
    }

    /// What the run found out: set as it goes, complete once it is done.
    pub fn facts(&self) -> &DnsFacts {
        &self.facts
    }

    /// The query's message id (tests forge replies with another).
    pub fn query_id(&self) -> u16 {
        self.query.id
    }

    /// The server's address once known (the unspecified address before).
    fn server(&self) -> SocketAddr {
        self.server.unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))
    }

    /// The server's name as the spec gives it, for the allow-list and messages.
    fn server_name(&self) -> Option<&str> {
        match &self.spec.server {
            Server::Host(host, _) => Some(host),
            Server::Addr(_) => None,
        }
    }

    /// Picks the address to query among `addrs` (the family's first) and checks it against
    /// the allow-list; then opens the attempt.
    fn choose(&mut self, cx: &mut Ctx<'_>, addrs: &[SocketAddr]) -> Step {
        let net = self.transport.as_str();
        let family = self.spec.ip_family;
        let candidates: Vec<SocketAddr> = match family.select(addrs) {
            Ok(None) => addrs.to_vec(),
            Ok(Some(v6)) => {
                addrs.iter().copied().filter(|a| IpFamily::is_v6(a.ip()) == v6).collect()
            }
            Err(_) => Vec::new(),
        };
        let chosen = match admitted(self.spec.source_address, &candidates, net, self.server_name())
        {
            Ok(chosen) => chosen,
            Err(message) => {
                // The server's address was chosen (as blackbox_exporter reports it, with
                // `probe_ip_protocol`), then found unreachable from the source.
                self.server = candidates.first().copied();
                return self.done(cx, Outcome::failure(Reason::Dns, message));
            }
        };
        let Some(addr) = chosen else {
            let what = self.server_name().map_or_else(|| format!("{addrs:?}"), str::to_string);
            let message = format!("dial {net}: no {} address for {what}", family.name());
            return self.done(cx, Outcome::failure(Reason::Dns, message));
        };
        if let Some(filter) = &self.spec.address_filter {
            if let Err(why) = filter.check(self.server_name(), addr) {
                let message = format!("dial {net} {addr}: not allowed: {why}");
                return self.done(cx, Outcome::failure(Reason::Denied, message));
            }
        }
        self.server = Some(addr);
        self.open(cx)
    }

    /// The UDP socket's local address: the source address, else the unspecified address of
    /// the server's family; port 0.
    fn local_addr(&self) -> SocketAddr {
        match (self.spec.source_address, self.server()) {
            (Some(ip), _) => SocketAddr::new(ip, 0),
            (None, SocketAddr::V4(_)) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            (None, SocketAddr::V6(_)) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        }
    }

    /// Opens the attempt's socket over `self.transport` and sends (UDP) or connects (TCP).
    fn open(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.attempt_started = Some(cx.now);
        self.connected_at = None;
        if self.transport != Transport::Udp {
            return self.dial_stream(cx);
        }
        if let Some(netns) = &self.spec.netns {
            // The socket is made in the namespace off the poll thread; it arrives as a
            // lookup's answer (`resolved`).
            let slot = NsSockets::default();
            let job = cx.udp_sockets_in(netns, vec![self.server()], slot.clone());
            self.ns_udp = Some((job, slot));
            return Step::Pending;
        }
        match UdpSocket::bind(self.local_addr()) {
            Err(e) if self.spec.source_address.is_some() => self.fail_bind(cx, &e),
            sock => self.start_udp(cx, sock),
        }
    }

    /// Sends the query on `sock` (this process's, or made in the spec's namespace) and reads.
    fn start_udp(&mut self, cx: &mut Ctx<'_>, sock: io::Result<UdpSocket>) -> Step {
        match sock.and_then(|sock| self.open_udp(cx, sock)) {
            Ok(conn) => {
                self.conn = Some(conn);
                self.udp_ready(cx)
            }
            Err(e) => self.fail_io(cx, "dial", &e),
        }
    }

    /// The UDP socket made in the spec's namespace has come (or why not).
    fn ns_udp_made(&mut self, cx: &mut Ctx<'_>, slot: &NsSockets) -> Step {
        match slot.lock().take() {
            Some(Ok(prober_io::NsMade { sockets: mut fds, .. })) if !fds.is_empty() => {
                let sock = std::net::UdpSocket::from(fds.swap_remove(0));
                match bind_udp(&self.spec, &sock) {
                    Ok(()) => self.start_udp(cx, Ok(UdpSocket::from_std(sock))),
                    Err(e) => self.fail_bind(cx, &e),
                }
            }
            Some(Err(e)) => {
                self.done(cx, Outcome::new(e.reason.failed_result(), e.reason, e.message))
            }
            _ => {
                let e = io::Error::other("no socket was made in the network namespace");
                self.fail_io(cx, "dial", &e)
            }
        }
    }

    /// Starts the TCP or TLS attempt: [`Dial`] connects to the chosen address.
    fn dial_stream(&mut self, cx: &mut Ctx<'_>) -> Step {
        let server = self.server();
        let tls = (self.transport == Transport::Tls).then(|| self.spec.tls_for_dial());
        let target = self.target.insert(Target {
            host: server.ip().to_string(),
            port: server.port(),
            tls,
            tls_sessions: self.tls_sessions.clone(),
            netns: self.spec.netns.clone(),
            source: self.spec.source_address,
        });
        self.conn = Some(Conn::Dialing);
        let started = self.attempt_started.unwrap_or(cx.now);
        let step = self.dial.start(cx, started, &target.endpoint());
        self.on_dial(cx, step)
    }

    /// A machine call while the dial runs goes to it.
    fn dial_event(&mut self, cx: &mut Ctx<'_>, event: DialEvent) -> Step {
        let Some(target) = &self.target else { return Step::Pending };
        let step = self.dial.on(cx, event, &target.endpoint());
        self.on_dial(cx, step)
    }

    fn on_dial(&mut self, cx: &mut Ctx<'_>, step: DialStep) -> Step {
        match step {
            DialStep::Pending => Step::Pending,
            DialStep::Connected(io) => {
                self.connected_at = Some(cx.now);
                self.conn = Some(Conn::Stream(Box::new(Exchange::new(io, &self.wire))));
                self.stream_ready(cx)
            }
            DialStep::Failed(e) => {
                self.conn = None;
                let outcome = dial_failure(&self.server().to_string(), e);
                self.end_attempt(cx);
                self.done(cx, outcome)
            }
        }
    }

    fn dialing(&self) -> bool {
        matches!(self.conn, Some(Conn::Dialing))
    }

    /// The largest UDP answer the query allows: its EDNS0 size, at least 512 bytes.
    fn udp_limit(&self) -> usize {
        usize::from(self.spec.edns_udp_size.unwrap_or(0)).max(MIN_UDP_BUFFER)
    }

    fn open_udp(&mut self, cx: &mut Ctx<'_>, mut sock: UdpSocket) -> io::Result<Conn> {
        // Connected: the kernel drops datagrams from any other address or port, and an ICMP
        // port unreachable comes back as ECONNREFUSED.
        sock.connect(self.server())?;
        cx.registry.register(&mut sock, cx.token(0), Interest::READABLE)?;
        self.connected_at = Some(cx.now);
        // One byte more than advertised: a datagram that fills it is larger than the server
        // was allowed to send (the kernel would cut it silently at the buffer's size).
        self.buf = vec![0; self.udp_limit() + 1];
        match sock.send(&self.wire) {
            Ok(_) => Ok(Conn::Udp(sock)),
            Err(e) => {
                let _ = cx.registry.deregister(&mut sock);
                Err(e)
            }
        }
    }

    /// Reads datagrams until one answers the query, the socket is drained, or the budget ends.
    fn udp_ready(&mut self, cx: &mut Ctx<'_>) -> Step {
        for _ in 0..READ_BUDGET {
            let Some(Conn::Udp(sock)) = &self.conn else { return Step::Pending };
            let n = match sock.recv(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail_io(cx, "read", &e),
            };
            if n > self.udp_limit() {
                self.facts.ignored = self.facts.ignored.saturating_add(1);
                let limit = self.udp_limit();
                self.malformed =
                    Some(format!("a datagram larger than the {limit} bytes asked for"));
                continue;
            }
            let datagram = self.buf[..n].to_vec();
            if let Some(message) = self.accept(&datagram) {
                return self.answered(cx, &message);
            }
        }
        self.resume_owed = true;
        Step::Yield
    }

    /// The query's bytes out, replies in, until one answers it.
    fn stream_ready(&mut self, cx: &mut Ctx<'_>) -> Step {
        for _ in 0..READ_BUDGET {
            let Some(Conn::Stream(x)) = &mut self.conn else { return Step::Pending };
            match x.drive(cx) {
                Drive::Pending => return Step::Pending,
                Drive::Yield => break,
                Drive::Failed(reason, text) => {
                    self.end_attempt(cx);
                    return self.done(cx, Outcome::new(reason.failed_result(), reason, text));
                }
                Drive::Message(message) => match Message::parse(&message) {
                    Err(e) => return self.fail_malformed(cx, &e),
                    Ok(m) => {
                        if let Some(m) = self.accept_parsed(m) {
                            return self.answered(cx, &m);
                        }
                    }
                },
            }
        }
        self.resume_owed = true;
        Step::Yield
    }

    /// The message in `datagram` if it answers our query: a response with our id and our
    /// question (or, for an error rcode, none: servers send FORMERR and REFUSED with the
    /// header alone). Anything else is ignored, as a resolver ignores it; one with our id
    /// that cannot be read is remembered for the timeout's message.
    fn accept(&mut self, datagram: &[u8]) -> Option<Message> {
        let header = Header::parse(datagram)?;
        if header.id != self.query.id || !header.is_response() {
            self.facts.ignored = self.facts.ignored.saturating_add(1);
            return None;
        }
        match Message::parse(datagram) {
            Ok(m) => self.accept_parsed(m),
            Err(e) => {
                self.facts.ignored = self.facts.ignored.saturating_add(1);
                self.malformed = Some(e);
                None
            }
        }
    }

    fn accept_parsed(&mut self, m: Message) -> Option<Message> {
        let ours = m.header.id == self.query.id
            && m.header.is_response()
            && match m.questions.as_slice() {
                [q] => {
                    q.qtype == self.query.qtype
                        && q.qclass == self.query.qclass
                        && q.name.eq_ignore_case(&self.query.name)
                }
                [] => m.header.rcode() != 0,
                _ => false,
            };
        if !ours {
            self.facts.ignored = self.facts.ignored.saturating_add(1);
            return None;
        }
        Some(m)
    }

    /// The answer to our query: over TCP again if it was truncated and the spec asks so,
    /// else the facts and the checks.
    fn answered(&mut self, cx: &mut Ctx<'_>, m: &Message) -> Step {
        self.end_attempt(cx);
        if m.header.truncated() && self.transport == Transport::Udp {
            self.facts.truncated = true;
            if self.spec.tcp_on_truncation {
                self.facts.retried_over_tcp = true;
                self.transport = Transport::Tcp;
                return self.open(cx);
            }
        }
        let f = &mut self.facts;
        f.query_succeeded = true;
        f.rcode = Some(m.rcode());
        f.answer_rrs = m.answer.len() as u32;
        f.authority_rrs = m.authority.len() as u32;
        f.additional_rrs = m.additional.len() as u32;
        if self.query.qtype == 6 {
            // blackbox sets probe_dns_serial once per SOA of the answer: the last one stays.
            f.serial = m.answer.iter().rev().find_map(|r| match &r.data {
                crate::wire::RData::Soa(_, _, n) => Some(n[0]),
                _ => None,
            });
        }
        let rcode = m.rcode();
        let outcome = if !self.spec.rcode_is_valid(rcode) {
            let valid: Vec<String> = if self.spec.valid_rcodes.is_empty() {
                vec![rcode_name(0)]
            } else {
                self.spec.valid_rcodes.iter().map(|&c| rcode_name(c)).collect()
            };
            Outcome::failure(
                Reason::Status,
                format!(
                    "rcode {} is not one of the valid rcodes [{}]",
                    rcode_name(rcode),
                    valid.join(" ")
                ),
            )
        } else if let Err(e) = self.check_sections(m) {
            Outcome::failure(Reason::Body, e)
        } else {
            Outcome::success()
        };
        let mut outcome = outcome;
        answer_output(&mut outcome, &m.answer);
        self.done(cx, outcome)
    }

    fn check_sections(&self, m: &Message) -> Result<(), String> {
        let s = &self.spec;
        check_rrs(&s.validate_answer, &m.answer).map_err(|e| format!("answer RRs: {e}"))?;
        check_rrs(&s.validate_authority, &m.authority)
            .map_err(|e| format!("authority RRs: {e}"))?;
        check_rrs(&s.validate_additional, &m.additional).map_err(|e| format!("additional RRs: {e}"))
    }

    /// Closes the attempt's socket and adds its phases.
    fn end_attempt(&mut self, cx: &mut Ctx<'_>) {
        self.close_conn(cx);
        if let Some(began) = self.attempt_started.take() {
            let connected = self.connected_at.unwrap_or(cx.now);
            let p = &mut self.facts.phases;
            p.connect += connected.saturating_duration_since(began);
            p.request += cx.now.saturating_duration_since(connected);
        }
    }

    /// Closes the attempt's socket, or stops its dial.
    fn close_conn(&mut self, cx: &mut Ctx<'_>) {
        match self.conn.take() {
            Some(Conn::Udp(mut s)) => {
                let _ = cx.registry.deregister(&mut s);
            }
            Some(Conn::Dialing) => self.dial.cancel(cx),
            Some(Conn::Stream(x)) => x.io.close(cx),
            None => {}
        }
    }

    fn local_and_peer(&mut self) -> String {
        let local = match &mut self.conn {
            Some(Conn::Udp(s)) => s.local_addr().ok().map(|a| a.to_string()),
            Some(Conn::Stream(x)) => x.local_addr(),
            Some(Conn::Dialing) | None => None,
        };
        match local {
            Some(l) => format!("{l}->{}", self.server()),
            None => self.server().to_string(),
        }
    }

    /// Ends the run on an I/O error, in Go's words (`read udp 127.0.0.1:5353->...: ...`).
    fn fail_io(&mut self, cx: &mut Ctx<'_>, op: &str, e: &io::Error) -> Step {
        let message = format!(
            "{op} {} {}: {}",
            self.transport.as_str(),
            self.local_and_peer(),
            os_error_text(e)
        );
        let reason = if e.kind() == io::ErrorKind::UnexpectedEof {
            Reason::Reset
        } else {
            Reason::from_io(e)
        };
        self.end_attempt(cx);
        self.done(cx, Outcome::new(reason.failed_result(), reason, message))
    }

    /// Ends the run on a UDP socket that could not be bound to the source address, in Go's
    /// words (`dial udp 192.0.2.9:0->127.0.0.1:53: bind: cannot assign requested address`).
    fn fail_bind(&mut self, cx: &mut Ctx<'_>, e: &io::Error) -> Step {
        let local = self.local_addr();
        let message = format!("dial udp {local}->{}: bind: {}", self.server(), os_error_text(e));
        let reason = Reason::from_io(e);
        self.end_attempt(cx);
        self.done(cx, Outcome::new(reason.failed_result(), reason, message))
    }

    fn fail_malformed(&mut self, cx: &mut Ctx<'_>, e: &str) -> Step {
        let message = format!("malformed response from {}: {e}", self.server());
        self.end_attempt(cx);
        self.done(cx, Outcome::failure(Reason::Protocol, message))
    }

    fn done(&mut self, cx: &mut Ctx<'_>, mut o: Outcome) -> Step {
        let started = self.started.unwrap_or(cx.now);
        o.peer = self.server;
        o.dns = Some(Box::new(self.facts.clone()));
        self.lookup = None;
        self.ns_udp = None;
        o.timings.connect = self.connected_at.map(|t| t.saturating_duration_since(started));
        if self.facts.query_succeeded {
            o.timings.first_byte = Some(cx.now.saturating_duration_since(started));
        }
        o.timings.total = cx.now.saturating_duration_since(started);
        o.timings.resolve = self.resolve_time;
        if self.transport == Transport::Tls {
            // What the DNS-over-TLS handshake showed: the server certificate's expiry, as
            // for HTTPS and gRPC.
            o.timings.tls = self.dial.timings().tls;
            o.cert_not_after = self.dial.cert_not_after();
            o.tls = self.dial.tls_info();
        }
        self.deadline = None;
        Step::Done(o)
    }
}

impl Machine for DnsProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        match self.spec.server.clone() {
            Server::Addr(addr) => self.choose(cx, &[addr]),
            Server::Host(host, port) => match host.parse::<IpAddr>() {
                Ok(ip) => self.choose(cx, &[SocketAddr::new(ip, port)]),
                Err(_) => {
                    self.lookup = Some(cx.resolve(&host, port));
                    Step::Pending
                }
            },
        }
    }

    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        // In a namespace, the dial's sockets arrive as a lookup's answer.
        if self.dialing() {
            return self.dial_event(cx, DialEvent::Resolved(addrs));
        }
        if let Some((_job, slot)) = self.ns_udp.take() {
            return match addrs {
                Ok(_) => self.ns_udp_made(cx, &slot),
                Err(e) => self.fail_io(cx, "dial", &e),
            };
        }
        if self.lookup.take().is_none() {
            return Step::Pending;
        }
        let started = self.started.unwrap_or(cx.now);
        self.facts.phases.resolve = cx.now.saturating_duration_since(started);
        self.resolve_time = Some(self.facts.phases.resolve);
        let net = self.transport.as_str();
        let host = self.server_name().unwrap_or_default().to_string();
        match addrs {
            Ok(addrs) if !addrs.is_empty() => self.choose(cx, &addrs),
            Ok(_) => {
                let message = format!("dial {net}: lookup {host}: no such host");
                self.done(cx, Outcome::failure(Reason::Dns, message))
            }
            Err(e) => {
                let reason =
                    if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Dns };
                let message = format!("dial {net}: lookup {host}: {}", os_error_text(&e));
                self.done(cx, Outcome::new(reason.failed_result(), reason, message))
            }
        }
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        if self.resume_owed {
            return Step::Pending;
        }
        // The dial may race two sockets (tokens 0 and 1); the connection is on 0.
        if self.dialing() {
            return self.dial_event(cx, DialEvent::Ready(sub, ready));
        }
        if sub != 0 {
            return Step::Pending;
        }
        match self.conn {
            Some(Conn::Udp(_)) => self.udp_ready(cx),
            Some(Conn::Stream(_)) => self.stream_ready(cx),
            Some(Conn::Dialing) | None => Step::Pending,
        }
    }

    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<Answer>) -> Step {
        if !self.dialing() {
            return Step::Pending;
        }
        self.dial_event(cx, DialEvent::JobDone(answer))
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.deadline.is_none_or(|d| cx.now < d) {
            // Before the deadline only the dial has a timer (its connector's).
            if self.dialing() {
                return self.dial_event(cx, DialEvent::Timer);
            }
            return Step::Pending;
        }
        if self.lookup.take().is_some() {
            let host = self.server_name().unwrap_or_default();
            let message = format!(
                "dial {}: lookup {host}: i/o timeout (no address within {:?})",
                self.transport.as_str(),
                self.timeout
            );
            return self.done(cx, Outcome::failure(Reason::Timeout, message));
        }
        if self.ns_udp.take().is_some() {
            let path = self.spec.netns.as_ref().map(|n| n.path().to_path_buf()).unwrap_or_default();
            let message = format!(
                "dial udp {}: i/o timeout (making the socket in network namespace {path:?})",
                self.server()
            );
            return self.done(cx, Outcome::new(ProbeResult::Failure, Reason::Timeout, message));
        }
        if self.dialing() {
            let message = format!(
                "dial {} {}: i/o timeout (not connected within {:?})",
                self.transport.as_str(),
                self.server(),
                self.timeout
            );
            self.end_attempt(cx);
            return self.done(cx, Outcome::new(ProbeResult::Failure, Reason::Timeout, message));
        }
        let mut message = format!(
            "read {} {}: i/o timeout (no answer within {:?})",
            self.transport.as_str(),
            self.local_and_peer(),
            self.timeout
        );
        if self.facts.ignored > 0 {
            message.push_str(&format!(
                "; {} replies that did not answer the query were ignored",
                self.facts.ignored
            ));
        }
        if let Some(e) = &self.malformed {
            message.push_str(&format!(", the last with our id malformed: {e}"));
        }
        self.end_attempt(cx);
        self.done(cx, Outcome::new(ProbeResult::Failure, Reason::Timeout, message))
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.resume_owed = false;
        match self.conn {
            Some(Conn::Udp(_)) => self.udp_ready(cx),
            Some(Conn::Stream(_)) => self.stream_ready(cx),
            Some(Conn::Dialing) | None => Step::Pending,
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.dialing(), self.deadline) {
            (true, Some(d)) => Some(self.dial.wake_at().map_or(d, |at| at.min(d))),
            (_, d) => d,
        }
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.lookup = None;
        self.ns_udp = None;
        self.close_conn(cx);
        self.deadline = None;
    }
}
