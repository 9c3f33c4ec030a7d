//! What the HTTP suites share: specs and runs against the testkit's server, and the
//! assertions on outcomes.
#![allow(dead_code, unused_imports)]

pub use std::time::{Duration, Instant};

pub use prober_core::{
    ClosePolicy, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy, Url,
};
pub use prober_http::HttpProbe;
pub use prober_io::run_to_completion;
pub use prober_testkit::{TargetServer, closed_port};

pub const TIMEOUT: Duration = Duration::from_secs(5);
pub const LIMIT: usize = 10240;

pub fn spec(url: &str) -> ProbeSpec {
    ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap()
}

pub fn spec_with(url: &str, headers: &[(&str, &str)]) -> ProbeSpec {
    let mut s = spec(url);
    for (n, v) in headers {
        s.add_header(n, v).unwrap();
    }
    s
}

pub fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    // A "did not hang" bound, never a pass condition on speed.
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    o
}

pub fn get(url: &str) -> Outcome {
    run(&spec(url))
}

pub fn get_with(url: &str, headers: &[(&str, &str)]) -> Outcome {
    run(&spec_with(url, headers))
}

pub fn out(o: &Outcome) -> String {
    String::from_utf8(o.output.clone()).expect("UTF-8 output")
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
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
pub fn assert_success(o: &Outcome, output: &str) {
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
pub fn assert_failure(o: &Outcome, reason: Reason, message: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, reason), "{o:?}");
    assert_eq!(o.message, message);
}

#[track_caller]
pub fn assert_status_failure(o: &Outcome, status: u16, body: &str) {
    assert_failure(o, Reason::Status, &format!("HTTP probe failed with statuscode: {status}"));
    assert_eq!(out(o), body, "the body stays in the output, never in the message");
    assert_eq!(o.http_status, Some(status));
}

#[track_caller]
pub fn assert_warning(o: &Outcome, body: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Warning, Reason::Redirect), "{o:?}");
    assert_eq!(o.message, format!("Probe terminated redirects, Response body: {body}"));
    assert_eq!(out(o), body);
}

pub fn echo_headers(server: &TargetServer, extra: &[(&str, &str)]) -> String {
    let o = get_with(&server.url("/echo/headers"), extra);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    out(&o)
}

pub fn redirect_to(server: &TargetServer, loc: &str, code: u16) -> String {
    server.url(&format!("/redirect?loc={}&code={code}", enc(loc)))
}
