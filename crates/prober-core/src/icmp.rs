//! ICMP echo probes' options ([`IcmpSpec`]; the kind is [`ProbeKind::Icmp`](crate::ProbeKind),
//! made by [`ProbeSpec::icmp`](crate::ProbeSpec::icmp)); the probe itself is the `prober-icmp`
//! crate's. Nothing of `spec/` but its error and host check is used here, so that this file
//! stays out of prober-core's import circle.

use std::net::IpAddr;
use std::time::Duration;

use crate::spec::{ConnectOptions, SpecError, validate_host};

/// Which kind of ICMP socket a probe may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IcmpSocket {
    /// Unprivileged (`SOCK_DGRAM`) where `net.ipv4.ping_group_range` admits the process, else
    /// raw (blackbox_exporter's order).
    #[default]
    Auto,
    /// Only an unprivileged ICMP socket.
    Unprivileged,
    /// Only a raw socket (CAP_NET_RAW).
    Raw,
}

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcmpSpec {
    /// A host name or an IP literal (IPv6 unbracketed).
    pub host: String,
    /// Which address family of the name to use (the first address of it; echoes are not
    /// raced), the source address to send from (blackbox's `source_ip_address`), and which
    /// destinations may be probed (address filter); the other [`ConnectOptions`] are not an
    /// ICMP probe's.
    pub connect: ConnectOptions,
    /// Bytes of data after the echo header (random cookie first, so shorter than 8 loses
    /// the cookie's protection against others' replies).
    pub payload_size: usize,
    /// Set don't-fragment on IPv4 (`IP_PMTUDISC_DO`); an echo over the path MTU then fails.
    pub dont_fragment: bool,
    /// The TTL (IPv4) or hop limit (IPv6) of the requests; `None`: the system's default.
    pub ttl: Option<u8>,
    /// Unprivileged socket, raw socket, or the first that the system allows.
    pub socket: IcmpSocket,
    /// How many echo requests to send (1: blackbox_exporter's one echo).
    pub packets: u32,
    /// The time between two requests.
    pub interval: Duration,
    /// The run is a Failure when more than this percentage of the requests got no reply (0 to
    /// 100). Whatever the threshold, a run with no reply at all fails.
    pub max_loss_percent: u8,
}

impl IcmpSpec {
    /// One echo to `host`, as blackbox_exporter's icmp prober sends it.
    pub fn new(host: &str) -> IcmpSpec {
        IcmpSpec {
            host: host.to_string(),
            connect: ConnectOptions::default(),
            payload_size: DEFAULT_PAYLOAD_SIZE,
            dont_fragment: false,
            ttl: None,
            socket: IcmpSocket::Auto,
            packets: 1,
            interval: Duration::from_secs(1),
            max_loss_percent: 100,
        }
    }

    /// Checks the values against their bounds.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] for a host that is not a name or an IP address;
    /// [`SpecError::InvalidRequest`] for a payload over [`MAX_PAYLOAD_SIZE`], a TTL of 0,
    /// packets outside 1..=[`MAX_PACKETS`], an interval under [`MIN_INTERVAL`], a loss
    /// threshold over 100%, or a source address of the other family than an IP literal host.
    pub fn validate(&self) -> Result<(), SpecError> {
        let err = |m: &str| Err(SpecError::InvalidRequest(m.to_string()));
        validate_host(&self.host)?;
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
        if self.max_loss_percent > 100 {
            return err("icmp: the loss threshold must be 0 to 100 percent");
        }
        if let (Some(src), Ok(dst)) = (self.connect.source_address, self.host.parse::<IpAddr>()) {
            if src.is_ipv4() != dst.is_ipv4() {
                return err("icmp: the source address is of the other family than the host");
            }
        }
        Ok(())
    }

    /// [`IcmpSpec::validate`], and that the requests all go out within the run's `timeout`
    /// (the last one with time to be answered), so that a run's loss counts every request.
    ///
    /// # Errors
    ///
    /// As [`IcmpSpec::validate`]; [`SpecError::InvalidRequest`] when `packets - 1` intervals
    /// take the whole timeout or more.
    pub fn validate_within(&self, timeout: Duration) -> Result<(), SpecError> {
        self.validate()?;
        let sending = self.interval.saturating_mul(self.packets.saturating_sub(1));
        if sending >= timeout {
            return Err(SpecError::InvalidRequest(format!(
                "icmp: {} packets {:?} apart take {:?}, not less than the timeout {:?}",
                self.packets, self.interval, sending, timeout
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    #[test]
    fn bounds_are_checked_when_the_spec_is_made() {
        assert!(
            ProbeSpec::icmp("[::1]")
                .is_ok_and(|s| matches!(&s.kind, ProbeKind::Icmp(i) if i.host == "::1"))
        );
        assert!(matches!(ProbeSpec::icmp(""), Err(SpecError::InvalidHost(_))));
        let bad = [
            IcmpSpec { packets: 0, ..IcmpSpec::new("h") },
            IcmpSpec { packets: 2, interval: Duration::from_millis(1), ..IcmpSpec::new("h") },
            IcmpSpec { ttl: Some(0), ..IcmpSpec::new("h") },
            IcmpSpec { max_loss_percent: 101, ..IcmpSpec::new("h") },
            IcmpSpec { payload_size: MAX_PAYLOAD_SIZE + 1, ..IcmpSpec::new("h") },
            IcmpSpec {
                connect: ConnectOptions {
                    source_address: Some("::1".parse().unwrap()),
                    ..ConnectOptions::default()
                },
                ..IcmpSpec::new("127.0.0.1")
            },
        ];
        // Five requests a second apart do not fit in the default timeout (1s); in 5s they do.
        let five = IcmpSpec { packets: 5, ..IcmpSpec::new("h") };
        let mut spec = ProbeSpec::icmp_with(five).unwrap();
        assert!(
            matches!(spec.validate(), Err(SpecError::InvalidRequest(m)) if m.contains("5 packets"))
        );
        spec.set_timeout(Duration::from_secs(5)).unwrap();
        assert!(spec.validate().is_ok());
        // A network namespace, as for the other network kinds.
        let spec = ProbeSpec::icmp("h").unwrap().with_netns("/proc/self/ns/net").unwrap();
        assert_eq!(spec.netns().map(|n| n.path().to_path_buf()), Some("/proc/self/ns/net".into()));
        for spec in bad {
            assert!(
                matches!(ProbeSpec::icmp_with(spec.clone()), Err(SpecError::InvalidRequest(_))),
                "{spec:?}"
            );
        }
    }
}
