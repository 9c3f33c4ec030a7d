//! HTTP probes against `prober_testkit::TargetServer` on loopback: the kubelet's upstream cases
//! (`http_test.go` and `request_test.go`, <https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/http/http_test.go>; numbered H1 to H46
//! here in the order ported, tests named `hNN_...`). libprober's own cases are in
//! `redirects.rs`, `bodies.rs`, `errors.rs` and `connections.rs`.

mod common;

use common::*;

// ---------------------------------------------------------------------------------------------
// H1: the proxy environment is ignored.

/// H1: proxy variables in the environment are ignored. The test re-runs itself in a child
/// process with the variables set from the start (no `std::env::set_var` in a threaded test);
/// the child, told apart by `PROBER_TEST_TARGET`, does the probe.
#[test]
fn h01_proxy_env_is_ignored() {
    if let Ok(url) = std::env::var("PROBER_TEST_TARGET") {
        assert!(std::env::var("http_proxy").is_ok() && std::env::var("HTTP_PROXY").is_ok());
        assert_success(&get(&url), "direct");
        return;
    }
    let target = TargetServer::start();
    let proxy = TargetServer::start();
    let proxy_url = proxy.url("/");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "h01_proxy_env_is_ignored", "--nocapture", "--test-threads=1"])
        .env("PROBER_TEST_TARGET", target.url("/status/200?body=direct"))
        .env("http_proxy", &proxy_url)
        .env("HTTP_PROXY", &proxy_url)
        .env("all_proxy", &proxy_url)
        .env("ALL_PROXY", &proxy_url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .status()
        .unwrap();
    assert!(status.success(), "child test failed: {status}");
    assert_eq!(proxy.connections(), 0, "the proxy was used");
    assert_eq!(target.requests(), 1, "the child must have probed the target directly");
}

// ---------------------------------------------------------------------------------------------
// H2 to H22: the Checker table.

#[test]
fn h02_ok_body() {
    let s = TargetServer::start();
    let o = get(&s.url("/status/200?body=ok%20body"));
    assert_success(&o, "ok body");
    assert_eq!(o.http_status, Some(200));
}

#[test]
fn h03_default_header_count() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/echo/header-count")), "3");
}

#[test]
fn h04_default_header_names() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/echo/header-names")), "Accept\nConnection\nUser-Agent");
}

#[test]
fn default_headers_exact_on_the_wire() {
    let s = TargetServer::start();
    assert_eq!(
        echo_headers(&s, &[]),
        format!(
            "Host: 127.0.0.1:{}\nUser-Agent: kube-probe/1.37\nAccept: */*\nConnection: close\n",
            s.port()
        )
    );
    assert_success(&get(&s.url("/echo/request-line")), "GET /echo/request-line HTTP/1.1");
}

#[test]
fn h05_accept_encoding_gzip() {
    let s = TargetServer::start();
    assert!(echo_headers(&s, &[("Accept-Encoding", "gzip")]).contains("Accept-Encoding: gzip\n"));
}

#[test]
fn h06_accept_encoding_foo() {
    let s = TargetServer::start();
    assert!(echo_headers(&s, &[("Accept-Encoding", "foo")]).contains("Accept-Encoding: foo\n"));
}

#[test]
fn h07_accept_encoding_empty_is_sent_empty() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("Accept-Encoding", "")]);
    assert!(e.contains("Accept-Encoding: \n"), "{e}");
}

#[test]
fn no_accept_encoding_by_default() {
    let s = TargetServer::start();
    assert!(!echo_headers(&s, &[]).contains("Accept-Encoding"));
}

#[test]
fn h08_custom_header() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("X-Muffins-Or-Cupcakes", "muffins")]);
    assert!(e.contains("X-Muffins-Or-Cupcakes: muffins\n"), "{e}");
}

#[test]
fn h09_user_agent_override() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("User-Agent", "foo/1.0")]);
    assert!(e.contains("User-Agent: foo/1.0\n") && !e.contains("kube-probe"), "{e}");
}

