//! Which addresses a probe may connect to ([`AddressFilter`]): an allow-list of host patterns,
//! networks and ports, checked by the connector against the address it is about to connect to,
//! after name resolution and on every redirect hop.
//!
//! A service that probes targets named by its clients (`prober serve`'s `/probe?target=`) is
//! otherwise an open proxy into its network: a name that resolves to `169.254.169.254`, a
//! redirect to `http://127.0.0.1:2379/`, or `http://2130706433/` (the decimal form of
//! 127.0.0.1, which `getaddrinfo` accepts) all reach what the operator meant to keep out.
//! Checking the address connected to, not the name asked for, closes every one of those
//! doors: DNS rebinding, spellings of IPv4 (hex, octal, decimal), and IPv4-mapped IPv6
//! addresses (`::ffff:127.0.0.1`, compared as the IPv4 address they reach).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// An allow-list of destinations. Each non-empty list must admit a connection: the port must be
/// in [`AddressFilter::ports`], the address in one of [`AddressFilter::nets`], and the host name
/// (as the probe or the redirect names it; an IP literal in its canonical text) must match one
/// of [`AddressFilter::hosts`]. An empty list admits anything on its own axis.
///
/// Only `nets` protects against names that resolve somewhere unexpected (DNS rebinding): host
/// patterns judge the name, not where it leads.
///
/// ```
/// use prober_core::AddressFilter;
///
/// let f = AddressFilter::parse(&["*.example.com"], &["10.0.0.0/8"], &["443", "8000-8099"])?;
/// assert!(f.check(Some("api.example.com"), "10.1.2.3:443".parse()?).is_ok());
/// // The name matches but the address does not: refused, whatever the name.
/// let err = f.check(Some("api.example.com"), "127.0.0.1:443".parse()?).unwrap_err();
/// assert_eq!(err.to_string(), "127.0.0.1 is not in an allowed network");
/// // IPv4-mapped IPv6 is judged as the IPv4 address it reaches.
/// assert!(f.check(Some("api.example.com"), "[::ffff:10.0.0.1]:443".parse()?).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddressFilter {
    /// Host name patterns: `example.com` (that name), `*.example.com` (any name below it, not
    /// the name itself), `*` (any name). Compared without case and without a final dot.
    pub hosts: Vec<String>,
    /// Networks, IPv4 or IPv6, with their prefix length.
    pub nets: Vec<IpNet>,
    /// Port ranges, inclusive.
    pub ports: Vec<(u16, u16)>,
}

/// A network: an address and a prefix length (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7/32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

/// Why a destination was refused by an [`AddressFilter`], or why one could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError(String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FilterError {}

/// The address as the kernel will reach it: an IPv4-mapped IPv6 address is its IPv4 address.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

impl IpNet {
    /// Parses `ADDR/PREFIX` or a bare address (a single host: /32 or /128). Host bits set
    /// beyond the prefix are refused (`10.0.0.1/8` is most likely a typo).
    ///
    /// # Errors
    ///
    /// A [`FilterError`] naming the text.
    pub fn parse(s: &str) -> Result<IpNet, FilterError> {
        let bad = |why: &str| FilterError(format!("invalid network {s:?}: {why}"));
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad("not an IP address"))?;
        let addr = canonical_ip(addr);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(|| {
                bad(&format!("the prefix length must be a number from 0 to {max}"))
            })?,
            None => max,
        };
        let net = IpNet { addr, prefix };
        if !net.contains(addr) || net.masked() != bits(addr) {
            return Err(bad("bits are set beyond the prefix length"));
        }
        Ok(net)
    }

    fn masked(&self) -> u128 {
        bits(self.addr) & mask(self.prefix, self.addr.is_ipv4())
    }

    /// Whether `ip` (IPv4-mapped IPv6 taken as IPv4) is in this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical_ip(ip);
        ip.is_ipv4() == self.addr.is_ipv4()
            && bits(ip) & mask(self.prefix, ip.is_ipv4()) == self.masked()
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn mask(prefix: u8, v4: bool) -> u128 {
    match (prefix, v4) {
        (0, _) => 0,
        (p, true) => u128::from(u32::MAX << (32 - u32::from(p))),
        (p, false) => u128::MAX << (128 - u32::from(p)),
    }
}

