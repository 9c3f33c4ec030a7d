//! `prober check`'s `dns://` and `icmp://` targets (beyond the kubelet, as blackbox_exporter's
//! dns and icmp probers) and the flags of those two kinds: dig's and ping's questions, named
//! as the command names the other kinds' (`--dns-type` beside `--expect-status`, ping's
//! `-c`/`--count`). The connection flags (`-4`, `-6`, `--source-address`, ...) are the
//! shared ones (extensions.rs); how the facts are printed is prober-watch's `facts`.

use prober::{DnsTransport, Pattern, ProbeKind, ProbeSpec};

use crate::args::{Failure, Parser};
use crate::duration;

/// The flags of DNS and ICMP targets, as given (by the table of `check_flags.rs`).
#[derive(Debug, Default)]
pub struct KindFlags {
    /// The first DNS flag given, as typed, for the message when the target is not `dns://`.
    dns_flag: Option<String>,
    /// The first ICMP flag given, likewise.
    icmp_flag: Option<String>,
    pub dns_type: Option<String>,
    pub dns_class: Option<String>,
    pub dns_tcp: bool,
    pub dns_tcp_fallback: bool,
    pub dns_no_recursion: bool,
    pub dns_edns: Option<String>,
    pub valid_rcodes: Option<String>,
    pub expect_answer: Vec<String>,
    pub count: Option<String>,
    pub interval: Option<String>,
    pub payload_size: Option<String>,
    pub ttl: Option<String>,
    pub dont_fragment: bool,
    pub max_loss: Option<String>,
}

impl KindFlags {
    /// Notes DNS flag `name` (as typed) and gives the flags to set it in.
    pub fn dns(&mut self, name: &str) -> &mut KindFlags {
        self.dns_flag.get_or_insert_with(|| name.to_string());
        self
    }

    /// Notes ICMP flag `name` (as typed) and gives the flags to set it in.
    pub fn icmp(&mut self, name: &str) -> &mut KindFlags {
        self.icmp_flag.get_or_insert_with(|| name.to_string());
        self
    }

    /// Applies the flags to `spec`, refusing those of the other kinds. `timeout_given`: without
    /// `--timeout`, an ICMP run of several echoes gets the time to send them all (as `ping -c`
    /// takes it) and one second more for the last reply. `target`: the TARGET as given, for DNS
    /// over TLS's port (853, as `dig +tls`, unless the target names one).
    pub fn apply(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        timeout_given: bool,
        target: Option<&str>,
    ) -> Result<(), Failure> {
        match &mut spec.kind {
            ProbeKind::Dns(d) => {
                if let Some(flag) = &self.icmp_flag {
                    return Err(args.usage(format!("{flag} applies to icmp:// targets only")));
                }
                if d.transport == DnsTransport::Tls && !target.is_some_and(dns_port_given) {
                    d.port = DNS_OVER_TLS_PORT;
                }
                self.apply_dns(args, d)
            }
            ProbeKind::Icmp(_) => {
                if let Some(flag) = &self.dns_flag {
                    return Err(args.usage(format!("{flag} applies to dns:// targets only")));
                }
                self.apply_icmp(args, spec, timeout_given)
            }
            _ => match (&self.dns_flag, &self.icmp_flag) {
                (Some(flag), _) => {
                    Err(args.usage(format!("{flag} applies to dns:// targets only")))
                }
                (None, Some(flag)) => {
                    Err(args.usage(format!("{flag} applies to icmp:// targets only")))
                }
                (None, None) => Ok(()),
            },
        }
    }

    fn apply_dns(&self, args: &Parser, d: &mut prober::DnsSpec) -> Result<(), Failure> {
        use prober_dns::render::{class_from_name, type_from_name};
        if let Some(t) = &self.dns_type {
            d.query_type = type_from_name(&t.to_ascii_uppercase()).ok_or_else(|| {
                args.usage(format!("bad --dns-type '{t}' (expected A, AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, CAA, ANY, ...)"))
            })?;
        }
        if let Some(c) = &self.dns_class {
            d.query_class = class_from_name(&c.to_ascii_uppercase()).ok_or_else(|| {
                args.usage(format!("bad --dns-class '{c}' (expected IN, CH, HS or ANY)"))
            })?;
        }
        if self.dns_tcp && self.dns_tcp_fallback {
            return Err(args.usage("give --dns-tcp or --dns-tcp-fallback, not both"));
        }
        if d.transport == DnsTransport::Tls && (self.dns_tcp || self.dns_tcp_fallback) {
            return Err(args.usage("--dns-tcp and --dns-tcp-fallback do not go with --tls"));
        }
        if self.dns_tcp {
            d.transport = DnsTransport::Tcp;
        }
        d.tcp_on_truncation = self.dns_tcp_fallback;
        d.recursion_desired = !self.dns_no_recursion;
        if let Some(v) = &self.dns_edns {
            let size = v.parse::<u16>().ok().filter(|n| *n >= 512).ok_or_else(|| {
                args.usage(format!("bad --dns-edns '{v}' (expected a UDP size, 512 to 65535)"))
            })?;
            d.edns_udp_size = Some(size);
        }
        if let Some(list) = &self.valid_rcodes {
            d.valid_rcodes = list
                .split(',')
                .map(|n| {
                    let n = n.trim();
                    prober_dns::validate::rcode_from_name(&n.to_ascii_uppercase()).ok_or_else(
                        || args.usage(format!("bad --valid-rcodes: unknown rcode '{n}' (expected NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ...)")),
                    )
                })
                .collect::<Result<_, _>>()?;
        }
        for re in &self.expect_answer {
            let p = Pattern::new(re).map_err(|e| args.usage(format!("--expect-answer: {e}")))?;
            d.validate_answer.fail_if_none_matches.push(p);
        }
        Ok(())
    }

