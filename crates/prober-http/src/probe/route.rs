//! Where a hop connects to: the target, or the proxy that reaches it.

use prober_core::{HttpVersion, IpFamily, Scheme};
use prober_transport::dial::Endpoint;
use prober_transport::{ALPN_H2, ALPN_HTTP1};

use super::HttpPlan;
use crate::proxy::proxy_for;
use crate::redirect::Hop;

/// Where the hop of `hop` (or the plan's URL) connects to: TLS with the spec's options for an
/// `https` URL. Through a proxy, the proxy in plain TCP; once its tunnel is open (`tunneled`),
/// the target's TLS inside it (the endpoint the upgrade shakes hands with).
pub(super) fn endpoint<'a>(
    plan: &'a HttpPlan,
    hop: Option<&'a Hop>,
    tunneled: bool,
) -> Endpoint<'a> {
    let url = hop.map_or(&plan.spec.url, |h| &h.url);
    let https = url.scheme() == Scheme::Https;
    let proxy = proxy_for(&plan.spec, url);
    // A server name set for the target belongs to the target's host (a virtual host behind an
    // address, a name its certificate carries): a hop to another host is that host's own, its
    // name sent and verified, as Go's client does without `tls.Config.ServerName` and as
    // blackbox_exporter drops its server name on a redirect to another host. Hops back to the
    // original host, whatever their scheme or port, keep it.
    let tls = match &plan.other_host_tls {
        Some(other) if url.host() != plan.spec.url.host() => other,
        _ => plan.spec.tls(),
    };
    // Go's transport as the kubelet builds it (`utilnet.SetTransportDefaults`, which calls
    // `http2.ConfigureTransports`) offers `h2` whatever its TLS settings; the h2c transport
    // (`Protocols` with unencrypted HTTP/2 only) offers no `h2` on a redirect to `https`.
    // On plain TCP nothing is offered; the list still keys kept connections, so that an h2c
    // connection never serves an HTTP/1.1 probe's run or the other way round.
    let alpn: &'static [&'static [u8]] = match plan.spec.version {
        HttpVersion::Auto => &[ALPN_H2, ALPN_HTTP1],
        HttpVersion::H2c if !https => &[ALPN_H2],
        HttpVersion::Http1 | HttpVersion::H2c => &[ALPN_HTTP1],
    };
    let (host, port) = match proxy {
        Some(p) if !tunneled => (p.host(), p.port()),
        _ => (url.host(), url.port()),
    };
    Endpoint {
        host,
        port,
        // To the proxy in plain TCP; TLS with the target once the tunnel is open.
        tls: (https && (proxy.is_none() || tunneled)).then_some(tls),
        tls_sessions: plan.tls_sessions.as_deref(),
        alpn,
        close: plan.spec.connect.close,
        // TLS makes several small writes in a row (the handshake's last flight, then the
        // request): with Nagle's algorithm the request waits for the peer's delayed ACK, 40 ms
        // on Linux. A plain request is one write and needs no option (and keeps socket reuse).
        nodelay: https,
        // A proxied connection is never kept: its origin is the proxy's, not the target's.
        keep_alive: plan.keep_alive && proxy.is_none(),
        // Every hop goes through the socket, as curl's --unix-socket sends every request.
        unix: plan.spec.connect.unix_socket.as_ref(),
        filter: plan.spec.connect.address_filter.as_ref(),
        // Every hop's socket is made in the namespace: a redirect to the same host stays inside.
        netns: plan.spec.connect.netns.as_ref(),
        // Every hop's addresses are of the family asked for, whatever host it goes to; or, as
        // blackbox_exporter's Go client dials a redirect by name, those of any family once a
        // `Location` has named a host.
        ip_family: match hop {
            Some(h) if h.by_name && plan.spec.redirects_dial_by_name => IpFamily::Any,
            _ => plan.spec.connect.ip_family,
        },
        // Every hop's socket is bound to the source address, whatever host it goes to (the
        // proxy's too): the address is the probe's identity on the network.
        source: plan.spec.connect.source_address,
    }
}