impl AddressFilter {
    /// Builds a filter from text: host patterns, networks (`ADDR/PREFIX` or an address) and
    /// ports (`N` or `LOW-HIGH`).
    ///
    /// # Errors
    ///
    /// A [`FilterError`] naming the first entry that is not valid.
    pub fn parse<H, N, P>(
        hosts: &[H],
        nets: &[N],
        ports: &[P],
    ) -> Result<AddressFilter, FilterError>
    where
        H: AsRef<str>,
        N: AsRef<str>,
        P: AsRef<str>,
    {
        let mut f = AddressFilter::default();
        for h in hosts {
            let h = h.as_ref();
            let name = h.strip_prefix("*.").unwrap_or(h);
            let ok = h == "*"
                || (!name.is_empty()
                    && name.len() <= 253
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b)));
            if !ok {
                return Err(FilterError(format!("invalid host pattern {h:?}")));
            }
            f.hosts.push(h.trim_end_matches('.').to_ascii_lowercase());
        }
        for n in nets {
            f.nets.push(IpNet::parse(n.as_ref())?);
        }
        for p in ports {
            let p = p.as_ref();
            let bad = || FilterError(format!("invalid port range {p:?} (expected N or LOW-HIGH)"));
            let (lo, hi) = p.split_once('-').unwrap_or((p, p));
            let lo: u16 = lo.trim().parse().map_err(|_| bad())?;
            let hi: u16 = hi.trim().parse().map_err(|_| bad())?;
            if lo == 0 || lo > hi {
                return Err(bad());
            }
            f.ports.push((lo, hi));
        }
        Ok(f)
    }

    /// Whether `name` (a host name or IP literal) matches the host patterns (true without any).
    pub fn host_allowed(&self, name: &str) -> bool {
        if self.hosts.is_empty() {
            return true;
        }
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        // An IP literal is judged in its canonical text (`0:0::1` is `::1`).
        let name = match name.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            Ok(ip) => canonical_ip(ip).to_string(),
            Err(_) => name,
        };
        self.hosts.iter().any(|p| match p.strip_prefix("*.") {
            _ if p == "*" => true,
            Some(suffix) => {
                name.len() > suffix.len() + 1
                    && name.ends_with(suffix)
                    && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            }
            None => *p == name,
        })
    }

    /// Whether `port` is in the port ranges (true without any).
    pub fn port_allowed(&self, port: u16) -> bool {
        self.ports.is_empty() || self.ports.iter().any(|(lo, hi)| (*lo..=*hi).contains(&port))
    }

    /// Whether `ip` is in the networks (true without any).
    pub fn ip_allowed(&self, ip: IpAddr) -> bool {
        self.nets.is_empty() || self.nets.iter().any(|n| n.contains(ip))
    }

    /// Checks a connection to `addr` for the host `name` (`None` when no name is known: the
    /// address's text is then judged by the host patterns).
    ///
    /// # Errors
    ///
    /// A [`FilterError`] saying which rule refused it.
    pub fn check(&self, name: Option<&str>, addr: SocketAddr) -> Result<(), FilterError> {
        let ip = canonical_ip(addr.ip());
        if !self.port_allowed(addr.port()) {
            return Err(FilterError(format!("port {} is not allowed", addr.port())));
        }
        let name_text;
        let name = match name {
            Some(n) => n,
            None => {
                name_text = ip.to_string();
                &name_text
            }
        };
        if !self.host_allowed(name) {
            return Err(FilterError(format!("host {name} is not allowed")));
        }
        if !self.ip_allowed(ip) {
            return Err(FilterError(format!("{ip} is not in an allowed network")));
        }
        Ok(())
    }
}

