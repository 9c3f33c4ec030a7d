//! Where and how a probe connects, beyond its target: the options every network kind (TCP,
//! HTTP, gRPC, DNS, ICMP) carries in one [`ConnectOptions`], and which of them each kind takes.
//!
//! The value types and their checks are the leaf files' (`family.rs`, `netns.rs`, `unix.rs`,
//! `allow.rs`, `tls.rs`); the accessor over the kinds and the setters are `connect_setters.rs`'s.
//! Nothing here names `ProbeSpec`, so that this file stays below it in the import graph.

use std::net::IpAddr;
use std::sync::Arc;

use crate::allow::AddressFilter;
use crate::family::IpFamily;
use crate::netns::NetNs;
use crate::unix::UnixSocket;

use super::tls::TlsOptions;

/// How a TCP connection made by a probe is closed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClosePolicy {
    /// `SO_LINGER` 0: close with RST. Nothing was sent, so nothing is lost, and no TIME_WAIT is
    /// left on this host (deliberate improvement over the kubelet).
    #[default]
    Reset = 0,
    /// An orderly close with FIN, as a plain `close()` does (leaves TIME_WAIT behind).
    Fin = 1,
}

/// Where and how a probe connects, apart from its target (host and port, or URL, which stay in
/// each kind): the options TCP, HTTP, gRPC, DNS and ICMP probes share, set through
/// [`ProbeSpec`](crate::ProbeSpec)'s setters ([`set_ip_family`](crate::ProbeSpec::set_ip_family),
/// [`set_netns`](crate::ProbeSpec::set_netns), ...), which refuse an option the kind does not
/// take; a field a kind does not take keeps its default and is ignored by its probe.
///
/// Named for what it is: options of connecting, not a connection (nothing here is open) and not
/// an endpoint (the target is the kind's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// How the connection is closed once the probe is done (TCP, HTTP, gRPC).
    pub close: ClosePolicy,
    /// TLS options. TCP: TLS from the first byte (or after the exchange with STARTTLS) when
    /// set. gRPC: `None` is plaintext h2c, as the kubelet; `Some`, TLS with ALPN `h2`. DNS: the
    /// options of DNS over TLS (`None` with that transport: blackbox's default). HTTP:
    /// the options of `https://` URLs (also those reached by a redirect); the constructor sets
    /// the default ones, and `None` means them too ([`HttpSpec::tls`](crate::HttpSpec::tls)).
    pub tls: Option<TlsOptions>,
    /// Connect through this Unix socket instead of to the host and port (TCP, HTTP, gRPC; see
    /// [`ProbeSpec::set_unix_socket`](crate::ProbeSpec::set_unix_socket)).
    pub unix_socket: Option<UnixSocket>,
    /// Connect only where this allow-list admits (beyond the kubelet; see [`AddressFilter`]):
    /// checked against each address before it is connected to, on every redirect hop.
    /// `None`: anywhere.
    pub address_filter: Option<Arc<AddressFilter>>,
    /// Make the sockets in this network namespace (TCP, HTTP, gRPC, DNS; see
    /// [`ProbeSpec::set_netns`](crate::ProbeSpec::set_netns)).
    pub netns: Option<NetNs>,
    /// Which addresses of the host are connected to (see
    /// [`ProbeSpec::set_ip_family`](crate::ProbeSpec::set_ip_family)); default all. For HTTP,
    /// of every redirect hop too, unless
    /// [`HttpSpec::redirects_dial_by_name`](crate::HttpSpec::redirects_dial_by_name).
    pub ip_family: IpFamily,
    /// The local address the sockets are bound to before they connect (TCP, HTTP, gRPC, DNS, ICMP;
    /// see [`ProbeSpec::set_source_address`](crate::ProbeSpec::set_source_address)); `None`:
    /// the one the system chooses.
    pub source_address: Option<IpAddr>,
    /// Keep the connection between runs (HTTP and gRPC, beyond the kubelet, which closes it
    /// after every probe): runs to the same origin reuse an idle connection the engine holds
    /// (HTTP/1.1, or one HTTP/2 stream per check), and an HTTP request carries no
    /// `Connection: close`. A GOAWAY, a reset, an idle timeout or a run that times out drops
    /// it, and the next run dials again. Only an engine keeps connections; a one-shot check
    /// closes its connection as without it. Default false.
    pub keep_alive: bool,
}