    fn apply_icmp(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        timeout_given: bool,
    ) -> Result<(), Failure> {
        let ProbeKind::Icmp(i) = &mut spec.kind else { return Ok(()) };
        let number = |flag, v, min, max| whole(args, flag, v, min, max);
        if let Some(n) = number("--count", &self.count, 1, u64::from(prober::MAX_PACKETS))? {
            i.packets = n as u32;
        }
        if let Some(n) =
            number("--payload-size", &self.payload_size, 0, prober::MAX_PAYLOAD_SIZE as u64)?
        {
            i.payload_size = n as usize;
        }
        if let Some(n) = number("--ttl", &self.ttl, 1, 255)? {
            i.ttl = Some(n as u8);
        }
        if let Some(n) = number("--max-loss", &self.max_loss, 0, 100)? {
            i.max_loss_percent = n as u8;
        }
        if let Some(v) = &self.interval {
            i.interval =
                duration::parse_positive(v).map_err(|e| args.usage(format!("--interval: {e}")))?;
        }
        i.dont_fragment = self.dont_fragment;
        i.validate().map_err(|e| args.usage(e))?;
        if !timeout_given && i.packets > 1 {
            let sending = i.interval.saturating_mul(i.packets - 1);
            let timeout = sending.saturating_add(prober::DEFAULT_TIMEOUT);
            spec.set_timeout(timeout).map_err(|e| args.usage(format!("--count: {e}")))?;
        }
        Ok(())
    }
}

/// The value of `flag` as a whole number within `min..=max` (`--max-loss` may end in `%`).
fn whole(
    args: &Parser,
    flag: &str,
    v: &Option<String>,
    min: u64,
    max: u64,
) -> Result<Option<u64>, Failure> {
    let Some(v) = v else { return Ok(None) };
    let n = v.strip_suffix('%').filter(|_| flag == "--max-loss").unwrap_or(v);
    let n = n.parse::<u64>().ok().filter(|n| (min..=max).contains(n));
    n.map(Some).ok_or_else(|| {
        args.usage(format!("bad {flag} '{v}' (expected a whole number, {min} to {max})"))
    })
}

/// DNS over TLS's port (RFC 7858).
const DNS_OVER_TLS_PORT: u16 = 853;

/// Whether a `dns://` TARGET names its server's port.
fn dns_port_given(target: &str) -> bool {
    let rest = target.split_once("://").map_or(target, |(_, r)| r);
    let server = rest.split('/').next().unwrap_or("");
    match server.strip_prefix('[') {
        Some(r) => r.contains("]:"),
        None => server.contains(':'),
    }
}

/// `dns://SERVER[:PORT]/NAME`: a query of NAME (type A unless `--dns-type` says) to the
/// server, port 53 unless given; IPv6 servers in brackets.
pub fn dns_target(rest: &str) -> Result<ProbeSpec, String> {
    let Some((server, name)) = rest.split_once('/') else {
        return Err("missing the name to ask (expected dns://SERVER[:PORT]/NAME)".into());
    };
    if name.is_empty() {
        return Err("missing the name to ask (expected dns://SERVER[:PORT]/NAME)".into());
    }
    let (host, port) = match server.strip_prefix('[') {
        Some(r) => match r.split_once(']') {
            Some((h, "")) => (h, "53"),
            Some((h, p)) if p.starts_with(':') => (h, &p[1..]),
            _ => return Err("expected dns://[IPV6][:PORT]/NAME".into()),
        },
        None => match server.split_once(':') {
            Some((_, p)) if p.contains(':') => {
                return Err("write IPv6 addresses in brackets: dns://[::1]/NAME".into());
            }
            Some((h, p)) => (h, p),
            None => (server, "53"),
        },
    };
    let port: i64 =
        port.parse().map_err(|_| format!("invalid port '{port}' (expected 1 to 65535)"))?;
    ProbeSpec::dns(host, port, name).map_err(|e| e.to_string())
}

/// `icmp://HOST`: echo requests to HOST (a name or an address; IPv6 with or without brackets).
pub fn icmp_target(rest: &str) -> Result<ProbeSpec, String> {
    let host = rest.strip_suffix('/').unwrap_or(rest);
    if host.contains('/') || (host.contains("]:")) || (host.matches(':').count() == 1) {
        return Err("an ICMP target is a host only (expected icmp://HOST)".into());
    }
    ProbeSpec::icmp(host).map_err(|e| e.to_string())
}
