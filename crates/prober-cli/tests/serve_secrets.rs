//! `prober serve` never prints a module's credentials: a distinct secret is planted in every
//! secret-bearing field of the module file (and in the files they name; a proxy URL's password
//! and CONNECT headers too), the real server is
//! asked for `&debug=true` pages of probes that succeed, fail, are refused by an allow-list
//! or name a target with a password in it, and for `/logs` and `/config`, and everything it
//! answered and printed (standard output and error included) is searched for each secret.

mod common;

use base64::Engine as _;
use common::*;

/// A running `prober serve` whose standard output and error are kept whole.
struct Serve {
    child: Child,
    addr: SocketAddr,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    first: String,
}

impl Serve {
    fn start(config: &str) -> Serve {
        let mut child = prober()
            .args(["serve", "--listen", "127.0.0.1:0", "--config", config])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober serve");
        let stdout = reader(child.stdout.take().unwrap());
        // The first line says where it listens; the rest is read whole when it has ended.
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).expect("prober serve printed where it listens");
        let addr = first
            .trim_end()
            .strip_prefix("prober serve: listening on http://")
            .unwrap_or_else(|| panic!("unexpected stderr line {first:?}"))
            .parse()
            .unwrap();
        let stderr = reader(err);
        Serve { child, addr, stdout, stderr, first }
    }

    /// Stops it; what it printed on standard output and error.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let out = self.stdout.recv_timeout(HANG).unwrap();
        let err = self.stderr.recv_timeout(HANG).unwrap();
        format!("{}{out}{err}", self.first)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` on `addr`: the whole answer, head and body, as text.
fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to prober serve");
    s.set_read_timeout(Some(HANG)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    // The server closes the connection after its answer.
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    answer
}

/// One distinct secret per field, each in a module (or a file) of its own kind.
const BASIC_PASSWORD: &str = "basic-password-Zq81xv";
const PASSWORD_FILE: &str = "password-file-Kk27ty";
const BEARER_TOKEN: &str = "bearer-token-Hh63pw";
const BEARER_FILE: &str = "bearer-file-Ww49rn";
const CREDENTIALS: &str = "credentials-Pp15mz";
const CREDENTIALS_FILE: &str = "credentials-file-Bb70qe";
const API_KEY: &str = "api-key-Ll38cd";
const COOKIE: &str = "session-cookie-Tt92gh";
const PROXY_AUTH: &str = "proxy-authorization-Mm56ja";
const URL_PASSWORD: &str = "url-password-Ee24fs";
const PROXY_PASSWORD: &str = "proxy-password-Gg47bd";
const CONNECT_TOKEN: &str = "connect-token-Jj58ck";
/// Inside client certificate and key files that are neither: their paths are printed, never
/// what they hold.
const KEY_CONTENT: &str = "client-key-content-Rr83uv";

#[test]
fn no_secret_of_a_module_or_a_target_is_printed() {
    let dir = TempDir::new("secrets");
    std::fs::write(dir.0.join("password"), format!("{PASSWORD_FILE}\n")).unwrap();
    std::fs::write(dir.0.join("token"), BEARER_FILE).unwrap();
    std::fs::write(dir.0.join("credentials"), CREDENTIALS_FILE).unwrap();
    let key = format!("-----BEGIN PRIVATE KEY-----\n{KEY_CONTENT}\n-----END PRIVATE KEY-----\n");
    std::fs::write(dir.0.join("client.key"), key).unwrap();
    std::fs::write(dir.0.join("client.crt"), KEY_CONTENT).unwrap();
    let proxy_port = prober_testkit::closed_port();
    let modules = format!(
        "modules:
  basic:
    prober: http
    timeout: 30s
    http:
      basic_auth: {{username: scraper, password: {BASIC_PASSWORD}}}
      headers:
        X-Api-Key: {API_KEY}
        Cookie: {COOKIE}
        Proxy-Authorization: {PROXY_AUTH}
  basic_file:
    prober: http
    timeout: 30s
    http: {{basic_auth: {{username: scraper, password_file: password}}}}
  bearer:
    prober: http
    timeout: 30s
    http: {{bearer_token: {BEARER_TOKEN}, valid_status_codes: [201]}}
  bearer_file:
    prober: http
    timeout: 30s
    http: {{bearer_token_file: token}}
  authorization:
    prober: http
    timeout: 30s
    http: {{authorization: {{type: Token, credentials: {CREDENTIALS}}}}}
  authorization_file:
    prober: http
    timeout: 30s
    http: {{authorization: {{credentials_file: credentials}}}}
  client_key:
    prober: http
    timeout: 30s
    http: {{tls_config: {{cert_file: client.crt, key_file: client.key, insecure_skip_verify: true}}}}
  proxied:
    prober: http
    timeout: 30s
    http:
      proxy_url: http://proxyuser:{PROXY_PASSWORD}@127.0.0.1:{proxy_port}
      proxy_connect_header: {{X-Proxy-Token: [{CONNECT_TOKEN}]}}
  refused:
    prober: http
    timeout: 30s
    http: {{bearer_token: {BEARER_TOKEN}}}
    allow: {{networks: [192.0.2.0/24]}}
"
    );
    let config = dir.0.join("blackbox.yml");
    std::fs::write(&config, modules).unwrap();
    let serve = Serve::start(config.to_str().unwrap());
    let target = TargetServer::start();
    // A port nothing listens on: a probe that fails to connect.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut answers = Vec::new();
    let names = [
        "basic",
        "basic_file",
        "bearer",
        "bearer_file",
        "authorization",
        "authorization_file",
        "client_key",
        "proxied",
        "refused",
    ];
    for module in names {
        let scheme = if module == "client_key" { "https" } else { "http" };
        for target in [format!("127.0.0.1:{}/health", target.port()), closed.to_string()] {
            for debug in ["&debug=true", ""] {
                let path = format!("/probe?module={module}&target={scheme}://{target}{debug}");
                answers.push(get(serve.addr, &path));
            }
        }
    }
    // The probes ran: the secrets were sent (the debug page shows the success).
    assert!(answers[0].contains("\nprobe_success 1\n"), "{}", answers[0]);
    assert!(answers[0].contains("Module configuration:"), "{}", answers[0]);
    // A target with a password in it: a failed probe (as blackbox_exporter answers a target it
    // cannot probe), the debug page quoting the target.
    for debug in ["&debug=true", ""] {
        let path = format!(
            "/probe?module=basic&target=http://scraper:{URL_PASSWORD}@127.0.0.1:{}/health{debug}",
            target.port()
        );
        let answer = get(serve.addr, &path);
        assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        assert!(answer.contains("probe_success 0"), "{answer}");
        if !debug.is_empty() {
            assert!(answer.contains("scraper:"), "the target is quoted: {answer}");
        }
        answers.push(answer);
    }
    // `/logs` keeps those debug pages: every module's that probed (a target refused by an
    // allow-list is not a probe), as they were.
    for module in names.into_iter().filter(|m| *m != "refused") {
        let scheme = if module == "client_key" { "https" } else { "http" };
        let path = format!("/logs?module={module}&target={scheme}://{closed}");
        let logs = get(serve.addr, &path);
        assert!(logs.starts_with("HTTP/1.1 200 "), "{logs}");
        assert!(logs.contains("Module configuration:"), "{logs}");
        answers.push(logs);
    }
    // `/config` shows every module, each credential as `<secret>`.
    let config = get(serve.addr, "/config");
    assert!(config.starts_with("HTTP/1.1 200 "), "{config}");
    for module in names {
        assert!(config.contains(&format!("\n  {module}:\n")), "{module} missing: {config}");
    }
    assert!(config.contains("password: <secret>"), "{config}");
    assert!(config.contains("bearer_token: <secret>"), "{config}");
    answers.push(config);
    let printed = serve.stop();
    let everything = format!("{}\n{printed}", answers.join("\n"));
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let secrets = [
        BASIC_PASSWORD.to_string(),
        b64(&format!("scraper:{BASIC_PASSWORD}")),
        PASSWORD_FILE.to_string(),
        b64(&format!("scraper:{PASSWORD_FILE}")),
        BEARER_TOKEN.to_string(),
        BEARER_FILE.to_string(),
        CREDENTIALS.to_string(),
        CREDENTIALS_FILE.to_string(),
        API_KEY.to_string(),
        COOKIE.to_string(),
        PROXY_AUTH.to_string(),
        URL_PASSWORD.to_string(),
        KEY_CONTENT.to_string(),
        PROXY_PASSWORD.to_string(),
        b64(&format!("proxyuser:{PROXY_PASSWORD}")),
        CONNECT_TOKEN.to_string(),
    ];
    let shown: Vec<&String> = secrets.iter().filter(|s| everything.contains(s.as_str())).collect();
    assert!(shown.is_empty(), "secrets printed: {shown:?}\n\n{everything}");
    assert!(everything.contains("<secret>"), "{everything}");
    // The client certificate file was read and refused, by its name only.
    assert!(everything.contains("client.crt\\\": no PEM certificate in it"), "{everything}");
}

/// `POST path` on `addr`: the whole answer.
fn post(addr: SocketAddr, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to prober serve");
    s.set_read_timeout(Some(HANG)).unwrap();
    write!(s, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    answer
}

/// A password in a target without a scheme (an http module adds `http://`), or in a tcp
/// module's target, where the reason quotes the host; and a credential written where the
/// module file wants another type, which the file reader's error would quote: at start (on
/// standard error) and in the answer to `POST /-/reload`, which anyone may send.
#[test]
fn no_secret_of_a_bare_target_or_a_refused_file_is_printed() {
    const TARGET_PASSWORD: &str = "bare-target-password-Tt52ks";
    const WRONG_PLACE: &str = "wrong-place-password-Mm09da";
    let target = TargetServer::start();
    let dir = TempDir::new("secrets-bare");
    let good = "modules:
  web: {prober: http, timeout: 30s}
  port: {prober: tcp, timeout: 30s}
";
    let bad = format!(
        "modules:
  web:
    prober: http
    http:
      basic_auth: \"admin:{WRONG_PLACE}\"
      headers: \"Authorization: Bearer {WRONG_PLACE}\"
"
    );
    let config = dir.0.join("blackbox.yml");
    // At start: refused, the error on standard error.
    std::fs::write(&config, &bad).unwrap();
    let refused = prober()
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .expect("run prober serve");
    assert!(!refused.status.success());
    let mut everything = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(everything.contains("basic_auth"), "the error names the field: {everything}");
    // Running: the same file refused by a reload, the answer going to whoever asked.
    std::fs::write(&config, good).unwrap();
    let serve = Serve::start(config.to_str().unwrap());
    std::fs::write(&config, &bad).unwrap();
    let reload = post(serve.addr, "/-/reload");
    assert!(reload.starts_with("HTTP/1.1 500 "), "{reload}");
    everything.push_str(&reload);
    let port = target.port();
    let targets = [
        ("web", format!("scraper:{TARGET_PASSWORD}@127.0.0.1:{port}/health")),
        ("port", format!("http://scraper:{TARGET_PASSWORD}@127.0.0.1:{port}")),
        ("port", format!("scraper:{TARGET_PASSWORD}@127.0.0.1:{port}")),
    ];
    for (module, target) in &targets {
        let answer = get(serve.addr, &format!("/probe?module={module}&target={target}&debug=true"));
        assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        assert!(answer.contains("scraper"), "the target is quoted: {answer}");
        everything.push_str(&answer);
        let logs = get(serve.addr, &format!("/logs?module={module}&target={target}"));
        assert!(logs.starts_with("HTTP/1.1 200 "), "{logs}");
        everything.push_str(&logs);
    }
    everything.push_str(&serve.stop());
    for secret in [TARGET_PASSWORD, WRONG_PLACE] {
        assert!(!everything.contains(secret), "{secret} printed:\n{everything}");
    }
}