#[test]
fn h10_empty_user_agent_removes_it() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("User-Agent", "")]);
    assert!(!e.contains("User-Agent"), "{e}");
}

#[test]
fn h11_default_user_agent() {
    let s = TargetServer::start();
    assert!(echo_headers(&s, &[]).contains("User-Agent: kube-probe/"));
}

#[test]
fn h12_accept_override_with_user_agent() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("User-Agent", "foo/1.0"), ("Accept", "text/html")]);
    assert!(e.contains("Accept: text/html\n") && !e.contains("*/*"), "{e}");
    assert!(e.contains("User-Agent: foo/1.0\n"), "{e}");
}

#[test]
fn h13_accept_wildcard_with_user_agent() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("User-Agent", "foo/1.0"), ("Accept", "foo/*")]);
    assert!(e.contains("User-Agent: foo/1.0\n") && e.contains("Accept: foo/*\n"), "{e}");
}

#[test]
fn h14_accept_with_custom_header() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("X-Muffins-Or-Cupcakes", "muffins"), ("Accept", "foo/*")]);
    assert!(e.contains("X-Muffins-Or-Cupcakes: muffins\n") && e.contains("Accept: foo/*\n"), "{e}");
}

#[test]
fn h15_accept_only() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("Accept", "foo/*")]);
    assert!(e.contains("Accept: foo/*\n") && e.contains("User-Agent: kube-probe/"), "{e}");
}

#[test]
fn h16_empty_accept_removes_it() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("Accept", "")]);
    assert!(!e.contains("Accept:"), "{e}");
}

#[test]
fn h17_empty_accept_with_user_agent() {
    let s = TargetServer::start();
    let e = echo_headers(&s, &[("User-Agent", "foo/1.0"), ("Accept", "")]);
    assert!(!e.contains("Accept:") && e.contains("User-Agent: foo/1.0\n"), "{e}");
}

#[test]
fn h18_default_accept() {
    let s = TargetServer::start();
    assert!(echo_headers(&s, &[]).contains("Accept: */*\n"));
}

#[test]
fn h19_host_override() {
    let s = TargetServer::start();
    let o = get_with(&s.url("/echo/host"), &[("Host", "muffins.cupcakes.org")]);
    assert_success(&o, "muffins.cupcakes.org");
    // Canonicalised name, sent once.
    let e = echo_headers(&s, &[("HOST", "muffins.cupcakes.org")]);
    assert_eq!(e.matches("Host:").count(), 1, "{e}");
    assert!(e.starts_with("Host: muffins.cupcakes.org\n"), "{e}");
}

/// Go's `WriteHeader(-1)` makes the server abort the connection: the probe sees EOF (or, for a
/// server answering garbage, a malformed response).
#[test]
fn h20_server_aborts_or_answers_garbage() {
    let s = TargetServer::start();
    let url = s.url("/close");
    let o = get(&url);
    assert_failure(&o, Reason::Protocol, &format!("Get \"{url}\": EOF"));
    assert_eq!(o.http_status, None);
    assert!(o.output.is_empty());
    let url = s.url("/garbage");
    let o = get(&url);
    assert_failure(
        &o,
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: malformed HTTP status code \"is\""
        ),
    );
}

#[test]
fn h21_status_500() {
    let s = TargetServer::start();
    let o = get(&s.url("/status/500?body=fail%20body"));
    assert_status_failure(&o, 500, "fail body");
}

#[test]
fn h22_slow_server_times_out() {
    let s = TargetServer::start();
    let url = s.url("/slow-headers/3000");
    let o = run(&spec(&url).with_timeout(Duration::from_secs(1)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        ),
    );
    assert!(o.output.is_empty());
    assert!(o.timings.total >= Duration::from_secs(1));
}

// ---------------------------------------------------------------------------------------------
// H23 to H32: redirect status codes.

