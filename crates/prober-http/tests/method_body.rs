//! Methods and bodies beyond the kubelet's GET, against `prober_testkit::TargetServer`: the
//! request as the server received it (`/echo/request`), redirects as Go's client redirects a
//! POST, and HEAD, which reads no body whatever the head announces.

use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::{TargetServer, closed_port};

const TIMEOUT: Duration = Duration::from_secs(5);

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    o
}

fn request(url: &str, method: &str, body: &[u8]) -> Outcome {
    let spec = ProbeSpec::http(url)
        .unwrap()
        .with_timeout(TIMEOUT)
        .unwrap()
        .with_method(method)
        .unwrap()
        .with_body(body.to_vec())
        .unwrap();
    run(&spec)
}

fn out(o: &Outcome) -> String {
    String::from_utf8_lossy(&o.output).into_owned()
}

#[test]
fn post_sends_its_body_with_its_length() {
    let server = TargetServer::start();
    let o = request(&server.url("/echo/request"), "POST", b"{\"ping\":1}");
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(out(&o), "POST 10\n{\"ping\":1}");
    // Any token is a method; the server sees it as written.
    let o = request(&server.url("/echo/request"), "PURGE", b"");
    assert_eq!(out(&o), "PURGE 0\n");
    let o = request(&server.url("/echo/request-line"), "OPTIONS", b"");
    assert_eq!(out(&o), "OPTIONS /echo/request-line HTTP/1.1");
}

#[test]
fn post_without_body_says_content_length_zero() {
    let server = TargetServer::start();
    let o = request(&server.url("/echo/headers"), "POST", b"");
    assert!(out(&o).contains("Content-Length: 0\n"), "{}", out(&o));
    let o = request(&server.url("/echo/headers"), "DELETE", b"");
    assert!(!out(&o).contains("Content-Length"), "{}", out(&o));
}

#[test]
fn head_does_not_wait_for_the_announced_body() {
    let server = TargetServer::start();
    // The server announces 100000 bytes and sends none (a HEAD response): reading a body
    // would wait for the deadline.
    let o = request(&server.url("/body/100000"), "HEAD", b"");
    assert_eq!(
        (o.result, o.reason, o.http_status),
        (ProbeResult::Success, Reason::None, Some(200))
    );
    assert!(o.output.is_empty(), "{o:?}");
    let o = request(&server.url("/status/503"), "HEAD", b"");
    assert_eq!(o.result, ProbeResult::Failure);
    assert_eq!(o.message, "HTTP probe failed with statuscode: 503");
}

#[test]
fn redirects_change_or_keep_the_method_as_go_does() {
    let server = TargetServer::start();
    for (code, want) in [
        (301, "GET 0\n"),
        (302, "GET 0\n"),
        (303, "GET 0\n"),
        (307, "POST 4\nbody"),
        (308, "POST 4\nbody"),
    ] {
        let url = server.url(&format!("/redirect?code={code}&loc=/echo/request"));
        let o = request(&url, "POST", b"body");
        assert_eq!(o.result, ProbeResult::Success, "{code}: {o:?}");
        assert_eq!(out(&o), want, "{code}");
    }
    // Once a 303 made it a GET, a later 307 keeps the GET.
    let inner = "/redirect?code=307%26loc=/echo/request";
    let url = server.url(&format!("/redirect?code=303&loc={inner}"));
    let o = request(&url, "PUT", b"x");
    assert_eq!(out(&o), "GET 0\n", "{o:?}");
    // HEAD stays HEAD over a 302.
    let url = server.url("/redirect?code=302&loc=/echo/request");
    let o = request(&url, "HEAD", b"");
    assert_eq!((o.result, o.output.len()), (ProbeResult::Success, 0), "{o:?}");
}

#[test]
fn messages_name_the_method_as_go_does() {
    let port = closed_port();
    let o = request(&format!("http://127.0.0.1:{port}/x"), "POST", b"a");
    assert_eq!(o.result, ProbeResult::Failure);
    assert!(
        o.message.starts_with(&format!("Post \"http://127.0.0.1:{port}/x\": dial tcp")),
        "{}",
        o.message
    );
    let server = TargetServer::start();
    // Go's client names the first request's method, also after a 302 made it a GET.
    let o = request(&server.url("/loop"), "DELETE", b"");
    assert_eq!(o.message, "Delete \"/loop\": stopped after 10 redirects");
    let mut spec =
        ProbeSpec::http(&server.url("/never-answer")).unwrap().with_method("PATCH").unwrap();
    spec.set_timeout(Duration::from_millis(300)).unwrap();
    let o = run(&spec);
    assert_eq!(o.reason, Reason::Timeout);
    assert_eq!(
        o.message,
        format!(
            "Patch \"{}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            server.url("/never-answer")
        )
    );
}
