//! `http.oauth2` in `prober serve` against a real authorization server and the resource it
//! protects, on loopback (`prober_testkit::oauth2::TokenServer`): a granted token opens the
//! resource; a wrong secret, a token endpoint that is down, fail the probe saying so; scopes
//! and endpoint parameters are sent; the secret may come from `client_secret_file`; and neither
//! the secret nor the token shows on the debug page or `/config`.

use std::path::Path;

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::oauth2::{Accept, TokenServer};

const ID: &str = "probe-client";
const SECRET: &str = "s3cret-value";
const TOKEN: &str = "tok-27182818";

fn exporter(token_url: &str, secret_yaml: &str, base: &Path) -> Exporter {
    let file = format!(
        "modules:
  oauth:
    prober: http
    timeout: 5s
    http:
      preferred_ip_protocol: ip4
      oauth2:
        client_id: {ID}
        {secret_yaml}
        token_url: {token_url}
        scopes: [probe.read, metrics]
        endpoint_params:
          audience: blackbox
"
    );
    Exporter::start(Modules::parse(&file, base).unwrap()).unwrap()
}

fn probe(e: &Exporter, target: &str, debug: bool) -> Response {
    let query = format!("module=oauth&target={target}{}", if debug { "&debug=true" } else { "" });
    e.handle(&Request { path: "/probe", query: &query, headers: &[] })
}

fn sample<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    body.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
}

#[test]
fn granted_token_opens_the_protected_resource() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let e = exporter(&server.url("/token"), &format!("client_secret: {SECRET}"), Path::new("."));
    let r = probe(&e, &server.url("/protected"), false);
    assert_eq!(r.status, 200);
    assert_eq!(sample(&r.body, "probe_success"), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_status_code"), Some("200"), "{}", r.body);
    let reqs = server.requests();
    let token = &reqs[0];
    assert_eq!((token.method.as_str(), token.path.as_str()), ("POST", "/token"));
    assert_eq!(token.form("scope").as_deref(), Some("probe.read metrics"));
    assert_eq!(token.form("audience").as_deref(), Some("blackbox"));
    assert_eq!(token.form("grant_type").as_deref(), Some("client_credentials"));
    // The token request carries the probe's User-Agent, as prometheus/common sends it.
    assert_eq!(token.header("User-Agent"), Some("Blackbox-Exporter/0.28.0"));
    // A token per probe, as blackbox_exporter's client per probe asks for one.
    let r = probe(&e, &server.url("/protected"), false);
    assert_eq!(sample(&r.body, "probe_success"), Some("1"), "{}", r.body);
    let tokens = server.requests().iter().filter(|r| r.path == "/token").count();
    assert_eq!(tokens, 2);
}

#[test]
fn wrong_secret_fails_the_probe_and_says_why() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let e = exporter(&server.url("/token"), "client_secret: not-it", Path::new("."));
    let r = probe(&e, &server.url("/protected"), true);
    assert_eq!(r.status, 200);
    assert!(r.body.contains("probe_success 0"), "{}", r.body);
    assert!(r.body.contains("probe_http_status_code 0"), "{}", r.body);
    assert!(r.body.contains("oauth2: cannot fetch token: status 401, error"), "{}", r.body);
    assert!(server.requests().iter().all(|r| r.path == "/token"));
}

#[test]
fn token_endpoint_down_fails_the_probe() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let e = exporter(&format!("http://{closed}/token"), "client_secret: x", Path::new("."));
    let r = probe(&e, &server.url("/protected"), true);
    assert!(r.body.contains("probe_success 0"), "{}", r.body);
    assert!(r.body.contains("oauth2: cannot fetch token: Post"), "{}", r.body);
    assert!(server.requests().is_empty());
}

/// `client_secret_file`, read relative to the module file's directory; the debug page and
/// `/config` show neither the secret nor the token.
#[test]
fn secret_from_a_file_and_never_shown() {
    let server = TokenServer::start(ID, SECRET, TOKEN, Accept::Either);
    let dir = std::env::temp_dir().join(format!("prober-blackbox-oauth2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    let e = exporter(&server.url("/token"), "client_secret_file: secret.txt", &dir);
    let r = probe(&e, &server.url("/protected"), true);
    assert!(r.body.contains("probe_success 1"), "{}", r.body);
    let inline = exporter(&server.url("/token"), &format!("client_secret: {SECRET}"), &dir);
    let shown = probe(&inline, &server.url("/protected"), true).body;
    assert!(shown.contains("client_secret: <secret>"), "{shown}");
    let config = inline.handle(&Request { path: "/config", query: "", headers: &[] }).body;
    for page in [&r.body, &shown, &config] {
        for secret in [SECRET, TOKEN] {
            assert!(!page.contains(secret), "{secret} shown:\n{page}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
