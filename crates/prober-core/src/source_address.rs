//! The local address a probe's socket is bound to before it connects (issue 34:
//! blackbox_exporter's `source_ip_address`, curl's `--interface ADDRESS`, Go's
//! `net.Dialer.LocalAddr`).
//!
//! This crate does no I/O: [`source_family_admits`] is the rule, applied by the connector
//! (`prober-transport`) after the address family ([`IpFamily::select`]), and the bind happens there,
//! on every socket of a run (each redirect hop, a namespace's sockets).

use std::net::{IpAddr, SocketAddr};

use crate::family::IpFamily;
use crate::spec::SpecError;

/// Whether a socket bound to `source` can connect to `target`: the same family (an
/// IPv4-mapped IPv6 address counts as IPv4), or a `source` that is unspecified (`0.0.0.0`,
/// `::`), which binds nothing. Go's dialer (and so blackbox_exporter) keeps only the
/// addresses of the local address's family in the same way (`net/dial.go`,
/// `resolveAddrList`: "no suitable address found" when none is left).
pub fn source_family_admits(source: IpAddr, target: SocketAddr) -> bool {
    source.is_unspecified() || IpFamily::is_v6(source) == IpFamily::is_v6(target.ip())
}

/// A source address as written on every surface (C, Go, the command line, watch files,
/// blackbox_exporter's module file): an IPv4 or IPv6 address, without port, brackets or zone.
///
/// # Errors
///
/// [`SpecError::InvalidRequest`] naming the text.
pub fn parse_source_address(text: &str) -> Result<IpAddr, SpecError> {
    text.parse().map_err(|_| {
        SpecError::InvalidRequest(format!("source address {text:?} is not an IP address"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 80)
    }

    #[test]
    fn parses_bare_addresses_only() {
        assert_eq!(parse_source_address("::1"), Ok(IpAddr::from([0, 0, 0, 0, 0, 0, 0, 1])));
        for bad in ["127.0.0.2:80", "[::1]", "fe80::1%lo", "localhost", ""] {
            let err = parse_source_address(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("source address {bad:?} is not an IP address")), "{err}");
        }
    }

    #[test]
    fn admits_its_own_family_only() {
        let v4: IpAddr = "127.0.0.2".parse().unwrap();
        let v6: IpAddr = "::1".parse().unwrap();
        assert!(source_family_admits(v4, at("127.0.0.1")));
        assert!(source_family_admits(v4, at("::ffff:127.0.0.1")));
        assert!(!source_family_admits(v4, at("::1")));
        assert!(source_family_admits(v6, at("::1")));
        assert!(!source_family_admits(v6, at("127.0.0.1")));
        assert!(source_family_admits("0.0.0.0".parse().unwrap(), at("::1")));
        assert!(source_family_admits("::".parse().unwrap(), at("127.0.0.1")));
    }
}
