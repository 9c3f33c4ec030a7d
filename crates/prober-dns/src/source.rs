//! The source address of a DNS query ([`DnsSpec::source_address`]): which of the server's
//! addresses it admits, and the bind of the UDP socket (TCP and TLS sockets are bound by
//! prober-transport's dial, as HTTP's are).

use std::io;
use std::net::{IpAddr, SocketAddr};

use prober_core::{IpFamily, source_family_admits};

use crate::spec::DnsSpec;

/// The first of `candidates` (the server's addresses the address family kept) that a socket
/// bound to `source` can reach; `Err` with Go's words when none is left (`net/dial.go`'s "no
/// suitable address found", as TCP's connector says it), naming the server's `name` if it
/// was given by one.
pub(crate) fn admitted(
    source: Option<IpAddr>,
    candidates: &[SocketAddr],
    net: &str,
    name: Option<&str>,
) -> Result<Option<SocketAddr>, String> {
    let Some(source) = source else { return Ok(candidates.first().copied()) };
    if let Some(addr) = candidates.iter().copied().find(|a| source_family_admits(source, *a)) {
        return Ok(Some(addr));
    }
    let Some(first) = candidates.first() else { return Ok(None) };
    let (mine, other) = if IpFamily::is_v6(source) { ("IPv6", "IPv4") } else { ("IPv4", "IPv6") };
    let theirs = match name {
        Some(name) => format!("{name} has {other} addresses only"),
        None => format!("{} is {other}", first.ip()),
    };
    Err(format!(
        "dial {net} {}->{first}: no suitable address found: the source address {source} is {mine} and {theirs}",
        SocketAddr::new(source, 0)
    ))
}

/// Binds `sock` (a new UDP socket, this process's or made in the spec's network namespace,
/// where the bind then looks for the address) to the spec's source address, port 0.
pub(crate) fn bind_udp(spec: &DnsSpec, sock: &std::net::UdpSocket) -> io::Result<()> {
    match spec.source_address {
        Some(ip) => socket2::SockRef::from(sock).bind(&SocketAddr::new(ip, 0).into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_addresses_of_the_source_family_are_admitted() {
        let both = [at("[::1]:53"), at("127.0.0.1:53")];
        let v4: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(admitted(None, &both, "udp", None), Ok(Some(both[0])));
        assert_eq!(admitted(Some(v4), &both, "udp", None), Ok(Some(both[1])));
        assert_eq!(admitted(Some(v4), &[], "udp", None), Ok(None));
        assert_eq!(
            admitted(Some(v4), &both[..1], "udp", None).unwrap_err(),
            "dial udp 127.0.0.2:0->[::1]:53: no suitable address found: the source address \
             127.0.0.2 is IPv4 and ::1 is IPv6"
        );
        assert_eq!(
            admitted(Some(v4), &both[..1], "tcp", Some("ns.test")).unwrap_err(),
            "dial tcp 127.0.0.2:0->[::1]:53: no suitable address found: the source address \
             127.0.0.2 is IPv4 and ns.test has IPv6 addresses only"
        );
    }
}
