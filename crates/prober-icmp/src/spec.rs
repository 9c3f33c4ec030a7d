//! What an ICMP probe is asked to do ([`IcmpSpec`]). It lives here for now; when the kind
//! joins prober-core's `ProbeKind` it moves there as `IcmpSpec`, field for field.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use prober_core::{AddressFilter, IpFamily};

use crate::socket::SocketChoice;

/// blackbox_exporter's payload length: `"Prometheus Blackbox Exporter"`, 28 bytes.
pub const DEFAULT_PAYLOAD_SIZE: usize = 28;
/// The most data one echo may carry: an IPv6 packet's 65,535 bytes less its ICMPv6 header.
pub const MAX_PAYLOAD_SIZE: usize = 65_527;
/// The most echo requests one run may send (one per sequence number of a 16-bit space would
/// wrap; a run of this many at the shortest interval already lasts over a minute).
pub const MAX_PACKETS: u32 = 10_000;
/// The shortest interval between requests (ping's limit for an unprivileged user is 2 ms;
/// a flood is not a probe).
pub const MIN_INTERVAL: Duration = Duration::from_millis(2);

/// An ICMP echo probe of one host.
#[derive(Clone, Debug)]
pub struct IcmpSpec {
    /// A host name or an IP literal (IPv6 unbracketed).
    pub host: String,
    /// Which address family of the name to use (the first address of it; echoes are not raced).
    pub ip_family: IpFamily,
    /// Bytes of data after the echo header (random cookie first, so shorter than 8 loses
    /// the cookie's protection against others' replies).
    pub payload_size: usize,
    /// Set don't-fragment on IPv4 (`IP_PMTUDISC_DO`); an echo over the path MTU then fails.
    pub dont_fragment: bool,
    /// The TTL (IPv4) or hop limit (IPv6) of the requests; `None`: the system's default.
    pub ttl: Option<u8>,
    /// The source address to send from (blackbox's `source_ip_address`).
    pub source: Option<IpAddr>,
    /// Unprivileged socket, raw socket, or the first that the system allows.
    pub socket: SocketChoice,
    /// How many echo requests to send (1: blackbox_exporter's one echo).
    pub packets: u32,
    /// The time between two requests.
    pub interval: Duration,
    /// The run is a Failure when more than this share of the requests got no reply (0.0 to
    /// 1.0). Whatever the threshold, a run with no reply at all fails.
    pub max_loss: f64,
    /// Only destinations this allow-list admits are probed.
    pub address_filter: Option<Arc<AddressFilter>>,
}

/// Why an [`IcmpSpec`] cannot be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

impl IcmpSpec {
    /// One echo to `host`, as blackbox_exporter's icmp prober sends it.
    pub fn new(host: &str) -> IcmpSpec {
        IcmpSpec {
            host: host.to_string(),
            ip_family: IpFamily::Any,
            payload_size: DEFAULT_PAYLOAD_SIZE,
            dont_fragment: false,
            ttl: None,
            source: None,
            socket: SocketChoice::Auto,
            packets: 1,
            interval: Duration::from_secs(1),
            max_loss: 1.0,
            address_filter: None,
        }
    }

    /// Checks the values against their bounds.
    ///
    /// # Errors
    ///
    /// An empty host, a payload over [`MAX_PAYLOAD_SIZE`], a TTL of 0, packets outside
    /// 1..=[`MAX_PACKETS`], an interval under [`MIN_INTERVAL`], a loss threshold outside
    /// 0..=1, or a source address of the other family than an IP literal host.
    pub fn validate(&self) -> Result<(), SpecError> {
        let err = |m: &str| Err(SpecError(m.to_string()));
        if self.host.is_empty() {
            return err("icmp: the host is empty");
        }
        if self.payload_size > MAX_PAYLOAD_SIZE {
            return err("icmp: payload_size is over 65527 bytes");
        }
        if self.ttl == Some(0) {
            return err("icmp: a TTL of 0 would never leave the host");
        }
        if !(1..=MAX_PACKETS).contains(&self.packets) {
            return err("icmp: packets must be 1 to 10000");
        }
        if self.packets > 1 && self.interval < MIN_INTERVAL {
            return err("icmp: the interval must be at least 2ms");
        }
        if !(0.0..=1.0).contains(&self.max_loss) {
            return err("icmp: max_loss must be between 0 and 1");
        }
        if let (Some(src), Ok(dst)) = (self.source, self.host.parse::<IpAddr>()) {
            if src.is_ipv4() != dst.is_ipv4() {
                return err("icmp: the source address is of the other family than the host");
            }
        }
        Ok(())
    }
}
