//! HTTP probes against `prober_testkit::TargetServer` on loopback: the kubelet's upstream cases
//! (`http_test.go` and `request_test.go`, <https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/http/http_test.go>; numbered H1 to H46
//! here in the order ported, tests named `hNN_...`) and libprober's own.

use std::time::{Duration, Instant};

use prober_core::{
    ClosePolicy, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy, Url,
};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::{TargetServer, closed_port};

const TIMEOUT: Duration = Duration::from_secs(5);
const LIMIT: usize = 10240;

fn spec(url: &str) -> ProbeSpec {
    ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap()
}

fn spec_with(url: &str, headers: &[(&str, &str)]) -> ProbeSpec {
    let mut s = spec(url);
    for (n, v) in headers {
        s.add_header(n, v).unwrap();
    }
    s
}

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    // A "did not hang" bound, never a pass condition on speed.
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    o
}

fn get(url: &str) -> Outcome {
    run(&spec(url))
}

fn get_with(url: &str, headers: &[(&str, &str)]) -> Outcome {
    run(&spec_with(url, headers))
}

fn out(o: &Outcome) -> String {
    String::from_utf8(o.output.clone()).expect("UTF-8 output")
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[track_caller]
fn assert_success(o: &Outcome, output: &str) {
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(out(o), output);
    assert!(!o.truncated);
    assert_eq!(o.output_total, output.len() as u64);
}

#[track_caller]
fn assert_failure(o: &Outcome, reason: Reason, message: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, reason), "{o:?}");
    assert_eq!(o.message, message);
}

#[track_caller]
fn assert_status_failure(o: &Outcome, status: u16, body: &str) {
    assert_failure(o, Reason::Status, &format!("HTTP probe failed with statuscode: {status}"));
    assert_eq!(out(o), body, "the body stays in the output, never in the message");
    assert_eq!(o.http_status, Some(status));
}

#[track_caller]
fn assert_warning(o: &Outcome, body: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Warning, Reason::Redirect), "{o:?}");
    assert_eq!(o.message, format!("Probe terminated redirects, Response body: {body}"));
    assert_eq!(out(o), body);
}

fn echo_headers(server: &TargetServer, extra: &[(&str, &str)]) -> String {
    let o = get_with(&server.url("/echo/headers"), extra);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    out(&o)
}

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

fn redirect_to(server: &TargetServer, loc: &str, code: u16) -> String {
    server.url(&format!("/redirect?loc={}&code={code}", enc(loc)))
}

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
/// "follow everything" mode; same-origin and none do not follow it either.
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

// ---------------------------------------------------------------------------------------------
// Redirect policies and limits.

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

// ---------------------------------------------------------------------------------------------
// Bodies.

#[test]
fn one_gib_body_is_cut_at_the_limit_without_memory_growth() {
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let s = TargetServer::start();
    let before = rss_kib();
    let o = get(&s.url("/body/1073741824"));
    let after = rss_kib();
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
    assert!(o.output_total >= LIMIT as u64 && o.output_total < 1 << 20, "{}", o.output_total);
    assert!(after.saturating_sub(before) < 50 * 1024, "RSS grew from {before} KiB to {after} KiB");
}

#[test]
fn chunked_body_exact() {
    let s = TargetServer::start();
    let mut sp = spec(&s.url("/chunked/25000?chunk=7"));
    sp.set_output_limit(65536).unwrap();
    assert_success(&run(&sp), &"a".repeat(25000));
    assert_success(&get(&s.url("/chunked/10240?chunk=1000")), &"a".repeat(LIMIT));
    assert_success(&get(&s.url("/chunked/0")), "");
    let o = get(&s.url("/chunked/100000"));
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated && o.result == ProbeResult::Success);
}

#[test]
fn close_delimited_body_exact() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/close-delimited/5000")), &"a".repeat(5000));
    assert_success(&get(&s.url("/close-delimited/0")), "");
    let o = get(&s.url("/close-delimited/100000"));
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated && o.result == ProbeResult::Success);
}

#[test]
fn content_length_and_chunked_uses_chunked() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/content-length-and-chunked")), "ok");
}

#[test]
fn body_cut_short_past_the_limit_is_not_an_error() {
    let s = TargetServer::start();
    let o = get(&s.url("/truncated/20000/15000"));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
}

#[test]
fn stalled_body_times_out() {
    let s = TargetServer::start();
    let url = s.url("/stall-body/100");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout or context cancellation while reading body)"
        ),
    );
    assert_eq!(o.output, vec![b'a'; 100]);
    assert_eq!(o.http_status, Some(200));
}

#[test]
fn slow_headers_time_out_awaiting_headers() {
    let s = TargetServer::start();
    let url = s.url("/slow-headers/2000");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        ),
    );
    assert_eq!(o.http_status, None);
}

