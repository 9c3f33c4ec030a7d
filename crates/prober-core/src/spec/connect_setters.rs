//! The connection options of a spec ([`ConnectOptions`]): the one accessor over the kinds that
//! have them, and the setters and getters that go through it. A new network kind is one arm of
//! [`connect_match`]; a new option is a field of [`ConnectOptions`], a [`ConnectOption`] in
//! the table of `connect_options.rs`, and its setter here.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use crate::allow::AddressFilter;
use crate::family::IpFamily;
use crate::netns::NetNs;
use crate::source_address::parse_source_address;
use crate::unix::UnixSocket;

use super::connect_options::{
    ClosePolicy, ConnectOption, ConnectOptions, DNS, GRPC, HTTP, ICMP, TCP, applies_only,
};
use super::error::SpecError;
use super::tls::TlsOptions;
use super::{DnsTransport, ProbeKind, ProbeSpec};

/// The only match over the kinds for connection options: `(options, what the kind takes)`, or
/// `None` for the kinds that do not connect (exec, host-run). Written once for `&` and `&mut`.
macro_rules! connect_match {
    ($kind:expr, $($borrow:tt)+) => {
        match $kind {
            ProbeKind::Tcp(t) => Some(($($borrow)+ t.connect, TCP)),
            ProbeKind::Http(h) => Some(($($borrow)+ h.connect, HTTP)),
            ProbeKind::Grpc(g) => Some(($($borrow)+ g.connect, GRPC)),
            ProbeKind::Dns(d) => Some(($($borrow)+ d.connect, DNS)),
            ProbeKind::Icmp(i) => Some(($($borrow)+ i.connect, ICMP)),
            ProbeKind::Exec(_) | ProbeKind::HostRun(_) => None,
        }
    };
}

impl ProbeSpec {
    /// The connection options of a TCP, HTTP, gRPC, DNS or ICMP probe; `None` for exec and
    /// host-run probes. Each kind uses only some of them (see the setters); read them here.
    pub fn connect_options(&self) -> Option<&ConnectOptions> {
        connect_match!(&self.kind, &).map(|(options, _)| options)
    }

    /// The connection options, to change in place. Prefer the setters: they check the value
    /// and refuse an option the kind does not take; a field written here is checked by
    /// [`ProbeSpec::validate`] only.
    pub fn connect_options_mut(&mut self) -> Option<&mut ConnectOptions> {
        connect_match!(&mut self.kind, &mut).map(|(options, _)| options)
    }

    /// The connection options of a kind that takes `option`; else the refusal, `subject`
    /// followed by the kinds that take it (`"keep-alive applies to"`: `keep-alive applies to
    /// HTTP and gRPC probes only`). The one table of which kind takes which option: callers
    /// ask it rather than list kinds.
    ///
    /// # Errors
    ///
    /// The refusal's text, for a kind that does not take `option`.
    pub fn options_taking(
        &mut self,
        option: ConnectOption,
        subject: &str,
    ) -> Result<&mut ConnectOptions, String> {
        match connect_match!(&mut self.kind, &mut) {
            Some((options, takes)) if takes.takes(option) => Ok(options),
            _ => Err(applies_only(subject, option)),
        }
    }

    /// Sets the allow-list of destinations (TCP, HTTP, gRPC, DNS and ICMP probes; see
    /// [`AddressFilter`]): the connector checks each address, after resolution and on every
    /// redirect hop, and a refused one is a Failure with reason `denied`. `None` removes it.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for an exec or host-run probe.
    pub fn set_address_filter(
        &mut self,
        filter: Option<Arc<AddressFilter>>,
    ) -> Result<(), SpecError> {
        self.options_taking(ConnectOption::AddressFilter, "an address filter applies to")
            .map_err(SpecError::InvalidExpectation)?
            .address_filter = filter;
        Ok(())
    }

    /// Sets how TCP connections are closed (TCP, HTTP and gRPC; ignored for the other kinds).
    pub fn set_close_policy(&mut self, policy: ClosePolicy) {
        if let Ok(options) = self.options_taking(ConnectOption::Close, "") {
            options.close = policy;
        }
    }