#[test]
fn h23_to_h30_redirect_codes_good_and_bad() {
    let s = TargetServer::start();
    for code in [301, 302, 307, 308] {
        let o = get(&redirect_to(&s, "/status/200?body=new", code));
        assert_success(&o, "new");
        assert_eq!(o.http_status, Some(200));
        let o = get(&redirect_to(&s, "/status/500?body=bad", code));
        assert_status_failure(&o, 500, "bad");
    }
    // 303 is followed too.
    assert_success(&get(&redirect_to(&s, "/status/200?body=new", 303)), "new");
    assert_eq!(s.requests(), 18);
}

#[test]
fn h31_redirect_without_location_empty_body() {
    let s = TargetServer::start();
    let o = get(&redirect_to(&s, "/no-location/308", 308));
    assert_warning(&o, "");
    assert_eq!(o.http_status, Some(308));
}

#[test]
fn h32_redirect_without_location_with_body() {
    let s = TargetServer::start();
    let o = get(&redirect_to(&s, "/no-location/308?body=ok%20body", 308));
    assert_warning(&o, "ok body");
}

#[test]
fn final_3xx_statuses_that_are_never_followed() {
    let s = TargetServer::start();
    for code in [300, 305, 306] {
        let o = get(&redirect_to(&s, "/status/200", code));
        assert_warning(&o, "redirecting");
        assert_eq!(o.http_status, Some(code));
    }
    // 304 has no body.
    let o = get(&redirect_to(&s, "/status/200", 304));
    assert_warning(&o, "");
    assert_eq!(s.requests(), 4);
}

// ---------------------------------------------------------------------------------------------
// H33 to H38: local and non-local redirects (kubelet mode: same host name).

#[test]
fn h33_local_redirect_success() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/redirect?loc=/status/200")), "status 200");
}

#[test]
fn h34_local_redirect_fail() {
    let s = TargetServer::start();
    assert_status_failure(&get(&s.url("/redirect?loc=/status/500")), 500, "status 500");
}

#[test]
fn h35_new_port_success_same_host_follows() {
    let s = TargetServer::start();
    let other = TargetServer::start();
    let o = get(&redirect_to(&s, &other.url("/status/200"), 302));
    assert_success(&o, "status 200");
    assert_eq!(other.requests(), 1);
}

#[test]
fn h36_new_port_fail() {
    let s = TargetServer::start();
    let other = TargetServer::start();
    assert_status_failure(
        &get(&redirect_to(&s, &other.url("/status/500"), 302)),
        500,
        "status 500",
    );
}

/// "bogus nonlocal": a redirect to another host name is not followed: Warning. We have no
/// `any-host` policy (tests/any_host.rs); same-origin and none do not follow it either.
#[test]
fn h37_nonlocal_redirect_is_a_warning() {
    let s = TargetServer::start();
    for loc in
        ["http://0.0.0.0/fail".to_string(), format!("http://localhost:{}/status/500", s.port())]
    {
        for policy in [RedirectPolicy::SameHost, RedirectPolicy::SameOrigin, RedirectPolicy::None] {
            let o = run(&spec(&redirect_to(&s, &loc, 302)).with_redirect_policy(policy));
            assert_warning(&o, "redirecting");
            assert_eq!(o.http_status, Some(302));
        }
    }
    assert_eq!(s.requests(), 6, "no redirect was followed");
}

#[test]
fn h38_redirect_loop_fails() {
    let s = TargetServer::start();
    let url = s.url("/loop");
    let o = get(&url);
    // Go's client quotes the raw Location of the refused redirect.
    assert_failure(&o, Reason::TooManyRedirects, "Get \"/loop\": stopped after 10 redirects");
    assert_eq!(o.http_status, Some(302));
    assert_eq!(s.requests(), 10, "the kubelet sends at most 10 requests");
}

// ---------------------------------------------------------------------------------------------
// H39, H40: Host header preserved over relative redirects.

#[test]
fn h39_host_header_preserved_after_redirect_success() {
    let s = TargetServer::start();
    let url = s.url("/redirect?loc=/host-must-be/www.success.com");
    assert_success(&get_with(&url, &[("Host", "www.success.com")]), "ok");
}

