//! HTTP probes with OAuth 2 client credentials against a real authorization server on loopback
//! (`prober_testkit::oauth2::TokenServer`): the token asked for as golang.org/x/oauth2 asks
//! (form, scopes, endpoint parameters, Basic credentials, then the form after a refusal) and
//! sent as `Authorization: Bearer`; a refused, absent, silent or hostile token endpoint fails
//! the probe saying so, and no credential is ever printed.

mod common;

use common::*;
use prober_core::{OAuth2, Secret};
use prober_http::OAuth2Probe;
use prober_http::oauth2::MAX_TOKEN_RESPONSE;
use prober_testkit::oauth2::{Accept, TokenServer};

const ID: &str = "probe client";
const SECRET: &str = "s3cr:t/&+";
const TOKEN: &str = "tok-3141";

fn with_oauth2(url: &str, token_url: &str, secret: &str) -> ProbeSpec {
    let mut s = spec(url);
    let mut o = OAuth2::new(token_url, ID, Secret::new(secret)).unwrap();
    o.scopes = vec!["read".into(), "write".into()];
    o.endpoint_params = vec![("audience".into(), "probes & more".into())];
    s.set_oauth2(Some(o)).unwrap();
    s
}

fn run_oauth2(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not HTTP") };
    let plan = std::sync::Arc::new(prober_http::HttpPlan::new(h.clone()));
    let mut m = OAuth2Probe::new(plan, spec.timeout, spec.output_limit).expect("credentials");
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    // A "did not hang" bound, never a pass condition on speed.
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    assert_no_credential(&o);
    o
}

fn assert_no_credential(o: &Outcome) {
    let shown = format!("{o:?}");
    for secret in ["s3cr", TOKEN] {
        assert!(!shown.contains(secret), "{secret} printed: {shown}");
    }
}

#[test]
fn token_granted_then_sent_as_bearer() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let o = run_oauth2(&with_oauth2(&server.url("/protected"), &server.url("/token"), SECRET));
    assert_success(&o, "ok");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let t = &reqs[0];
    assert_eq!((t.method.as_str(), t.path.as_str()), ("POST", "/token"));
    assert_eq!(t.header("Content-Type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(t.form("grant_type").as_deref(), Some("client_credentials"));
    assert_eq!(t.form("scope").as_deref(), Some("read write"));
    assert_eq!(t.form("audience").as_deref(), Some("probes & more"));
    assert_eq!(t.form("client_secret"), None, "the secret went in the header only");
    assert!(t.header("Authorization").is_some_and(|a| a.starts_with("Basic ")));
    assert_eq!(reqs[1].header("Authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    // The spec prints no credential either.
    let shown = format!("{:?}", with_oauth2("http://h/", "http://h/t", SECRET));
    assert!(!shown.contains("s3cr") && shown.contains("<secret>"), "{shown}");
}

/// golang.org/x/oauth2's "auth style" probe: a server that refuses Basic credentials gets
/// them in the form on a second request.
#[test]
fn credentials_go_in_the_form_when_the_header_is_refused() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::FormOnly);
    let o = run_oauth2(&with_oauth2(&server.url("/protected"), &server.url("/token"), SECRET));
    assert_success(&o, "ok");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:?}");
    assert!(reqs[0].header("Authorization").is_some());
    assert_eq!(reqs[1].header("Authorization"), None);
    assert_eq!(reqs[1].form("client_id").as_deref(), Some(ID));
    assert_eq!(reqs[1].form("client_secret").as_deref(), Some(SECRET));
}

#[test]
fn wrong_secret_fails_the_probe_naming_oauth2() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let url = server.url("/protected");
    let o = run_oauth2(&with_oauth2(&url, &server.url("/token"), "wrong"));
    assert_failure(
        &o,
        Reason::Status,
        &format!("Get \"{url}\": oauth2: cannot fetch token: status 401, error \"invalid_client\""),
    );
    assert_eq!(o.http_status, None, "the protected URL was never asked");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "header, then form: {reqs:?}");
    assert!(reqs.iter().all(|r| r.path == "/token"));
}

#[test]
fn token_endpoint_down_fails_the_probe() {
    let target = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let port = closed_port();
    let token_url = format!("http://127.0.0.1:{port}/token");
    let o = run_oauth2(&with_oauth2(&target.url("/protected"), &token_url, SECRET));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert!(
        o.message.contains(&format!("oauth2: cannot fetch token: Post \"{token_url}\": dial tcp")),
        "{}",
        o.message
    );
    assert!(target.requests().is_empty());
}

/// A token endpoint that never answers costs the run its one deadline, no more.
#[test]
fn silent_token_endpoint_times_out_within_the_deadline() {
    let hostile = TargetServer::start();
    let target = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let mut s = with_oauth2(&target.url("/protected"), &hostile.url("/never-answer"), SECRET);
    s.set_timeout(Duration::from_millis(300)).unwrap();
    let o = run_oauth2(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(o.message.contains("oauth2: cannot fetch token: Post"), "{}", o.message);
    assert!(target.requests().is_empty());
}

/// A token answer longer than the bound is refused, not kept.
#[test]
fn oversized_token_answer_is_refused() {
    let hostile = TargetServer::start();
    let target = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let token_url = hostile.url(&format!("/body/{}", MAX_TOKEN_RESPONSE * 4));
    let o = run_oauth2(&with_oauth2(&target.url("/protected"), &token_url, SECRET));
    assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
    assert!(o.message.contains("longer than 65536 bytes"), "{}", o.message);
    assert!(target.requests().is_empty());
}