/// An IPv4 address in the forms `inet_aton` (and so `getaddrinfo`) accepts beyond the dotted
/// decimal: hex (`0x7f.1`), octal (`0177.0.0.1`), fewer parts (`127.1`) and one number
/// (`2130706433`). For checks made before resolution; the connector's check after it sees the
/// address whatever the spelling.
pub fn parse_ipv4_loose(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or(p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let n = if digits.is_empty() { 0 } else { u64::from_str_radix(digits, radix).ok()? };
        nums.push(n);
    }
    let last = nums.pop()?;
    let mut value: u64 = 0;
    for (i, n) in nums.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        value |= n << (24 - 8 * i);
    }
    let room = 32 - 8 * nums.len() as u32;
    if room < 64 && last >= 1u64 << room {
        return None;
    }
    value |= last;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(hosts: &[&str], nets: &[&str], ports: &[&str]) -> AddressFilter {
        AddressFilter::parse(hosts, nets, ports).unwrap()
    }

    #[test]
    fn networks() {
        let n = IpNet::parse("10.0.0.0/8").unwrap();
        assert!(n.contains("10.255.0.1".parse().unwrap()));
        assert!(!n.contains("11.0.0.1".parse().unwrap()));
        assert!(n.contains("::ffff:10.1.1.1".parse().unwrap()));
        assert!(!n.contains("fd00::1".parse().unwrap()));
        let v6 = IpNet::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(IpNet::parse("0.0.0.0/0").unwrap().contains("1.2.3.4".parse().unwrap()));
        assert!(IpNet::parse("127.0.0.1").unwrap().contains("127.0.0.1".parse().unwrap()));
        assert!(!IpNet::parse("127.0.0.1").unwrap().contains("127.0.0.2".parse().unwrap()));
        assert_eq!(
            IpNet::parse("10.0.0.1/8").unwrap_err().to_string(),
            "invalid network \"10.0.0.1/8\": bits are set beyond the prefix length"
        );
        assert!(IpNet::parse("10.0.0.0/33").is_err());
        assert!(IpNet::parse("example.com/8").is_err());
    }

    #[test]
    fn hosts_ports() {
        let a = f(&["*.example.com", "LOCALHOST."], &[], &["80", "8000-8100"]);
        assert!(a.host_allowed("www.example.com"));
        assert!(a.host_allowed("a.b.Example.COM."));
        assert!(!a.host_allowed("example.com"));
        assert!(!a.host_allowed("badexample.com"));
        assert!(a.host_allowed("localhost"));
        assert!(a.port_allowed(8050) && a.port_allowed(80) && !a.port_allowed(81));
        let addr: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(a.check(None, addr).unwrap_err().to_string(), "host 127.0.0.1 is not allowed");
        assert!(AddressFilter::parse(&["a b"], &[] as &[&str], &[] as &[&str]).is_err());
        assert!(AddressFilter::parse(&[] as &[&str], &[] as &[&str], &["0"]).is_err());
        assert!(AddressFilter::parse(&[] as &[&str], &[] as &[&str], &["9-1"]).is_err());
        let ip = f(&["::1"], &[], &[]);
        assert!(ip.host_allowed("0:0:0:0:0:0:0:1") && ip.host_allowed("[::1]"));
    }

    #[test]
    fn loose_ipv4() {
        let lo = Some(Ipv4Addr::new(127, 0, 0, 1));
        for s in ["127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.0.0.1"] {
            assert_eq!(parse_ipv4_loose(s), lo, "{s}");
        }
        for s in ["256.0.0.1", "1.2.3.4.5", "example.com", "0x1ffffffff", "1.2.65536"] {
            assert_eq!(parse_ipv4_loose(s), None, "{s}");
        }
    }
}