#[test]
fn never_answering_server_times_out() {
    let s = TargetServer::start();
    let url = s.url("/never-answer");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout));
    assert!(
        o.message.ends_with("(Client.Timeout exceeded while awaiting headers)"),
        "{}",
        o.message
    );
    assert!(s.wait_for_connections_closed(1, Duration::from_secs(10)), "connection left open");
}

#[test]
fn drip_fed_body_within_the_timeout_succeeds() {
    let s = TargetServer::start();
    let o = run(&spec(&s.url("/drip/5/20")).with_timeout(Duration::from_secs(5)).unwrap());
    assert_success(&o, "aaaaa");
}

#[test]
fn interim_responses_are_skipped() {
    let s = TargetServer::start();
    let fin = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    let o = get(&s.url(&format!("/bytes?status=103&header=Content-Length:0&body={}", enc(fin))));
    assert_success(&o, "ok");
    assert_eq!(o.http_status, Some(200));
    // An interim response and then nothing: the response had begun, so Go's words.
    let url = s.url("/bytes?status=100&header=Content-Length:0");
    let msg =
        format!("Get \"{url}\": net/http: HTTP/1.x transport connection broken: unexpected EOF");
    assert_failure(&get(&url), Reason::Protocol, &msg);
    // 101 is final.
    assert_status_failure(&get(&s.url("/bytes?status=101&header=Content-Length:0")), 101, "");
}

// ---------------------------------------------------------------------------------------------
// Protocol errors.

#[test]
fn http09_is_a_protocol_failure() {
    let s = TargetServer::start();
    let url = s.url("/http09");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: malformed HTTP response \"hello\""
        ),
    );
}

#[test]
fn huge_headers_are_a_protocol_failure() {
    let s = TargetServer::start();
    let url = s.url("/huge-headers/70000");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!("Get \"{url}\": net/http: server response headers exceeded 65536 bytes; aborted"),
    );
    // Under the limit is fine.
    assert_success(&get(&s.url("/huge-headers/60000")), "ok");
}

#[test]
fn bad_chunks_are_protocol_failures() {
    let s = TargetServer::start();
    let url = s.url("/bad-chunk");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": malformed chunked encoding: invalid chunk size: expected a hex digit, found 'z'"
        ),
    );
    let url = s.url("/overflow-chunk");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": malformed chunked encoding: invalid chunk size: larger than 64 bits"
        ),
    );
}

#[test]
fn invalid_framing_headers_are_protocol_failures() {
    let s = TargetServer::start();
    let url = s.url("/bytes?header=Content-Length:5&header=Content-Length:6&body=hello");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: http: message cannot contain multiple Content-Length headers; got [\"5\" \"6\"]"
        ),
    );
    let url = s.url("/bytes?header=Content-Length:x");
    assert_failure(
        &get(&url),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: bad Content-Length \"x\""
        ),
    );
    // A custom status and reason phrase.
    let o = get(&s.url("/bytes?status=299&reason=Fine&body=yes"));
    assert_success(&o, "yes");
    assert_eq!(o.http_status, Some(299));
}

// ---------------------------------------------------------------------------------------------
// Connection errors.

#[test]
fn closed_port_is_refused() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/");
    let o = get(&url);
    assert_failure(
        &o,
        Reason::Refused,
        &format!("Get \"{url}\": dial tcp 127.0.0.1:{port}: connect: connection refused"),
    );
    assert!(o.message.contains("connection refused"));
}

/// A reset before any response byte is reason Reset, in Go's `net.OpError` wording.
#[test]
fn reset_is_reason_reset() {
    let s = TargetServer::start();
    let url = s.url("/reset");
    let o = get(&url);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Reset), "{o:?}");
    let prefix = format!("Get \"{url}\": read tcp 127.0.0.1:");
    let suffix = format!("->127.0.0.1:{}: read: connection reset by peer", s.port());
    assert!(o.message.starts_with(&prefix) && o.message.ends_with(&suffix), "{}", o.message);
    assert!(o.output.is_empty());
}

#[test]
fn reset_while_reading_the_body_is_reason_reset() {
    let s = TargetServer::start();
    let url = s.url("/reset-after/100");
    let o = get(&url);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Reset), "{o:?}");
    assert!(o.message.starts_with(&format!("Get \"{url}\": read tcp ")), "{}", o.message);
    assert!(o.message.ends_with(": read: connection reset by peer"), "{}", o.message);
    assert_eq!(o.output, vec![b'a'; 100]);
    assert_eq!(o.http_status, Some(200));
}

