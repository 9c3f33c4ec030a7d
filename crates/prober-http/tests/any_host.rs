//! The `any-host` redirect policy (Go's client's and blackbox_exporter's) and the address
//! filter checked on every hop, against real servers on loopback.

mod common;
use common::*;

use std::sync::Arc;

use prober_core::{AddressFilter, HttpResponseVersion};

/// A URL of `from` that redirects (302) to `to`.
fn redirect(from: &TargetServer, to: &str) -> String {
    from.url(&format!("/redirect?loc={to}"))
}

#[test]
fn any_host_follows_to_another_host_and_port() {
    let first = TargetServer::start();
    let other = TargetServer::start();
    // 127.0.0.1 -> localhost: another host name and another port.
    let target = format!("http://localhost:{}/status/200", other.port());
    let spec = spec(&redirect(&first, &target)).with_redirect_policy(RedirectPolicy::AnyHost);
    let o = run(&spec);
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(200)), "{o:?}");
    assert_eq!(o.http_redirects, 1);
    assert_eq!(other.requests(), 1, "the other host was asked");
    // The same redirect under the kubelet's rule stops at the 302.
    let o = run(&common::spec(&redirect(&first, &target)));
    assert_eq!((o.result, o.http_redirects), (ProbeResult::Warning, 0), "{o:?}");
    assert_eq!(other.requests(), 1);
}

#[test]
fn any_host_still_stops_after_ten_redirects() {
    let s = TargetServer::start();
    let o = run(&spec(&s.url("/loop")).with_redirect_policy(RedirectPolicy::AnyHost));
    assert_eq!(o.reason, Reason::TooManyRedirects, "{o:?}");
    assert_eq!(s.requests(), 10);
}

#[test]
fn outcome_carries_version_length_peer_and_headers() {
    let s = TargetServer::start();
    let mut spec = spec(&s.url("/status/200"));
    spec.set_keep_headers(true).unwrap();
    let o = run(&spec);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.http_version, Some(HttpResponseVersion::Http11));
    assert_eq!(o.http_content_length, Some(o.output_total), "{o:?}");
    assert_eq!(o.peer.map(|p| p.port()), Some(s.port()));
    assert!(o.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-length")), "{o:?}");
    // Without asking, no headers are kept.
    let o = run(&common::spec(&s.url("/status/200")));
    assert!(o.headers.is_empty());
}

#[test]
fn the_filter_refuses_a_redirect_hop_before_connecting() {
    let first = TargetServer::start();
    let other = TargetServer::start();
    // Only the first server's port: the hop to the other is refused by port.
    let ports = [first.port().to_string()];
    let filter = AddressFilter::parse(&[] as &[&str], &["127.0.0.0/8"], &ports).unwrap();
    let target = other.url("/status/200");
    let mut spec = spec(&redirect(&first, &target)).with_redirect_policy(RedirectPolicy::AnyHost);
    spec.set_address_filter(Some(Arc::new(filter))).unwrap();
    let o = run(&spec);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Denied), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "Get \"{target}\": dial tcp 127.0.0.1:{}: not allowed: port {} is not allowed",
            other.port(),
            other.port()
        )
    );
    assert_eq!((first.requests(), other.requests()), (1, 0), "nothing reached the other server");
}

#[test]
fn the_filter_judges_the_resolved_address_not_the_name() {
    let s = TargetServer::start();
    // `localhost` is allowed by name, but it resolves to loopback, which is not allowed.
    let filter = AddressFilter::parse(&["localhost"], &["10.0.0.0/8"], &[] as &[&str]).unwrap();
    let mut spec = spec(&format!("http://localhost:{}/status/200", s.port()));
    spec.set_address_filter(Some(Arc::new(filter))).unwrap();
    let o = run(&spec);
    assert_eq!(o.reason, Reason::Denied, "{o:?}");
    assert!(o.message.contains("is not in an allowed network"), "{o:?}");
    assert_eq!(s.requests(), 0);
    // The decimal spelling of 127.0.0.1 reaches the same address: refused the same way.
    let filter = AddressFilter::parse(&[] as &[&str], &["10.0.0.0/8"], &[] as &[&str]).unwrap();
    let mut spec = common::spec(&format!("http://2130706433:{}/status/200", s.port()));
    spec.set_address_filter(Some(Arc::new(filter))).unwrap();
    let o = run(&spec);
    assert_eq!(o.reason, Reason::Denied, "{o:?}");
    assert_eq!(s.requests(), 0);
}
