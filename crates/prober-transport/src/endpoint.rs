//! Where a dial goes and how ([`Endpoint`]): what [`crate::dial`] connects to and what
//! [`crate::keep`] keys idle connections by.

use std::net::IpAddr;
use std::sync::Arc;

use prober_core::{AddressFilter, ClosePolicy, IpFamily, NetNs, TlsOptions, UnixSocket};

use crate::TlsSessions;

/// Where a dial goes and how: borrowed from the probe's spec at every call, so that a dial
/// copies nothing per run.
#[derive(Clone, Copy, Debug)]
pub struct Endpoint<'a> {
    /// A host name, or an IP literal (IPv6 without brackets).
    pub host: &'a str,
    /// The TCP port.
    pub port: u16,
    /// TLS options when the connection is TLS (`https`, gRPC with TLS); `None` for plain TCP.
    pub tls: Option<&'a TlsOptions>,
    /// The target's TLS sessions when its options ask for resumption (see [`TlsSessions`]):
    /// the handshake offers one of them, and keeps what the server gives. `None`: a full
    /// handshake, nothing kept.
    pub tls_sessions: Option<&'a TlsSessions>,
    /// The protocols offered by ALPN, in order of preference (TLS only).
    pub alpn: &'static [&'static [u8]],
    /// How the connection ends (RST or FIN), and whether its socket may be pooled.
    pub close: ClosePolicy,
    /// Disable Nagle's algorithm: for protocols that write several small pieces in a row.
    pub nodelay: bool,
    /// Take an idle connection of the same origin from the driver's store when there is one
    /// (see [`crate::keep`]).
    pub keep_alive: bool,
    /// Connect to this Unix socket instead of `host:port` (beyond the kubelet); `host` still
    /// names the server (TLS's SNI and verification).
    pub unix: Option<&'a UnixSocket>,
    /// Connect only to addresses this allow-list admits (checked after resolution, on every
    /// dial, and on a kept connection before it is reused).
    pub filter: Option<&'a Arc<AddressFilter>>,
    /// Make the socket in this network namespace (beyond the kubelet); `None`: this process's.
    pub netns: Option<&'a NetNs>,
    /// Connect only to the addresses of the host this family selects (see
    /// [`IpFamily::select`]); part of a kept connection's origin.
    pub ip_family: IpFamily,
    /// Bind the socket to this local address before connecting (see
    /// [`prober_core::ProbeSpec::set_source_address`]); part of a kept connection's origin.
    pub source: Option<IpAddr>,
}