#[test]
fn h40_host_header_preserved_after_redirect_fail() {
    let s = TargetServer::start();
    let url = s.url("/redirect?loc=/host-must-be/www.success.com");
    assert_status_failure(&get_with(&url, &[("Host", "www.fail.com")]), 400, "wrong host");
}

#[test]
fn host_header_not_carried_over_absolute_or_network_path_locations() {
    let s = TargetServer::start();
    let abs = s.url("/echo/host");
    let o = get_with(&redirect_to(&s, &abs, 302), &[("Host", "www.success.com")]);
    assert_success(&o, &format!("127.0.0.1:{}", s.port()));
    let net = format!("//127.0.0.1:{}/echo/host", s.port());
    let o = get_with(&redirect_to(&s, &net, 302), &[("Host", "www.success.com")]);
    assert_success(&o, &format!("127.0.0.1:{}", s.port()));
}

#[test]
fn user_headers_kept_on_redirects_with_referer() {
    let s = TargetServer::start();
    let first = redirect_to(&s, "/echo/headers", 302);
    let o = get_with(&first, &[("X-Muffins-Or-Cupcakes", "muffins"), ("User-Agent", "foo/1.0")]);
    assert_success(
        &o,
        &format!(
            "Host: 127.0.0.1:{}\nUser-Agent: foo/1.0\nAccept: */*\nConnection: close\n\
             Referer: {first}\nX-Muffins-Or-Cupcakes: muffins\n",
            s.port()
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// H41 to H46: body size and body errors.

#[test]
fn h41_payload_truncated() {
    let s = TargetServer::start();
    let o = get(&s.url("/body/10241"));
    assert_eq!((o.result, o.reason, o.message.as_str()), (ProbeResult::Success, Reason::None, ""));
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
}

#[test]
fn h42_payload_normal() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/body/10239")), &"a".repeat(10239));
}

/// TestFormatURL: the URL forms the kubelet builds, and what goes on the wire for them.
#[test]
fn h43_format_url() {
    assert_eq!(Url::parse("http://localhost:93").unwrap().to_string(), "http://localhost:93/");
    assert_eq!(
        Url::parse("https://localhost:93/path").unwrap().to_string(),
        "https://localhost:93/path"
    );
    let u = Url::parse("http://localhost:93?foo").unwrap();
    assert_eq!((u.to_string().as_str(), u.request_target()), ("http://localhost:93/?foo", "/?foo"));
    let u = Url::parse("https://localhost:93/path?bar").unwrap();
    assert_eq!(
        (u.to_string().as_str(), u.request_target()),
        ("https://localhost:93/path?bar", "/path?bar")
    );
    let s = TargetServer::start();
    assert_success(&get(&s.url("/echo/request-line?bar")), "GET /echo/request-line?bar HTTP/1.1");
    let o = get(&format!("http://127.0.0.1:{}?foo", s.port()));
    assert_success(&o, "ok");
}

/// Test_v1HeaderToHTTPHeader (also a unit test in `request`): names are canonicalised.
#[test]
fn h44_header_names_canonicalised() {
    let s = TargetServer::start();
    let e = echo_headers(
        &s,
        &[("FOO-bAR", "value"), ("HOST", "example.com"), ("x-rep", "1"), ("X-REP", "2")],
    );
    assert_eq!(
        e,
        "Host: example.com\nUser-Agent: kube-probe/1.37\nAccept: */*\nConnection: close\n\
         Foo-Bar: value\nX-Rep: 1\nX-Rep: 2\n"
    );
}

#[test]
fn h45_body_read_error_is_a_failure() {
    let s = TargetServer::start();
    let url = s.url("/truncated/100/50");
    let o = get(&url);
    assert_failure(
        &o,
        Reason::BrokenBody,
        &format!("Get \"{url}\": unexpected EOF reading body (50 of 100 bytes received)"),
    );
    assert_eq!(o.output, vec![b'a'; 50]);
    assert_eq!(o.http_status, Some(200));
}

#[test]
fn h46_body_exactly_at_the_limit_is_not_truncated() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/body/10240")), &"a".repeat(LIMIT));
}
