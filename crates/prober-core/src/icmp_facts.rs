//! What an ICMP echo run learned beyond its verdict ([`crate::Outcome::icmp`]): blackbox's
//! phases, the reply's hop limit, the counts and round-trip times of its requests, and the ICMP
//! error that came back for one. Measured by the `prober-icmp` crate.

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

const ICMP_DEST_UNREACHABLE: u8 = 3;
const ICMP_TIME_EXCEEDED: u8 = 11;
const ICMPV6_DEST_UNREACHABLE: u8 = 1;
const ICMPV6_PACKET_TOO_BIG: u8 = 2;
const ICMPV6_TIME_EXCEEDED: u8 = 3;

/// The kind of socket a run used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IcmpSocketKind {
    /// `SOCK_DGRAM` ICMP socket: the kernel sets the echo id to the socket's port, fills in the
    /// checksum and hands the socket only the replies with its id.
    Unprivileged,
    /// `SOCK_RAW`: the socket sees all ICMP traffic of its family; the id is ours.
    Raw,
}

/// What a run learned beyond its verdict, for blackbox_exporter's metrics and for smokeping's
/// figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcmpFacts {
    /// Name resolution (`probe_icmp_duration_seconds{phase="resolve"}`); zero for an IP
    /// literal, as blackbox reports it.
    pub resolve: Duration,
    /// Opening and setting up the socket and building the first request
    /// (`{phase="setup"}`).
    pub setup: Duration,
    /// The socket kind used, once one was opened.
    pub socket: Option<IcmpSocketKind>,
    /// The echo id the requests carried (on an unprivileged socket: the kernel's, its port).
    pub id: u16,
    /// Counts, round-trip times (`{phase="rtt"}` is [`EchoStats::first_rtt`]), reply hop limit.
    pub stats: EchoStats,
}

/// What a run's echoes came to: counts and round-trip times, as `ping -c` sums them up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoStats {
    /// Requests sent.
    pub sent: u32,
    /// Replies received (each request answered at most once).
    pub received: u32,
    /// The shortest round-trip time.
    pub min: Option<Duration>,
    /// The mean round-trip time.
    pub avg: Option<Duration>,
    /// The longest round-trip time.
    pub max: Option<Duration>,
    /// The population standard deviation of the round-trip times (ping's `mdev`).
    pub stddev: Option<Duration>,
    /// The first answered request's round-trip time (blackbox_exporter's `rtt` phase).
    pub first_rtt: Option<Duration>,
    /// The last reply's TTL or hop limit (`probe_icmp_reply_hop_limit`).
    pub reply_hop_limit: Option<u8>,
    /// The last ICMP error received for one of the requests.
    pub last_error: Option<IcmpError>,
}

impl EchoStats {
    /// The share of requests that got no reply, 0.0 to 1.0 (1.0 when none was sent).
    pub fn loss(&self) -> f64 {
        if self.sent == 0 {
            1.0
        } else {
            f64::from(self.sent - self.received) / f64::from(self.sent)
        }
    }
}

/// An ICMP error about one of our echoes: its type and code, as sent by `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpError {
    /// ICMPv6 (true) or ICMP (false) numbering of `kind` and `code`.
    pub ipv6: bool,
    /// The message type (3 or 11 for ICMP; 1, 2 or 3 for ICMPv6).
    pub kind: u8,
    /// The message code (for destination unreachable: host, port, prohibited, ...).
    pub code: u8,
    /// Who sent it: a router on the way, or the target itself.
    pub from: IpAddr,
}

impl IcmpError {
    /// A time-exceeded message (the TTL or hop limit ran out on the way), as opposed to a
    /// destination-unreachable one.
    pub fn is_time_exceeded(&self) -> bool {
        if self.ipv6 { self.kind == ICMPV6_TIME_EXCEEDED } else { self.kind == ICMP_TIME_EXCEEDED }
    }

    /// What the message says, as `ping` words it ("destination host unreachable").
    pub fn describe(&self) -> &'static str {
        if self.ipv6 {
            describe_v6(self.kind, self.code)
        } else {
            describe_v4(self.kind, self.code)
        }
    }
}

impl fmt::Display for IcmpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (from {})", self.describe(), self.from)
    }
}

fn describe_v4(kind: u8, code: u8) -> &'static str {
    match (kind, code) {
        (ICMP_DEST_UNREACHABLE, 0) => "destination net unreachable",
        (ICMP_DEST_UNREACHABLE, 1) => "destination host unreachable",
        (ICMP_DEST_UNREACHABLE, 2) => "destination protocol unreachable",
        (ICMP_DEST_UNREACHABLE, 3) => "destination port unreachable",
        (ICMP_DEST_UNREACHABLE, 4) => "fragmentation needed and DF set",
        (ICMP_DEST_UNREACHABLE, 9) => "destination net prohibited",
        (ICMP_DEST_UNREACHABLE, 10) => "destination host prohibited",
        (ICMP_DEST_UNREACHABLE, 13) => "communication administratively prohibited",
        (ICMP_DEST_UNREACHABLE, _) => "destination unreachable",
        (ICMP_TIME_EXCEEDED, 0) => "time to live exceeded",
        (ICMP_TIME_EXCEEDED, _) => "fragment reassembly time exceeded",
        _ => "ICMP error",
    }
}

fn describe_v6(kind: u8, code: u8) -> &'static str {
    match (kind, code) {
        (ICMPV6_DEST_UNREACHABLE, 0) => "no route to destination",
        (ICMPV6_DEST_UNREACHABLE, 1) => "communication administratively prohibited",
        (ICMPV6_DEST_UNREACHABLE, 3) => "address unreachable",
        (ICMPV6_DEST_UNREACHABLE, 4) => "port unreachable",
        (ICMPV6_DEST_UNREACHABLE, 5) => "source address failed ingress/egress policy",
        (ICMPV6_DEST_UNREACHABLE, 6) => "reject route to destination",
        (ICMPV6_DEST_UNREACHABLE, _) => "destination unreachable",
        (ICMPV6_PACKET_TOO_BIG, _) => "packet too big",
        (ICMPV6_TIME_EXCEEDED, 0) => "hop limit exceeded in transit",
        (ICMPV6_TIME_EXCEEDED, _) => "fragment reassembly time exceeded",
        _ => "ICMPv6 error",
    }
}
