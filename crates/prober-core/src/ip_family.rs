//! The address family a probe connects over (issue 28: blackbox_exporter's
//! `preferred_ip_protocol` and `ip_protocol_fallback`, curl's `-4` / `-6`).
//!
//! This crate does no I/O: [`IpFamily::select`] is the rule, applied by the connector
//! (`prober-tcp`) to every address list it is about to race, on every dial of a run (each
//! redirect hop, a namespace's sockets) and to IP literals as well as resolved names.

use std::net::{IpAddr, SocketAddr};

use crate::spec::{ProbeKind, ProbeSpec, SpecError};

/// Which addresses of a host a TCP, HTTP(S) or gRPC probe connects to.
///
/// The numeric values are the C ABI's `PROBER_IP_FAMILY_*` and are never renumbered. An
/// IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) counts as IPv4, as Go's `net.IP.To4` (and so
/// blackbox_exporter) counts it.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IpFamily {
    /// Every address the resolver gives, raced as Go's dialer (the kubelet's) races them
    /// (RFC 8305, Happy Eyeballs): the default.
    #[default]
    Any = 0,
    /// IPv4 addresses only (curl's `-4`, blackbox's `preferred_ip_protocol: ip4` with
    /// `ip_protocol_fallback: false`). A name with none, or an IPv6 literal, fails with reason
    /// `dns`.
    V4 = 1,
    /// IPv6 addresses only (curl's `-6`); as [`IpFamily::V4`] the other way round.
    V6 = 2,
    /// The IPv4 addresses when the host has any, else its IPv6 ones (blackbox's
    /// `preferred_ip_protocol: ip4` with `ip_protocol_fallback: true`). Unlike
    /// [`IpFamily::Any`], the other family is never raced beside the preferred one.
    PreferV4 = 3,
    /// The IPv6 addresses when the host has any, else its IPv4 ones (blackbox's default:
    /// `preferred_ip_protocol: ip6`, `ip_protocol_fallback: true`).
    PreferV6 = 4,
}

/// Every [`IpFamily`], in the order of their numbers.
pub const IP_FAMILIES: [IpFamily; 5] =
    [IpFamily::Any, IpFamily::V4, IpFamily::V6, IpFamily::PreferV4, IpFamily::PreferV6];

impl IpFamily {
    /// Whether an address is IPv6 for [`IpFamily`]: IPv4-mapped IPv6 addresses are IPv4.
    pub fn is_v6(ip: IpAddr) -> bool {
        ip.to_canonical().is_ipv6()
    }

    /// The name used in watch files, the command line and messages: `any`, `ipv4`, `ipv6`,
    /// `prefer-ipv4`, `prefer-ipv6`.
    pub fn name(self) -> &'static str {
        match self {
            IpFamily::Any => "any",
            IpFamily::V4 => "ipv4",
            IpFamily::V6 => "ipv6",
            IpFamily::PreferV4 => "prefer-ipv4",
            IpFamily::PreferV6 => "prefer-ipv6",
        }
    }

    /// The family of [`IpFamily::name`] (also `4` and `6`), or `None`.
    pub fn from_name(name: &str) -> Option<IpFamily> {
        match name {
            "4" => Some(IpFamily::V4),
            "6" => Some(IpFamily::V6),
            _ => IP_FAMILIES.into_iter().find(|f| f.name() == name),
        }
    }

    /// The family of its C ABI number, or `None` for a number no family has.
    pub fn from_u32(value: u32) -> Option<IpFamily> {
        IP_FAMILIES.into_iter().find(|f| *f as u32 == value)
    }

    /// Which of `addrs` (a resolved name's, or an IP literal's one) to connect to:
    /// `Ok(None)` all of them, `Ok(Some(v6))` only those of that family ([`IpFamily::is_v6`]), and
    /// `Err(v6)` none: the family required (`v6`) has no address among them.
    ///
    /// The `Prefer*` rule is blackbox_exporter's `chooseProtocol` with `ip_protocol_fallback:
    /// true`: the preferred family if the host has an address of it, else the other.
    ///
    /// # Errors
    ///
    /// `Err(v6)` when [`IpFamily::V4`] or [`IpFamily::V6`] finds no address of its family.
    pub fn select(self, addrs: &[SocketAddr]) -> Result<Option<bool>, bool> {
        let has = |v6: bool| addrs.iter().any(|a| IpFamily::is_v6(a.ip()) == v6);
        match self {
            IpFamily::Any => Ok(None),
            IpFamily::V4 | IpFamily::V6 => {
                let v6 = self == IpFamily::V6;
                if has(v6) { Ok(Some(v6)) } else { Err(v6) }
            }
            IpFamily::PreferV4 | IpFamily::PreferV6 => {
                let v6 = self == IpFamily::PreferV6;
                Ok(Some(if has(v6) { v6 } else { !v6 }))
            }
        }
    }
}

