//! `prober serve` reloads its module file as blackbox_exporter does: on SIGHUP, on
//! `POST /-/reload` and on a timer; a broken file keeps the modules in force and is reported
//! (a line on standard error, `blackbox_exporter_config_last_reload_successful` 0); a probe in
//! flight finishes with the module it started with; `/config` shows what is loaded.

mod common;

use std::net::TcpListener;
use std::path::Path;

use base64::Engine as _;
use common::*;

/// A running `prober serve` whose standard error arrives line by line; killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
    stderr: Receiver<String>,
}

impl Serve {
    fn start(config: &Path, more: &[&str]) -> Serve {
        let mut child = prober()
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober serve");
        let stderr = line_reader(child.stderr.take().unwrap());
        let line = stderr.recv_timeout(HANG).expect("prober serve printed where it listens");
        let addr = line
            .strip_prefix("prober serve: listening on http://")
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"))
            .parse()
            .unwrap();
        Serve { child, addr, stderr }
    }

    fn hup(&self) {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        signal::kill(pid, Signal::SIGHUP).unwrap();
    }

    /// The next line on standard error, which must start with `prefix`.
    fn said(&self, prefix: &str) -> String {
        let line = self.stderr.recv_timeout(HANG).expect("prober serve said something");
        assert!(line.starts_with(prefix), "{line:?} does not start with {prefix:?}");
        line
    }

    fn get(&self, path: &str) -> Response {
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        exchange(self.addr, req.as_bytes())
    }

    fn post_reload(&self) -> Response {
        let req =
            "POST /-/reload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        exchange(self.addr, req.as_bytes())
    }

    /// `/probe` of `target` with `module`.
    fn probe(&self, module: &str, target: &str) -> Response {
        self.get(&format!("/probe?module={module}&target={target}"))
    }

    /// Both names of the reload gauges agree; their value and the timestamp. Read from one
    /// `/metrics` answer: with auto-reload on, a reload may come between two of them.
    fn reload_gauges(&self) -> (f64, f64) {
        let r = self.get("/metrics");
        assert_eq!(r.status, 200, "{}", r.head);
        let gauge = |name: &str| -> f64 {
            let prefix = format!("{name} ");
            let line = r.body.lines().find(|l| l.starts_with(&prefix));
            let line = line.unwrap_or_else(|| panic!("no {name} on /metrics:\n{}", r.body));
            line[prefix.len()..].parse().unwrap_or_else(|_| panic!("{line}"))
        };
        let ok = gauge("blackbox_exporter_config_last_reload_successful");
        let at = gauge("blackbox_exporter_config_last_reload_success_timestamp_seconds");
        assert_eq!(gauge("prober_serve_config_last_reload_successful"), ok);
        assert_eq!(gauge("prober_serve_config_last_reload_success_timestamp_seconds"), at);
        (ok, at)
    }
}

/// Sends `request` to `addr` and reads the answer until the server closes the connection
/// (`Connection: close`). The sending side stays open: a client that shuts it down has gone,
/// to the server, and its `/probe` is cancelled.
fn exchange(addr: SocketAddr, request: &[u8]) -> Response {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to prober serve");
    s.set_read_timeout(Some(HANG)).unwrap();
    s.write_all(request).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read the answer");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head: {raw:?}"));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{head}"));
    Response { status, head: head.to_string(), body: body.to_string() }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const ONE: &str = "modules:\n  http_2xx:\n    prober: http\n    timeout: 30s\n";
const TWO: &str = "modules:\n  http_2xx:\n    prober: http\n    timeout: 30s\n  \
                   added:\n    prober: http\n    timeout: 30s\n";
const THREE: &str = "modules:\n  http_2xx:\n    prober: http\n    timeout: 30s\n  \
                     third:\n    prober: tcp\n    timeout: 30s\n";
const BROKEN: &str = "modules:\n  added:\n    prober: icmp\n    icmp:\n      ttl: 256\n";

