//! A web config's `rate_limit`, as the exporter-toolkit applies it: one token bucket over every
//! request, before authentication, an empty bucket answered `429 Too Many Requests` without the
//! configured headers. Real loopback sockets; the interval is an hour, so no token comes back
//! while a test runs (the refill itself is `rate_limit::tests::bucket`'s).

mod common;

use std::io::{Read, Write};

use common::{SCRAPE, connect, get, read_answer, start, temp_dir};
use prober_httpd::{Limits, Running, WebConfig};

fn server(name: &str, text: &str) -> Running {
    let dir = temp_dir(name);
    std::fs::write(dir.join("web.yml"), text).unwrap();
    start(Limits::default(), Some(WebConfig::load(&dir.join("web.yml")).unwrap()))
}

#[test]
fn an_empty_bucket_is_answered_429_on_every_connection() {
    let server = server(
        "rate-429",
        "rate_limit:\n  interval: 1h\n  burst: 3\nhttp_server_config:\n  headers:\n    \
         X-Frame-Options: deny\n",
    );
    let mut kept = connect(server.local_addr());
    for i in 0..3 {
        kept.write_all(SCRAPE.as_bytes()).unwrap();
        let a = read_answer(&mut kept);
        assert_eq!(a.status, 200, "request {i} of the burst: {a:?}");
        assert!(a.head.contains("\r\nX-Frame-Options: deny\r\n"), "{a:?}");
    }
    kept.write_all(SCRAPE.as_bytes()).unwrap();
    let a = read_answer(&mut kept);
    assert!(a.head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{a:?}");
    assert_eq!(a.body, "Too Many Requests\n");
    // What blackbox_exporter v0.28.0 sends (Go's http.Error): text, nosniff; the toolkit sets
    // the configured headers after its limiter, so not on a 429.
    assert!(a.head.contains("\r\nContent-Type: text/plain; charset=utf-8\r\n"), "{a:?}");
    assert!(a.head.contains("\r\nX-Content-Type-Options: nosniff\r\n"), "{a:?}");
    assert!(!a.head.contains("X-Frame-Options"), "{a:?}");
    // The connection is kept, as Go's http.Error keeps it; the bucket is the server's, not the
    // connection's: a new connection and another path are refused too.
    kept.write_all(SCRAPE.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut kept).status, 429);
    assert_eq!(get(server.local_addr(), "GET /nope HTTP/1.1\r\n\r\n").status, 429);
    let mut head = connect(server.local_addr());
    head.write_all(b"HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    head.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\n"), "no body for HEAD: {answer}");
}

/// Requests without credentials take tokens too (the toolkit's limiter runs before its
/// authentication): the 429 comes before the right password is looked at.
#[test]
fn the_limit_applies_before_authentication() {
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let server = server(
        "rate-auth",
        &format!(
            "rate_limit: {{interval: 1h, burst: 2}}\nbasic_auth_users:\n  prometheus: '{hash}'\n"
        ),
    );
    // prometheus:s3cret
    let right = "GET /metrics HTTP/1.1\r\nAuthorization: Basic cHJvbWV0aGV1czpzM2NyZXQ=\r\n\r\n";
    assert_eq!(get(server.local_addr(), right).status, 200);
    let a = get(server.local_addr(), SCRAPE);
    assert_eq!(a.status, 401, "{a:?}");
    let a = get(server.local_addr(), right);
    assert!(a.head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{a:?}");
    assert!(!a.head.contains("WWW-Authenticate"), "{a:?}");
}

/// A request the server refuses before any handler (a head it cannot parse) is not one the
/// toolkit's limiter sees: it takes no token.
#[test]
fn unparsable_requests_take_no_token() {
    let server = server("rate-bad", "rate_limit: {interval: 1h, burst: 1}\n");
    for _ in 0..3 {
        assert_eq!(get(server.local_addr(), "GET /metrics\r\n\r\n").status, 400);
    }
    assert_eq!(get(server.local_addr(), SCRAPE).status, 200);
    assert_eq!(get(server.local_addr(), SCRAPE).status, 429);
}

#[test]
fn bad_values_name_the_field() {
    let dir = temp_dir("rate-bad-values");
    let path = dir.join("web.yml");
    for (text, want) in [
        ("rate_limit: {interval: 1s}\n", "rate_limit.burst: missing or 0"),
        ("rate_limit: {interval: 1s, burst: -2}\n", "rate_limit.burst: -2 is negative"),
        ("rate_limit: {interval: fast, burst: 2}\n", "rate_limit.interval: 'fast' is not"),
        ("rate_limit: {burst: 2}\n", "rate_limit.interval: missing"),
    ] {
        std::fs::write(&path, text).unwrap();
        let e = WebConfig::load(&path).unwrap_err();
        assert!(e.starts_with(&format!("{}: {want}", path.display())), "{text}: {e}");
    }
}