/// One of the [`ConnectOptions`], for the table of which kinds take it: ask a spec with
/// [`ProbeSpec::options_taking`](crate::ProbeSpec::options_taking).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectOption {
    /// [`ConnectOptions::close`].
    Close,
    /// [`ConnectOptions::tls`].
    Tls,
    /// [`ConnectOptions::unix_socket`].
    UnixSocket,
    /// [`ConnectOptions::address_filter`].
    AddressFilter,
    /// [`ConnectOptions::netns`].
    Netns,
    /// [`ConnectOptions::ip_family`].
    IpFamily,
    /// [`ConnectOptions::source_address`].
    SourceAddress,
    /// [`ConnectOptions::keep_alive`].
    KeepAlive,
}

/// The options a kind of probe takes, by the kind's name in messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Takes {
    /// The kind as messages name it: `TCP`, `HTTP`, `gRPC`, `DNS`, `ICMP`.
    pub(crate) kind: &'static str,
    options: &'static [ConnectOption],
}

impl Takes {
    /// Whether the kind takes `option`.
    pub(crate) fn takes(&self, option: ConnectOption) -> bool {
        self.options.contains(&option)
    }
}

use ConnectOption as O;

/// TCP probes take every option but keep-alive.
pub(crate) const TCP: Takes = Takes {
    kind: "TCP",
    options: &[
        O::Close,
        O::Tls,
        O::UnixSocket,
        O::AddressFilter,
        O::Netns,
        O::IpFamily,
        O::SourceAddress,
    ],
};
/// HTTP probes take every option.
pub(crate) const HTTP: Takes = Takes {
    kind: "HTTP",
    options: &[
        O::Close,
        O::Tls,
        O::UnixSocket,
        O::AddressFilter,
        O::Netns,
        O::IpFamily,
        O::SourceAddress,
        O::KeepAlive,
    ],
};
/// gRPC probes take every option.
pub(crate) const GRPC: Takes = Takes { kind: "gRPC", ..HTTP };
/// DNS probes: the server's address by family and filter, the socket's namespace and source
/// address, and TLS (DNS over TLS, which setting the options selects).
pub(crate) const DNS: Takes = Takes {
    kind: "DNS",
    options: &[O::Tls, O::AddressFilter, O::Netns, O::IpFamily, O::SourceAddress],
};
/// ICMP probes: family, filter, the source address of the echoes and the socket's namespace.
pub(crate) const ICMP: Takes =
    Takes { kind: "ICMP", options: &[O::AddressFilter, O::Netns, O::IpFamily, O::SourceAddress] };

/// Every network kind, in the order messages name them.
const KINDS: [Takes; 5] = [TCP, HTTP, GRPC, DNS, ICMP];

/// `{subject} TCP, HTTP and gRPC probes only` (`subject`: "a Unix socket applies to"): the
/// refusal of an option by a kind that does not take it, naming the kinds that do (from the
/// table, so that it cannot fall behind it).
pub(crate) fn applies_only(subject: &str, option: ConnectOption) -> String {
    let kinds: Vec<&str> = KINDS.iter().filter(|t| t.takes(option)).map(|t| t.kind).collect();
    let list = match kinds.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("{subject} {list} probes only")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_kinds_that_take_the_option() {
        assert_eq!(
            applies_only("an address family applies to", ConnectOption::IpFamily),
            "an address family applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        assert_eq!(
            applies_only("a source address applies to", ConnectOption::SourceAddress),
            "a source address applies to TCP, HTTP, gRPC, DNS and ICMP probes only"
        );
        assert_eq!(
            applies_only("keep-alive applies to", ConnectOption::KeepAlive),
            "keep-alive applies to HTTP and gRPC probes only"
        );
        assert!(GRPC.takes(ConnectOption::KeepAlive) && !TCP.takes(ConnectOption::KeepAlive));
    }
}