/// Replaces the file whole (a reader never sees half of it).
fn replace(file: &Path, text: &str) {
    let tmp = file.with_extension("new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

fn success(r: &Response) -> bool {
    assert_eq!(r.status, 200, "{}\n{}", r.head, r.body);
    r.body.contains("\nprobe_success 1\n")
}

#[test]
fn sighup_loads_a_changed_file_and_keeps_the_modules_in_force_when_it_is_broken() {
    let config = write_file("yml", ONE);
    let serve = Serve::start(&config, &[]);
    let target = TargetServer::start();
    let url = format!("http://127.0.0.1:{}/health", target.port());
    let (ok, started) = serve.reload_gauges();
    assert_eq!(ok, 1.0, "the file read at start counts as a successful load");
    assert_eq!(serve.probe("added", &url).status, 400, "no such module yet");

    replace(&config, TWO);
    serve.hup();
    serve.said("prober serve: reloaded ");
    assert!(success(&serve.probe("added", &url)), "the new module answers");
    let (ok, first) = serve.reload_gauges();
    assert_eq!(ok, 1.0);
    assert!(first > started, "the timestamp moves: {first} after {started}");

    replace(&config, BROKEN);
    serve.hup();
    let line = serve.said("prober serve: error reloading the config");
    assert!(line.contains(r#"icmp.ttl: "ttl" cannot exceed 255"#), "{line}");
    assert!(success(&serve.probe("added", &url)), "the modules in force still answer");
    assert!(success(&serve.probe("http_2xx", &url)));
    assert_eq!(serve.reload_gauges(), (0.0, first), "failed: 0, the timestamp stays");

    replace(&config, THREE);
    serve.hup();
    serve.said("prober serve: reloaded ");
    let (ok, second) = serve.reload_gauges();
    assert_eq!(ok, 1.0);
    assert!(second > first, "the timestamp moves: {second} after {first}");
    assert_eq!(serve.probe("added", &url).status, 400, "the module left with the file");
    let third = serve.probe("third", &format!("127.0.0.1:{}", target.port()));
    assert!(success(&third), "{}", third.body);
}

#[test]
fn post_reload_answers_with_the_outcome_and_get_is_refused() {
    let config = write_file("yml", ONE);
    let serve = Serve::start(&config, &[]);
    let target = TargetServer::start();
    let url = format!("http://127.0.0.1:{}/health", target.port());

    let r = serve.get("/-/reload");
    assert_eq!(r.status, 405, "{}", r.head);
    assert_eq!(r.body, "This endpoint requires a POST request.\n");

    replace(&config, BROKEN);
    let r = serve.post_reload();
    assert_eq!(r.status, 500, "{}", r.head);
    assert!(r.body.starts_with("failed to reload config: "), "{}", r.body);
    assert!(r.body.contains(r#"icmp.ttl: "ttl" cannot exceed 255"#), "{}", r.body);
    serve.said("prober serve: error reloading the config");
    assert!(success(&serve.probe("http_2xx", &url)), "the modules in force still answer");
    let (ok, before) = serve.reload_gauges();
    assert_eq!(ok, 0.0);

    replace(&config, TWO);
    let r = serve.post_reload();
    assert_eq!((r.status, r.body.as_str()), (200, ""), "{}", r.head);
    serve.said("prober serve: reloaded ");
    assert!(success(&serve.probe("added", &url)), "the new module answers");
    let (ok, after) = serve.reload_gauges();
    assert_eq!(ok, 1.0);
    assert!(after > before, "the timestamp moves: {after} after {before}");

    // The same file again: nothing to load, and a success (blackbox_exporter's checksum).
    let r = serve.post_reload();
    assert_eq!(r.status, 200, "{}", r.head);
    assert_eq!(serve.reload_gauges().0, 1.0);
}

#[test]
fn auto_reload_picks_up_a_change_and_a_breakage() {
    let config = write_file("yml", ONE);
    let serve = Serve::start(
        &config,
        &["--config.enable-auto-reload", "--config.auto-reload-interval", "1"],
    );
    let target = TargetServer::start();
    let url = format!("http://127.0.0.1:{}/health", target.port());

    replace(&config, TWO);
    serve.said("prober serve: reloaded ");
    assert!(success(&serve.probe("added", &url)), "the new module answers");

    replace(&config, BROKEN);
    // The next tick (1 s) reads it: waited for on /metrics, bounded by HANG.
    let deadline = Instant::now() + HANG;
    while serve.reload_gauges().0 != 0.0 {
        assert!(Instant::now() < deadline, "the broken file was never reported");
        std::thread::sleep(Duration::from_millis(50));
    }
    serve.said("prober serve: error reloading the config");
    assert!(success(&serve.probe("added", &url)), "the modules in force still answer");
}

#[test]
fn a_probe_in_flight_finishes_with_the_module_it_started_with() {
    // The same module name, first taking 2xx, then only 503.
    let config = write_file("yml", ONE);
    let serve = Serve::start(&config, &[]);
    let slow = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", slow.local_addr().unwrap());
    let addr = serve.addr;
    let path = format!("/probe?module=http_2xx&target={url}");
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let in_flight = std::thread::spawn(move || exchange(addr, req.as_bytes()));
    let (mut held, _) = slow.accept().unwrap();
    let mut request = [0u8; 1024];
    let n = held.read(&mut request).unwrap();
    assert!(request[..n].starts_with(b"GET / HTTP/1.1\r\n"));

    replace(
        &config,
        "modules:\n  http_2xx:\n    prober: http\n    timeout: 30s\n    \
         http: {valid_status_codes: [503]}\n",
    );
    let r = serve.post_reload();
    assert_eq!(r.status, 200, "{}", r.body);
    held.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n").unwrap();
    drop(held);
    let old = in_flight.join().unwrap();
    assert!(!success(&old), "judged by the module it started with (2xx):\n{}", old.body);
    assert!(old.body.contains("\nprobe_http_status_code 503\n"), "{}", old.body);

    // A new request uses the new module.
    let addr = serve.addr;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let new = std::thread::spawn(move || exchange(addr, req.as_bytes()));
    let (mut held, _) = slow.accept().unwrap();
    let _ = held.read(&mut request).unwrap();
    held.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n").unwrap();
    drop(held);
    assert!(success(&new.join().unwrap()), "judged by the new module (503)");
}

#[test]
fn config_shows_the_modules_loaded_and_no_secret() {
    const PLANTED: &str = "planted-password-Vq52";
    let config = write_file(
        "yml",
        &format!(
            "modules:\n  with_auth:\n    prober: http\n    \
             http: {{basic_auth: {{username: scraper, password: {PLANTED}}}}}\n  \
             plain_tcp:\n    prober: tcp\n"
        ),
    );
    let serve = Serve::start(&config, &[]);
    let r = serve.get("/config");
    assert_eq!(r.status, 200, "{}", r.head);
    assert!(!r.body.contains(PLANTED), "{}", r.body);
    let doc: serde_norway::Value = serde_norway::from_str(&r.body).expect("YAML");
    let m = &doc["modules"];
    assert_eq!(m["with_auth"]["prober"].as_str(), Some("http"), "{}", r.body);
    assert_eq!(m["plain_tcp"]["prober"].as_str(), Some("tcp"), "{}", r.body);
    let auth = &m["with_auth"]["http"]["basic_auth"];
    assert_eq!(auth["username"].as_str(), Some("scraper"), "{}", r.body);
    assert_eq!(auth["password"].as_str(), Some("<secret>"), "{}", r.body);

    // After a reload, the new file's.
    replace(&config, TWO);
    assert_eq!(serve.post_reload().status, 200);
    let r = serve.get("/config");
    let doc: serde_norway::Value = serde_norway::from_str(&r.body).expect("YAML");
    assert_eq!(doc["modules"]["added"]["prober"].as_str(), Some("http"), "{}", r.body);
    assert!(doc["modules"].get("with_auth").is_none(), "{}", r.body);
}

#[test]
fn web_config_protects_reload_and_config() {
    let config = write_file("yml", ONE);
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = write_file("yml", &format!("basic_auth_users:\n  prometheus: '{hash}'\n"));
    let serve = Serve::start(&config, &["--web-config", web.path()]);
    replace(&config, TWO);
    assert_eq!(serve.post_reload().status, 401, "an unauthorised reload");
    assert_eq!(serve.get("/config").status, 401, "an unauthorised /config");
    let auth = format!(
        "Authorization: Basic {}\r\n",
        base64::engine::general_purpose::STANDARD.encode("prometheus:s3cret")
    );
    let with_auth = |head: &str| {
        let req = format!("{head}\r\nHost: x\r\nConnection: close\r\n{auth}\r\n");
        exchange(serve.addr, req.as_bytes())
    };
    let r = with_auth("GET /config HTTP/1.1");
    assert_eq!(r.status, 200, "{}", r.head);
    assert!(!r.body.contains("added:"), "the unauthorised reload loaded nothing: {}", r.body);
    let r = with_auth("POST /-/reload HTTP/1.1\r\nContent-Length: 0");
    assert_eq!(r.status, 200, "{}", r.head);
    let r = with_auth("GET /config HTTP/1.1");
    assert!(r.body.contains("\n  added:\n"), "{}", r.body);
}
