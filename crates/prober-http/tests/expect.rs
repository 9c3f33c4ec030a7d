//! Expected statuses and body expressions against the testkit's server: the extensions that
//! replace the kubelet's 2xx/3xx rule (Envoy, HAProxy, blackbox_exporter).

use prober_core::{Outcome, Pattern, ProbeKind, ProbeResult, ProbeSpec, Reason, StatusSet};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::TargetServer;

fn probe(url: &str, statuses: Option<&str>, body: Option<&str>) -> Outcome {
    let mut spec = ProbeSpec::http(url).unwrap();
    if let Some(s) = statuses {
        spec.set_expect_status(StatusSet::parse(s).unwrap()).unwrap();
    }
    if let Some(b) = body {
        spec.set_expect_body(Pattern::new(b).unwrap()).unwrap();
    }
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
    run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit))
}

#[test]
fn a_status_in_the_set_is_success_any_other_failure() {
    let server = TargetServer::start();
    let o = probe(&server.url("/status/418"), Some("200-299,418"), None);
    assert_eq!(
        (o.result, o.reason, o.http_status),
        (ProbeResult::Success, Reason::None, Some(418))
    );
    assert_eq!(o.message, "");
    // The kubelet's rule without a set: 418 fails.
    assert_eq!(probe(&server.url("/status/418"), None, None).result, ProbeResult::Failure);

    let o = probe(&server.url("/ok"), Some("204,418"), None);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
    assert_eq!(o.message, "HTTP probe failed with statuscode: 200");

    // A 3xx that is not followed is the final status: in the set it is Success, not Warning.
    let o = probe(&server.url("/status/302"), Some("302"), None);
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(302)));
    let o = probe(&server.url("/status/302"), Some("200"), None);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
}

#[test]
fn redirects_are_followed_before_the_set_decides() {
    let server = TargetServer::start();
    // A 302 to /ok (200 "ok"), followed under the default same-host policy.
    let o = probe(&server.url("/redirect?loc=/ok"), Some("200"), None);
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(200)));
    let o = probe(&server.url("/redirect?loc=/ok"), Some("302"), None);
    assert_eq!(
        (o.result, o.reason, o.http_status),
        (ProbeResult::Failure, Reason::Status, Some(200))
    );
}

#[test]
fn body_must_match() {
    let server = TargetServer::start();
    let o = probe(&server.url("/health"), None, Some("^ok$"));
    assert_eq!(
        (o.result, o.reason, o.output.as_slice()),
        (ProbeResult::Success, Reason::None, &b"ok"[..])
    );

    server.set_healthy(false);
    // 503 fails on its status first, as the kubelet's rule says.
    let o = probe(&server.url("/health"), None, Some("^ok$"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
    // With 503 accepted, the body decides.
    let o = probe(&server.url("/health"), Some("200,503"), Some("^ok$"));
    assert_eq!(
        (o.result, o.reason, o.http_status),
        (ProbeResult::Failure, Reason::Body, Some(503))
    );
    assert_eq!(
        o.message,
        "HTTP probe failed: body did not match \"^ok$\" (status 503, 9 bytes kept)"
    );
    assert_eq!(o.output, b"unhealthy");
    let o = probe(&server.url("/health"), Some("503"), Some("(?i)UNHEALTHY"));
    assert_eq!(o.result, ProbeResult::Success);
}

#[test]
fn body_match_sees_only_the_kept_body() {
    let server = TargetServer::start();
    // /body/N sends N bytes of 'a'; with an output limit of 100, 'a{101}' can never match.
    let run = |re: &str| {
        let mut spec = ProbeSpec::http(&server.url("/body/2000")).unwrap();
        spec.set_output_limit(100).unwrap();
        spec.set_expect_body(Pattern::new(re).unwrap()).unwrap();
        let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
        run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit))
    };
    let o = run("a{100}");
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let o = run("a{101}");
    assert_eq!((o.result, o.reason, o.truncated), (ProbeResult::Failure, Reason::Body, true));
    assert!(o.message.contains("100 bytes kept"), "{}", o.message);
}