impl ProbeSpec {
    /// Sets which address family the probe connects over (TCP, HTTP(S) and gRPC; see
    /// [`IpFamily`]): on every connection of a run, redirect hops included. A keep-alive
    /// connection is only reused by probes asking for the same family. Probes through a Unix
    /// socket take it and ignore it (they have no address).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an exec or host-run probe.
    pub fn set_ip_family(&mut self, family: IpFamily) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => t.ip_family = family,
            ProbeKind::Http(h) => h.ip_family = family,
            ProbeKind::Grpc(g) => g.ip_family = family,
            ProbeKind::Dns(d) => d.ip_family = family,
            _ => {
                return Err(SpecError::InvalidRequest(
                    "an address family applies to TCP, HTTP and gRPC probes only".into(),
                ));
            }
        }
        Ok(())
    }

    /// Lets an HTTP probe's redirects that name a host dial it by name over both families,
    /// the address family holding for the target and its relative redirects only
    /// ([`HttpSpec::redirects_dial_by_name`](crate::HttpSpec::redirects_dial_by_name):
    /// blackbox_exporter's HTTP prober). Off by default: every hop keeps the family.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP.
    pub fn set_redirects_dial_by_name(&mut self, on: bool) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => h.redirects_dial_by_name = on,
            _ => {
                return Err(SpecError::InvalidRequest(
                    "redirects dialed by name apply to HTTP probes only".into(),
                ));
            }
        }
        Ok(())
    }

    /// [`ProbeSpec::set_ip_family`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_ip_family`].
    pub fn with_ip_family(mut self, family: IpFamily) -> Result<ProbeSpec, SpecError> {
        self.set_ip_family(family)?;
        Ok(self)
    }

    /// The address family the probe connects over ([`IpFamily::Any`] for exec and host-run).
    pub fn ip_family(&self) -> IpFamily {
        match &self.kind {
            ProbeKind::Tcp(t) => t.ip_family,
            ProbeKind::Http(h) => h.ip_family,
            ProbeKind::Grpc(g) => g.ip_family,
            ProbeKind::Dns(d) => d.ip_family,
            _ => IpFamily::Any,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| SocketAddr::new(a.parse().unwrap(), 80)).collect()
    }

    #[test]
    fn select_follows_blackbox_rule() {
        let both = addrs(&["::1", "127.0.0.1"]);
        let v4 = addrs(&["127.0.0.1"]);
        let v6 = addrs(&["::1"]);
        assert_eq!(IpFamily::Any.select(&both), Ok(None));
        assert_eq!(IpFamily::V4.select(&both), Ok(Some(false)));
        assert_eq!(IpFamily::V6.select(&both), Ok(Some(true)));
        assert_eq!(IpFamily::V4.select(&v6), Err(false));
        assert_eq!(IpFamily::V6.select(&v4), Err(true));
        assert_eq!(IpFamily::PreferV4.select(&both), Ok(Some(false)));
        assert_eq!(IpFamily::PreferV6.select(&both), Ok(Some(true)));
        assert_eq!(IpFamily::PreferV4.select(&v6), Ok(Some(true)));
        assert_eq!(IpFamily::PreferV6.select(&v4), Ok(Some(false)));
        // IPv4-mapped IPv6 is IPv4, as Go's To4 says.
        assert_eq!(IpFamily::V4.select(&addrs(&["::ffff:127.0.0.1"])), Ok(Some(false)));
    }

    #[test]
    fn names_and_numbers_round_trip() {
        for (i, f) in IP_FAMILIES.into_iter().enumerate() {
            assert_eq!(f as u32, i as u32);
            assert_eq!(IpFamily::from_u32(i as u32), Some(f));
            assert_eq!(IpFamily::from_name(f.name()), Some(f));
        }
        assert_eq!(IpFamily::from_u32(5), None);
        assert_eq!(IpFamily::from_name("6"), Some(IpFamily::V6));
    }

    #[test]
    fn applies_to_connecting_probes_only() {
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        let err = exec.set_ip_family(IpFamily::V4).unwrap_err();
        assert!(err.to_string().contains("TCP, HTTP and gRPC probes only"), "{err}");
        let http = ProbeSpec::http("http://h/").unwrap().with_ip_family(IpFamily::V6).unwrap();
        assert_eq!(http.ip_family(), IpFamily::V6);
    }
}
