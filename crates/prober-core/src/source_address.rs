//! The local address a probe's socket is bound to before it connects (issue 34:
//! blackbox_exporter's `source_ip_address`, curl's `--interface ADDRESS`, Go's
//! `net.Dialer.LocalAddr`).
//!
//! This crate does no I/O: [`source_family_admits`] is the rule, applied by the connector
//! (`prober-tcp`) after the address family ([`IpFamily::select`]), and the bind happens there,
//! on every socket of a run (each redirect hop, a namespace's sockets).

use std::net::{IpAddr, SocketAddr};

use crate::ip_family::IpFamily;
use crate::spec::{ProbeKind, ProbeSpec, SpecError};

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

impl ProbeSpec {
    /// Binds the socket of a TCP, HTTP(S), gRPC or ICMP probe to the local address `source` before
    /// it connects (blackbox_exporter's `source_ip_address`); `None` (the default) lets the
    /// system choose. Every connection of a run is bound (each redirect hop, the connection to
    /// a proxy), in a network namespace too (the socket made there is bound there). The port
    /// is always one the system chooses.
    ///
    /// Only the target's addresses of `source`'s family are connected to, after the address
    /// family ([`ProbeSpec::set_ip_family`]) has chosen among them, as Go's dialer keeps only
    /// those of its local address's family: when none is left the run fails with reason
    /// `dns`, naming the source address. An address this host does not have fails the run
    /// with reason `unreachable` (`bind: cannot assign requested address`), naming it. An
    /// IPv4-mapped IPv6 address is stored as the IPv4 address it maps; the unspecified
    /// addresses (`0.0.0.0`, `::`) bind nothing and keep every family, as in Go. A kept-alive
    /// connection is only reused by probes asking for the same source. Probes through a Unix
    /// socket take it and ignore it (they have no address).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an exec or host-run probe.
    pub fn set_source_address(&mut self, source: Option<IpAddr>) -> Result<(), SpecError> {
        let source = source.map(|ip| ip.to_canonical());
        match &mut self.kind {
            ProbeKind::Tcp(t) => t.source_address = source,
            ProbeKind::Http(h) => h.source_address = source,
            ProbeKind::Grpc(g) => g.source_address = source,
            ProbeKind::Icmp(i) => i.source = source,
            _ => {
                return Err(SpecError::InvalidRequest(
                    "a source address applies to ICMP and to TCP, HTTP and gRPC probes only".into(),
                ));
            }
        }
        Ok(())
    }

    /// [`ProbeSpec::set_source_address`] of an address as written ([`parse_source_address`]):
    /// what the command line, watch files and module files give.
    ///
    /// # Errors
    ///
    /// As [`parse_source_address`] and [`ProbeSpec::set_source_address`].
    pub fn set_source_address_text(&mut self, text: &str) -> Result<(), SpecError> {
        self.set_source_address(Some(parse_source_address(text)?))
    }

    /// [`ProbeSpec::set_source_address`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_source_address`].
    pub fn with_source_address(mut self, source: IpAddr) -> Result<ProbeSpec, SpecError> {
        self.set_source_address(Some(source))?;
        Ok(self)
    }

    /// The local address the probe's sockets are bound to (`None` for exec and host-run).
    pub fn source_address(&self) -> Option<IpAddr> {
        match &self.kind {
            ProbeKind::Tcp(t) => t.source_address,
            ProbeKind::Http(h) => h.source_address,
            ProbeKind::Grpc(g) => g.source_address,
            ProbeKind::Icmp(i) => i.source,
            _ => None,
        }
    }
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

    #[test]
    fn set_on_connecting_probes_only_and_canonical() {
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        let err = exec.set_source_address(Some("127.0.0.2".parse().unwrap())).unwrap_err();
        assert!(err.to_string().contains("TCP, HTTP and gRPC probes only"), "{err}");
        let mapped: IpAddr = "::ffff:127.0.0.2".parse().unwrap();
        let tcp = ProbeSpec::tcp("h", 80).unwrap().with_source_address(mapped).unwrap();
        assert_eq!(tcp.source_address(), Some("127.0.0.2".parse().unwrap()));
        let mut grpc = ProbeSpec::grpc("h", 80, "").unwrap().with_source_address(mapped).unwrap();
        grpc.set_source_address(None).unwrap();
        assert_eq!(grpc.source_address(), None);
    }
}
