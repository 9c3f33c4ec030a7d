//! CEL expressions over a JSON body (`HttpSpec::expect_body_cel`, blackbox_exporter's
//! `fail_if_body_json_(not_)matches_cel`) against a real loopback server that answers each
//! connection with a given body, hostile ones included.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::Duration;

use prober_core::{
    BodyCel, CelMode, MAX_CEL_BODY_LEN, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason,
};
use prober_http::HttpProbe;
use prober_io::run_to_completion;

/// Answers one request with 200 and `body`, then closes.
fn serve_once(body: Vec<u8>) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "request head cut short");
            head.extend_from_slice(&buf[..n]);
        }
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        conn.write_all(answer.as_bytes()).unwrap();
        // The probe may stop reading early (a cut body); that is not the server's failure.
        let _ = conn.write_all(&body);
    });
    (url, server)
}

fn probe(body: &[u8], checks: &[(CelMode, &str)], timeout: Duration) -> Outcome {
    let (url, server) = serve_once(body.to_vec());
    let mut spec = ProbeSpec::http(&url).unwrap();
    spec.set_timeout(timeout).unwrap();
    spec.set_output_limit(2 * MAX_CEL_BODY_LEN).unwrap();
    for (mode, expr) in checks {
        spec.set_expect_body_cel(*mode, BodyCel::new(expr).unwrap()).unwrap();
    }
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
    let o = run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit));
    server.join().unwrap();
    o
}

const TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn the_two_modes_judge_the_json_body() {
    let body = br#"{"status": "up", "checks": [{"ok": true}, {"ok": true}]}"#;
    let up = "body.status == 'up' && body.checks.all(c, c.ok)";
    let o = probe(body, &[(CelMode::FailIfNotMatches, up)], TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{}", o.message);
    let o = probe(body, &[(CelMode::FailIfMatches, up)], TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body));
    assert!(o.message.contains("body matched CEL expression"), "{}", o.message);
    // Both at once: each judged.
    let down = "body.status == 'down'";
    let both = [(CelMode::FailIfMatches, down), (CelMode::FailIfNotMatches, up)];
    assert_eq!(probe(body, &both, TIMEOUT).result, ProbeResult::Success);
}

#[test]
fn a_body_that_is_not_json_or_a_result_that_is_not_boolean_fails() {
    for (body, expr) in [
        (&b"hello world"[..], "body.foo == 'baz'"),
        (b"", "body.foo == 'baz'"),
        (br#"{"foo": "baz"}"#, "body.foo"),
        (b"{}", "body.foo == 'baz'"),
    ] {
        for mode in [CelMode::FailIfMatches, CelMode::FailIfNotMatches] {
            let o = probe(body, &[(mode, expr)], TIMEOUT);
            assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{expr}");
        }
    }
}

#[test]
fn hostile_bodies_are_refused_within_their_bounds() {
    // Nesting far past serde_json's 128 levels: refused while parsing, not on the stack.
    let deep = [vec![b'['; 200_000], vec![b']'; 200_000]].concat();
    let o = probe(&deep, &[(CelMode::FailIfMatches, "true")], TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body));
    assert!(o.message.contains("JSON"), "{}", o.message);

    // An array just over the body bound: not parsed at all.
    let huge = format!("[{}0]", "0,".repeat(MAX_CEL_BODY_LEN / 2));
    let o = probe(huge.as_bytes(), &[(CelMode::FailIfMatches, "size(body) > 0")], TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body));
    assert!(o.message.contains("bytes"), "{}", o.message);

    // An array within the bound, and an expression cubic in it: stopped at the step bound
    // (without it, 10^12 steps). A million steps of a debug build on a loaded machine have
    // taken over 10 s: the deadline is far enough that the step bound is what stops it, and
    // a missing bound still fails (by the deadline, naming it).
    let wide = format!("[{}0]", "0,".repeat(9_999));
    let cubic = "body.all(x, body.all(y, body.all(z, z == 0)))";
    let o = probe(wide.as_bytes(), &[(CelMode::FailIfMatches, cubic)], 12 * TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body));
    assert!(o.message.contains("steps"), "{}", o.message);
}

#[test]
fn the_probe_timeout_stops_a_long_evaluation() {
    // Steps that each compare the whole 10,000-element body: the step bound alone would allow
    // 10^6 x 10^4 comparisons; the deadline stops it first.
    let wide = format!("[{}0]", "0,".repeat(9_999));
    let slow = "body.all(x, body.all(y, body == body))";
    let timeout = Duration::from_millis(500);
    let o = probe(wide.as_bytes(), &[(CelMode::FailIfMatches, slow)], timeout);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body));
    assert!(o.message.contains("timeout"), "{}", o.message);
}