    /// Sets the TLS options: of `https://` URLs for HTTP probes; for gRPC probes this also
    /// switches from h2c to TLS; for TCP probes too (beyond the kubelet: TLS from the first
    /// byte, or after the exchange with [`ProbeSpec::set_starttls`]); for DNS probes this
    /// selects DNS over TLS ([`DnsTransport::Tls`](super::DnsTransport::Tls)). Exec, host-run
    /// and ICMP probes refuse them.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for invalid options ([`TlsOptions::validate`]) or a probe that
    /// is not TCP, HTTP, gRPC or DNS.
    pub fn set_tls(&mut self, tls: TlsOptions) -> Result<(), SpecError> {
        tls.validate()?;
        self.options_taking(ConnectOption::Tls, "TLS options apply to")
            .map_err(SpecError::InvalidTls)?
            .tls = Some(tls);
        // As for gRPC, TLS options select the TLS transport: DNS over TLS.
        if let ProbeKind::Dns(d) = &mut self.kind {
            d.transport = DnsTransport::Tls;
        }
        Ok(())
    }

    /// [`ProbeSpec::set_tls`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_tls`].
    pub fn with_tls(mut self, tls: TlsOptions) -> Result<ProbeSpec, SpecError> {
        self.set_tls(tls)?;
        Ok(self)
    }

