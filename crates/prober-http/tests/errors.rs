//! Protocol and connection errors, in Go's words, beyond the kubelet's cases (`http.rs`).

mod common;

use common::*;

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
