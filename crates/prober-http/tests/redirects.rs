//! Redirect policies and limits beyond the kubelet's cases (`http.rs`).

mod common;

use common::*;

#[test]
fn policy_same_host_follows_another_port_same_origin_does_not_none_never() {
    let s = TargetServer::start();
    let other = TargetServer::start();
    let url = redirect_to(&s, &other.url("/status/200"), 302);
    assert_success(&run(&spec(&url).with_redirect_policy(RedirectPolicy::SameHost)), "status 200");
    assert_eq!(other.requests(), 1);
    let o = run(&spec(&url).with_redirect_policy(RedirectPolicy::SameOrigin));
    assert_warning(&o, "redirecting");
    assert_eq!(other.requests(), 1);
    // Same origin follows a same-origin target.
    let o =
        run(&spec(&s.url("/redirect?loc=/status/200"))
            .with_redirect_policy(RedirectPolicy::SameOrigin));
    assert_success(&o, "status 200");
    // None never follows, not even to the same path.
    let o =
        run(&spec(&s.url("/redirect?loc=/status/200")).with_redirect_policy(RedirectPolicy::None));
    assert_warning(&o, "redirecting");
    let o = run(&spec(&s.url("/bad-location")).with_redirect_policy(RedirectPolicy::None));
    assert_warning(&o, "redirecting");
}

#[test]
fn redirect_chain_of_nine_succeeds_ten_fails() {
    // The kubelet's RedirectChecker (checked against Go 1.26's client): 9 redirects are
    // followed; the 10th is refused, so at most 10 requests are sent.
    let s = TargetServer::start();
    let o = get(&s.url("/redirect-chain/9"));
    assert_success(&o, "chain end");
    assert_eq!(s.requests(), 10);
    let o = get(&s.url("/redirect-chain/10"));
    assert_failure(
        &o,
        Reason::TooManyRedirects,
        "Get \"/redirect-chain/0\": stopped after 10 redirects",
    );
    assert_eq!(s.requests(), 20, "the 10th redirect is not fetched");
}

#[test]
fn bad_location_is_a_protocol_failure() {
    let s = TargetServer::start();
    let url = s.url("/bad-location");
    let o = get(&url);
    assert_failure(
        &o,
        Reason::Protocol,
        &format!(
            "Get \"{url}\": failed to parse Location header \"http://[::1\": invalid host \"[::1\" in URL"
        ),
    );
}

#[test]
fn redirect_over_a_host_name_resolves_it() {
    let s = TargetServer::start();
    let o = get(&format!("http://localhost:{}/redirect-chain/1", s.port()));
    assert_success(&o, "chain end");
    assert!(o.timings.resolve.is_some(), "{:?}", o.timings);
}

#[test]
fn phases_are_summed_over_hops() {
    // The first hop needs a name lookup, the second (to an address) does not: the run's
    // timings are the last hop's (no resolve), the sums keep the first hop's lookup.
    let s = TargetServer::start();
    let to = s.url("/body/2000");
    let first = format!("http://localhost:{}/redirect?loc={}", s.port(), enc(&to));
    let o = run(&spec(&first).with_redirect_policy(RedirectPolicy::AnyHost));
    assert_eq!((o.result, o.http_redirects, o.output_total), (ProbeResult::Success, 1, 2000));
    let (t, p) = (o.timings, o.http_phases.expect("HTTP phases"));
    assert_eq!(t.resolve, None, "the last hop connected to an address: {o:?}");
    assert!(p.resolve > Duration::ZERO, "{p:?}");
    let (connect, first_byte) = (t.connect.unwrap(), t.first_byte.unwrap());
    // Both hops connected and waited for an answer: the sums hold more than the last hop.
    assert!(p.processing > first_byte - connect, "{p:?} {t:?}");
    assert!(p.connect > Duration::ZERO && p.transfer > Duration::ZERO, "{p:?}");
    assert!(p.transfer <= t.total - first_byte, "{p:?} {t:?}");
    assert_eq!(p.tls, Duration::ZERO);
    // The phases are disjoint parts of the run.
    assert!(p.resolve + p.connect + p.processing + p.transfer <= t.total, "{p:?} {t:?}");
}

#[test]
fn another_redirect_limit_is_counted_as_the_kubelets() {
    // blackbox_exporter's checker: 10 followed, the 11th refused (11 requests).
    let s = TargetServer::start();
    let mut sp = spec(&s.url("/redirect-chain/10"));
    sp.set_max_redirects(10).unwrap();
    assert_success(&run(&sp), "chain end");
    assert_eq!(s.requests(), 11);
    let mut sp = spec(&s.url("/redirect-chain/11"));
    sp.set_max_redirects(10).unwrap();
    let o = run(&sp);
    assert_failure(
        &o,
        Reason::TooManyRedirects,
        "Get \"/redirect-chain/0\": stopped after 11 redirects",
    );
    assert_eq!((o.http_redirects, o.http_status), (10, Some(302)));
    assert_eq!(s.requests(), 22);
    assert!(spec("http://h/").set_max_redirects(prober_core::MAX_MAX_REDIRECTS + 1).is_err());
}

/// A login that sets a cookie on its redirect and checks it on the next hop (the page echoes
/// the request's headers): sent back only with the run's jar, and only within the run.
#[test]
fn cookies_set_on_a_redirect_go_back_on_the_next_hop_with_the_jar() {
    let s = TargetServer::start();
    let login = s.url(
        "/bytes?status=302&header=Set-Cookie:session%3Dabc%3B%20Path%3D/&header=Location:/echo/headers",
    );
    let o = get(&login);
    assert!(!String::from_utf8_lossy(&o.output).contains("\nCookie:"), "{o:?}");
    let mut sp = spec(&login);
    sp.set_cookies(true).unwrap();
    let o = run(&sp);
    let body = String::from_utf8_lossy(&o.output);
    assert!(body.contains("\nCookie: session=abc\n"), "{body}");
    // A user's Cookie header is kept, the jar's joined to it.
    let mut sp = spec_with(&login, &[("Cookie", "mine=1")]);
    sp.set_cookies(true).unwrap();
    let body = String::from_utf8_lossy(&run(&sp).output).into_owned();
    assert!(body.contains("\nCookie: mine=1; session=abc\n"), "{body}");
    // The first request of a run carries none: the jar is the run's.
    let mut sp = spec(&s.url("/echo/headers"));
    sp.set_cookies(true).unwrap();
    assert!(!String::from_utf8_lossy(&run(&sp).output).contains("Cookie:"));
}