    /// Turns TLS session resumption on or off ([`TlsOptions::resumption`]; off by default, as
    /// the kubelet). Like every TLS setter of the C API, it edits the spec's TLS options, the
    /// default ones when it has none: on a gRPC, TCP or DNS spec without TLS that switches TLS
    /// on (see [`ProbeSpec::set_tls`]).
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_tls`]: [`SpecError::InvalidTls`] for a probe that takes no TLS.
    pub fn set_tls_resumption(&mut self, on: bool) -> Result<(), SpecError> {
        let options = self
            .options_taking(ConnectOption::Tls, "TLS options apply to")
            .map_err(SpecError::InvalidTls)?;
        let mut tls = options.tls.clone().unwrap_or_default();
        tls.resumption = on;
        self.set_tls(tls)
    }

    /// Whether TLS sessions are resumed ([`TlsOptions::resumption`]): false without TLS.
    pub fn tls_resumption(&self) -> bool {
        self.connect_options().and_then(|c| c.tls.as_ref()).is_some_and(|t| t.resumption)
    }

    /// Turns keep-alive on or off (HTTP and gRPC; see [`ConnectOptions::keep_alive`]).
    ///
    /// # Errors
    /// [`SpecError::InvalidExpectation`] for a probe that is neither HTTP nor gRPC.
    pub fn set_keep_alive(&mut self, on: bool) -> Result<(), SpecError> {
        self.options_taking(ConnectOption::KeepAlive, "keep-alive applies to")
            .map_err(SpecError::InvalidExpectation)?
            .keep_alive = on;
        Ok(())
    }

    /// Sets which address family the probe connects over (TCP, HTTP(S), gRPC, DNS and ICMP;
    /// see [`IpFamily`]): on every connection of a run, redirect hops included. A keep-alive
    /// connection is only reused by probes asking for the same family. Probes through a Unix
    /// socket take it and ignore it (they have no address).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an exec or host-run probe.
    pub fn set_ip_family(&mut self, family: IpFamily) -> Result<(), SpecError> {
        self.options_taking(ConnectOption::IpFamily, "an address family applies to")
            .map_err(SpecError::InvalidRequest)?
            .ip_family = family;
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
        self.connect_options().map_or(IpFamily::Any, |c| c.ip_family)
    }

    /// Makes the probe's sockets in the network namespace at `path` (TCP, HTTP(S), gRPC and DNS;
    /// beyond the kubelet, KEP-4559's idea): `/run/netns/NAME` as `ip netns` makes them,
    /// `/proc/PID/ns/net` of a container's process, or any bind-mounted namespace file. So
    /// `127.0.0.1` is the container's own loopback. Only the socket is made there: connect,
    /// TLS, HTTP and gRPC run as for any probe, and host names resolve through the host's
    /// resolver (`/etc/hosts` and DNS as this process sees them), not the namespace's.
    ///
    /// # Errors
    ///
    /// As [`NetNs::new`]; [`SpecError::InvalidRequest`] for a kind that does not take it or a
    /// probe through a Unix socket (a socket file is reached through the file system, not a
    /// network).
    pub fn set_netns(&mut self, path: impl AsRef<Path>) -> Result<(), SpecError> {
        let ns = NetNs::new(path)?;
        let options = self
            .options_taking(ConnectOption::Netns, "a network namespace applies to")
            .map_err(SpecError::InvalidRequest)?;
        if options.unix_socket.is_some() {
            return Err(crate::netns::with_unix());
        }
        options.netns = Some(ns);
        Ok(())
    }

    /// [`ProbeSpec::set_netns`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_netns`].
    pub fn with_netns(mut self, path: impl AsRef<Path>) -> Result<ProbeSpec, SpecError> {
        self.set_netns(path)?;
        Ok(self)
    }

    /// The network namespace the probe's sockets are made in, if it names one.
    pub fn netns(&self) -> Option<&NetNs> {
        self.connect_options().and_then(|c| c.netns.as_ref())
    }

    /// Connects through a Unix socket instead of to the host and port (HTTP, TCP and gRPC;
    /// curl's `--unix-socket`). An HTTP probe still names its URL's host in `Host` (and, for
    /// `https://`, in SNI), and follows redirects through the same socket; a gRPC probe sends
    /// its host as `:authority`.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an invalid socket or a kind that does not take it.
    pub fn set_unix_socket(&mut self, socket: UnixSocket) -> Result<(), SpecError> {
        socket.validate()?;
        self.options_taking(ConnectOption::UnixSocket, "a Unix socket applies to")
            .map_err(SpecError::InvalidRequest)?
            .unix_socket = Some(socket);
        Ok(())
    }

    /// [`ProbeSpec::set_unix_socket`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_unix_socket`].
    pub fn with_unix_socket(mut self, socket: UnixSocket) -> Result<ProbeSpec, SpecError> {
        self.set_unix_socket(socket)?;
        Ok(self)
    }

    /// Binds the socket of a TCP, HTTP(S), gRPC, DNS (UDP, TCP and DNS over TLS) or ICMP probe
    /// to the local address `source` before it connects or sends (blackbox_exporter's
    /// `source_ip_address`); `None` (the default) lets the system choose. Every connection of a run is bound (each redirect hop, the
    /// connection to a proxy), in a network namespace too (the socket made there is bound
    /// there). The port is always one the system chooses.
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
    /// [`SpecError::InvalidRequest`] for a kind that does not take it (exec, host-run).
    pub fn set_source_address(&mut self, source: Option<IpAddr>) -> Result<(), SpecError> {
        self.options_taking(ConnectOption::SourceAddress, "a source address applies to")
            .map_err(SpecError::InvalidRequest)?
            .source_address = source.map(|ip| ip.to_canonical());
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

    /// The local address the probe's sockets are bound to (`None` for kinds without one).
    pub fn source_address(&self) -> Option<IpAddr> {
        self.connect_options().and_then(|c| c.source_address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_resumption_is_a_tls_option() {
        let mut http = ProbeSpec::http("https://h/").unwrap();
        assert!(!http.tls_resumption(), "off by default");
        http.set_tls_resumption(true).unwrap();
        assert!(http.tls_resumption());
        // As every TLS setter, it switches gRPC to TLS (the default options otherwise).
        let mut grpc = ProbeSpec::grpc("h", 1, "").unwrap();
        grpc.set_tls_resumption(true).unwrap();
        let want = TlsOptions { resumption: true, ..TlsOptions::default() };
        assert_eq!(grpc.connect_options().unwrap().tls, Some(want));
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        assert_eq!(
            exec.set_tls_resumption(true).unwrap_err().to_string(),
            "invalid TLS option: TLS options apply to TCP, HTTP, gRPC and DNS probes only"
        );
    }

    #[test]
    fn family_applies_to_connecting_probes_only() {
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        let err = exec.set_ip_family(IpFamily::V4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "an address family applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        let http = ProbeSpec::http("http://h/").unwrap().with_ip_family(IpFamily::V6).unwrap();
        assert_eq!(http.ip_family(), IpFamily::V6);
        let dns = ProbeSpec::dns("h", 53, "x").unwrap().with_ip_family(IpFamily::V4).unwrap();
        assert_eq!(dns.ip_family(), IpFamily::V4);
    }

    #[test]
    fn source_set_on_connecting_probes_only_and_canonical() {
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        let err = exec.set_source_address(Some("127.0.0.2".parse().unwrap())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a source address applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        let mapped: IpAddr = "::ffff:127.0.0.2".parse().unwrap();
        let dns = ProbeSpec::dns("h", 53, "x").unwrap().with_source_address(mapped).unwrap();
        assert_eq!(dns.source_address(), Some("127.0.0.2".parse().unwrap()));
        let tcp = ProbeSpec::tcp("h", 80).unwrap().with_source_address(mapped).unwrap();
        assert_eq!(tcp.source_address(), Some("127.0.0.2".parse().unwrap()));
        let mut grpc = ProbeSpec::grpc("h", 80, "").unwrap().with_source_address(mapped).unwrap();
        grpc.set_source_address(None).unwrap();
        assert_eq!(grpc.source_address(), None);
        let icmp = ProbeSpec::icmp("h").unwrap().with_source_address(mapped).unwrap();
        assert_eq!(icmp.source_address(), Some("127.0.0.2".parse().unwrap()));
    }

    #[test]
    fn netns_applies_to_network_probes_only() {
        let mut tcp = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
        tcp.set_netns("/proc/1/ns/net").unwrap();
        assert_eq!(tcp.netns().unwrap().path(), Path::new("/proc/1/ns/net"));
        tcp.validate().unwrap();
        let mut http = ProbeSpec::http("http://127.0.0.1/").unwrap();
        http.set_netns("/proc/1/ns/net").unwrap();
        let mut grpc = ProbeSpec::grpc("127.0.0.1", 1, "").unwrap();
        grpc.set_netns("/proc/1/ns/net").unwrap();
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        assert_eq!(
            exec.set_netns("/proc/1/ns/net").unwrap_err().to_string(),
            "a network namespace applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        let sock = UnixSocket::path("/run/app.sock").unwrap();
        let mut unix = ProbeSpec::unix(sock.clone()).unwrap();
        assert!(unix.set_netns("/proc/1/ns/net").is_err());
        // Set the other way round, the whole-spec check refuses it.
        http.set_unix_socket(sock).unwrap();
        assert_eq!(
            http.validate().unwrap_err().to_string(),
            "a network namespace does not apply to a probe through a Unix socket"
        );
    }

    #[test]
    fn one_accessor_for_every_network_kind() {
        let filter =
            Arc::new(AddressFilter::parse::<&str, &str, &str>(&[], &["127.0.0.0/8"], &[]).unwrap());
        for mut spec in [
            ProbeSpec::tcp("h", 1).unwrap(),
            ProbeSpec::http("http://h/").unwrap(),
            ProbeSpec::grpc("h", 1, "").unwrap(),
            ProbeSpec::dns("h", 53, "x").unwrap(),
            ProbeSpec::icmp("h").unwrap(),
        ] {
            spec.set_address_filter(Some(filter.clone())).unwrap();
            assert_eq!(spec.connect_options().unwrap().address_filter.as_ref(), Some(&filter));
        }
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        assert!(exec.connect_options_mut().is_none());
        assert_eq!(
            exec.set_address_filter(None).unwrap_err().to_string(),
            "an address filter applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        let mut tcp = ProbeSpec::tcp("h", 1).unwrap();
        assert_eq!(
            tcp.set_keep_alive(true).unwrap_err().to_string(),
            "keep-alive applies to HTTP and gRPC probes only"
        );
        tcp.set_close_policy(ClosePolicy::Fin);
        assert_eq!(tcp.connect_options().unwrap().close, ClosePolicy::Fin);
        let mut icmp = ProbeSpec::icmp("h").unwrap();
        icmp.set_close_policy(ClosePolicy::Fin);
        assert_eq!(icmp.connect_options().unwrap().close, ClosePolicy::Reset);
        let mut unix = ProbeSpec::unix(UnixSocket::path("/a").unwrap()).unwrap();
        assert_eq!(
            ProbeSpec::dns("h", 53, "x")
                .unwrap()
                .set_unix_socket(UnixSocket::path("/a").unwrap())
                .unwrap_err()
                .to_string(),
            "a Unix socket applies to TCP, HTTP and gRPC probes only"
        );
        assert!(unix.set_tls(TlsOptions::default()).is_ok());
    }
}
