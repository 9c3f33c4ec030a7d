//! The address family a probe connects over (issue 28: blackbox_exporter's
//! `preferred_ip_protocol` and `ip_protocol_fallback`, curl's `-4` / `-6`): the type and its
//! rule. The setters on a spec are `spec/connect_setters.rs`'s; this file imports nothing of
//! `spec/`, so that `ConnectOptions`, which holds a family, sits above it in the import graph.
//!
//! This crate does no I/O: [`IpFamily::select`] is the rule, applied by the connector
//! (`prober-transport`) to every address list it is about to race, on every dial of a run (each
//! redirect hop, a namespace's sockets) and to IP literals as well as resolved names.

use std::net::{IpAddr, SocketAddr};

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

    /// The family of a command-line flag (curl's `-4` / `--ipv4`, `-6` / `--ipv6`, and
    /// `--prefer-ipv4`, `--prefer-ipv6`), or `None` for any other text.
    pub fn from_flag(flag: &str) -> Option<IpFamily> {
        match flag {
            "-4" | "--ipv4" => Some(IpFamily::V4),
            "-6" | "--ipv6" => Some(IpFamily::V6),
            "--prefer-ipv4" => Some(IpFamily::PreferV4),
            "--prefer-ipv6" => Some(IpFamily::PreferV6),
            _ => None,
        }
    }

    /// The flag that names the family in messages (`-4`, `-6`, `--prefer-ipv4`,
    /// `--prefer-ipv6`; `--ipv-any` for [`IpFamily::Any`], which no flag sets).
    pub fn flag(self) -> &'static str {
        match self {
            IpFamily::Any => "--ipv-any",
            IpFamily::V4 => "-4",
            IpFamily::V6 => "-6",
            IpFamily::PreferV4 => "--prefer-ipv4",
            IpFamily::PreferV6 => "--prefer-ipv6",
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

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
            assert_eq!(IpFamily::from_name(f.name()), Some(f));
        }
        assert_eq!(IpFamily::from_name("6"), Some(IpFamily::V6));
        for f in &IP_FAMILIES[1..] {
            assert_eq!(IpFamily::from_flag(f.flag()), Some(*f));
        }
        assert_eq!(IpFamily::from_flag("--ipv6"), Some(IpFamily::V6));
        assert_eq!(IpFamily::from_flag(IpFamily::Any.flag()), None);
    }
}