/// Without the `tls` feature (`cargo test -p prober-http --no-default-features`); with it,
/// `tests/https.rs` covers https.
#[cfg(not(feature = "tls"))]
#[test]
fn https_is_unsupported() {
    let o = get("https://127.0.0.1:1/healthz");
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Unsupported));
    assert_eq!(o.message, "TLS not built in: cannot probe https://127.0.0.1:1/healthz");
    // Also as a (same host) redirect target.
    let s = TargetServer::start();
    let o = get(&redirect_to(&s, "https://127.0.0.1:1/x", 302));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Unsupported));
    assert_eq!(o.message, "TLS not built in: cannot probe https://127.0.0.1:1/x");
}

#[test]
fn unresolvable_name_is_reason_dns() {
    let url = "http://no-such-host.invalid/";
    let o = run(&spec(url).with_timeout(Duration::from_secs(20)).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Dns), "{o:?}");
    assert!(
        o.message.starts_with(
            "Get \"http://no-such-host.invalid/\": dial tcp: lookup no-such-host.invalid: "
        ),
        "{}",
        o.message
    );
}

#[test]
fn ipv6_loopback() {
    let s = match TargetServer::start_v6() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipping ipv6_loopback: cannot listen on [::1]: {e}");
            return;
        }
    };
    assert!(s.url("/").starts_with("http://[::1]:"));
    assert_success(&get(&s.url("/status/200?body=v6")), "v6");
    assert_success(&get(&s.url("/echo/host")), &format!("[::1]:{}", s.port()));
    assert_success(&get(&s.url("/redirect?loc=/status/200")), "status 200");
}

// ---------------------------------------------------------------------------------------------
// Connection handling, timings, cancel.

#[test]
fn connections_are_closed_with_rst_by_default_fin_on_request() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/")), "ok");
    assert!(s.wait_for_connections_closed(1, Duration::from_secs(10)));
    assert_eq!(s.reset_connections(), 1);

    let mut sp = spec(&s.url("/"));
    sp.set_close_policy(ClosePolicy::Fin);
    assert_success(&run(&sp), "ok");
    assert!(s.wait_for_connections_closed(2, Duration::from_secs(10)));
    assert_eq!(s.reset_connections(), 1, "FIN close counted as a reset");
}

#[test]
fn every_hop_connection_is_closed() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/redirect-chain/3")), "chain end");
    assert!(s.wait_for_connections_closed(4, Duration::from_secs(10)));
    assert_eq!(s.connections(), 4);
}

#[test]
fn timings_are_filled_in() {
    let s = TargetServer::start();
    let o = get(&s.url("/"));
    let t = o.timings;
    assert_eq!(t.resolve, None, "IP literal");
    assert_eq!(t.tls, None);
    let (c, f) = (t.connect.unwrap(), t.first_byte.unwrap());
    assert!(c <= f && f <= t.total, "{t:?}");
    let o = get(&format!("http://localhost:{}/", s.port()));
    assert_success(&o, "ok");
    assert!(o.timings.resolve.is_some());
    assert!(o.timings.resolve.unwrap() <= o.timings.connect.unwrap());
    let o = get(&format!("http://127.0.0.1:{}/", closed_port()));
    assert_eq!((o.timings.connect, o.timings.first_byte), (None, None));
}

#[test]
fn output_limit_is_configurable() {
    let s = TargetServer::start();
    let mut sp = spec(&s.url("/body/100"));
    sp.set_output_limit(10).unwrap();
    let o = run(&sp);
    assert_eq!(out(&o), "a".repeat(10));
    assert!(o.truncated);
}

#[test]
fn cancel_closes_the_connection() {
    use mio::{Events, Poll, Waker};
    use prober_io::{Ctx, Machine, Mailbox, Ready, Step};
    use std::sync::Arc;

    let s = TargetServer::start();
    let sp = spec(&s.url("/never-answer"));
    let ProbeKind::Http(h) = &sp.kind else { unreachable!() };
    let mut m = HttpProbe::new(h, sp.timeout, sp.output_limit);
    let mut poll = Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), mio::Token(99)).unwrap());
    let mailbox = Mailbox::new(waker);
    let mut events = Events::with_capacity(8);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    assert!(matches!(m.start(&mut cx), Step::Pending));
    assert!(m.wake_at().is_some());
    // Drive until the request is on the server.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.requests() == 0 && Instant::now() < deadline {
        poll.poll(&mut events, Some(Duration::from_millis(50))).unwrap();
        for ev in events.iter() {
            let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
            assert!(matches!(m.ready(&mut cx, ev.token().0, Ready::from_event(ev)), Step::Pending));
        }
    }
    assert_eq!(s.requests(), 1);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    m.cancel(&mut cx);
    assert!(
        s.wait_for_connections_closed(1, Duration::from_secs(10)),
        "cancel left the socket open"
    );
    assert_eq!(s.reset_connections(), 1);
}
