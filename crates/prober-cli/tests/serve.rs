//! `prober serve` as Prometheus (or an operator with curl) uses it: `/probe` with blackbox's
//! metrics, a probe in flight never holding up other requests, and `--web-config`.

mod common;

use std::net::TcpListener;

use common::*;

/// A running `prober serve`, killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Serve {
    fn start(args: &[&str]) -> Serve {
        let mut child = prober()
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober serve");
        let stderr = line_reader(child.stderr.take().unwrap());
        let line = stderr.recv_timeout(HANG).expect("prober serve printed where it listens");
        let addr = line
            .strip_prefix("prober serve: listening on ")
            .and_then(|l| l.strip_prefix("http://").or_else(|| l.strip_prefix("https://")))
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"))
            .parse()
            .unwrap();
        Serve { child, addr }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// curl's exit status and output (`-w` adds the status code on the last line).
fn curl(args: &[&str]) -> (i32, String) {
    let o = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "60"])
        .args(args)
        .output()
        .expect("run curl (this test needs it on PATH)");
    let text =
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap_or(-1), text)
}

const MODULES: &str = "modules:\n  http_2xx:\n    prober: http\n    timeout: 60s\n";

#[test]
fn probe_answers_with_blackbox_metrics_and_a_probe_in_flight_holds_up_no_one() {
    let config = write_file("yml", MODULES);
    let serve = Serve::start(&["--config", config.path()]);
    let target = TargetServer::start();
    let url = format!(
        "http://{}/probe?module=http_2xx&target=http://127.0.0.1:{}/health",
        serve.addr,
        target.port()
    );
    let (code, out) = curl(&[&url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 1\n"), "{out}");
    assert!(out.contains("\nprobe_http_status_code 200\n"), "{out}");

    // A target that takes the request and answers only when the test says so.
    let slow = TcpListener::bind("127.0.0.1:0").unwrap();
    let slow_url = format!(
        "http://{}/probe?module=http_2xx&target=http://{}/",
        serve.addr,
        slow.local_addr().unwrap()
    );
    let in_flight = std::thread::spawn(move || curl(&[&slow_url]));
    let (mut conn, _) = slow.accept().unwrap();
    let mut request = [0u8; 1024];
    let n = conn.read(&mut request).unwrap();
    assert!(request[..n].starts_with(b"GET / HTTP/1.1\r\n"));
    // The probe is in flight, waiting on this server: the exporter answers others meanwhile.
    let (code, out) = curl(&[&format!("http://{}/metrics", serve.addr)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("prober_serve_probes_total 2\n"), "{out}");
    let (code, out) = curl(&[&url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 1\n"), "{out}");
    assert!(!in_flight.is_finished(), "the slow probe ended before its server answered");
    conn.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n").unwrap();
    let (code, out) = in_flight.join().unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 0\n"), "{out}");
    assert!(out.contains("\nprobe_http_status_code 503\n"), "{out}");
}

#[test]
fn web_config_protects_probe_and_metrics() {
    let config = write_file("yml", MODULES);
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = write_file("yml", &format!("basic_auth_users:\n  prometheus: '{hash}'\n"));
    let serve = Serve::start(&["--config", config.path(), "--web-config", web.path()]);
    let target = TargetServer::start();
    let url = format!(
        "http://{}/probe?module=http_2xx&target=http://127.0.0.1:{}/health",
        serve.addr,
        target.port()
    );
    let (_, out) = curl(&["-i", &url]);
    assert!(out.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{out}");
    assert!(out.contains("WWW-Authenticate: Basic\r\n"), "{out}");
    let (_, out) = curl(&["-i", &format!("http://{}/metrics", serve.addr)]);
    assert!(out.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{out}");
    assert_eq!(target.requests(), 0, "an unauthorised /probe must not probe");
    let (code, out) = curl(&["-u", "prometheus:s3cret", &url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 1\n"), "{out}");
}

#[test]
fn a_bad_web_config_fails_at_start_naming_the_file() {
    let config = write_file("yml", MODULES);
    let web = write_file("yml", "basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n");
    let r = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--config",
        config.path(),
        "--web-config",
        web.path(),
    ]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(r.stderr.contains(web.path()), "{}", r.stderr);
}

#[test]
fn clients_that_hang_up_cancel_their_probes_at_once() {
    const CLIENTS: u64 = 20;
    // The probes would run for 100 s; the target never answers (it gives up after 60 s).
    let config = write_file("yml", "modules:\n  slow:\n    prober: http\n    timeout: 100s\n");
    let serve = Serve::start(&["--config", config.path()]);
    let target = TargetServer::start();
    let request = format!(
        "GET /probe?module=slow&target={} HTTP/1.1\r\nHost: t\r\n\r\n",
        target.url("/never-answer")
    );
    let clients: Vec<std::net::TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(serve.addr).unwrap();
            c.write_all(request.as_bytes()).unwrap();
            c
        })
        .collect();
    assert!(target.wait_for_requests(CLIENTS, HANG), "the probes never reached the target");
    drop(clients);
    // Cancelled: the target sees every probe's connection closed, long before the probes'
    // timeout and its own give-up.
    assert!(
        target.wait_for_connections_closed(CLIENTS, Duration::from_secs(30)),
        "the probes of clients that hung up are still running"
    );
    let (code, out) = curl(&[&format!("http://{}/metrics", serve.addr)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("\nprober_serve_probes_cancelled_total {CLIENTS}\n")), "{out}");
}

#[test]
fn a_client_cannot_ask_for_longer_than_the_module_or_the_server_allows() {
    let config = write_file(
        "yml",
        "modules:\n  short:\n    prober: http\n    timeout: 1s\n  open:\n    prober: http\n",
    );
    let serve = Serve::start(&["--config", config.path()]);
    let target = TargetServer::start();
    let day = "X-Prometheus-Scrape-Timeout-Seconds: 86400";
    // The module's timeout wins over a header asking for a day.
    let url = format!(
        "http://{}/probe?module=short&debug=true&target={}",
        serve.addr,
        target.url("/never-answer")
    );
    let (code, out) = curl(&["-H", day, &url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" timeout_seconds=1\n"), "{out}");
    assert!(out.contains("\nprobe_success 0\n"), "{out}");
    let duration: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("probe_duration_seconds "))
        .expect("probe_duration_seconds")
        .parse()
        .unwrap();
    let bound = prober_testkit::bounds::ends_by(Duration::from_secs(1));
    assert!(duration <= bound.as_secs_f64(), "ran {duration} s for a 1 s timeout: {out}");
    // Without a module timeout, the header counts for at most 120 s (less the offset).
    let url = format!(
        "http://{}/probe?module=open&debug=true&target={}",
        serve.addr,
        target.url("/health")
    );
    let (code, out) = curl(&["-H", day, &url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" timeout_seconds=119.5\n"), "{out}");
    assert!(out.contains("\nprobe_success 1\n"), "{out}");
}

#[test]
fn probes_in_flight_are_bounded_and_never_lock_out_metrics() {
    // The server's bound: 512 connections less 64 kept for the other endpoints.
    const IN_FLIGHT: u64 = 448;
    let config = write_file("yml", "modules:\n  slow:\n    prober: http\n    timeout: 100s\n");
    let serve = Serve::start(&["--config", config.path()]);
    let target = TargetServer::start();
    let probe = format!("/probe?module=slow&target={}", target.url("/never-answer"));
    let ask = |close: bool| {
        let mut c = std::net::TcpStream::connect(serve.addr).unwrap();
        c.set_read_timeout(Some(HANG)).unwrap();
        let close = if close { "Connection: close\r\n" } else { "" };
        c.write_all(format!("GET {probe} HTTP/1.1\r\nHost: t\r\n{close}\r\n").as_bytes()).unwrap();
        c
    };
    let hanging: Vec<_> = (0..IN_FLIGHT).map(|_| ask(false)).collect();
    assert!(target.wait_for_requests(IN_FLIGHT, HANG), "the probes never reached the target");
    // Past the bound, more /probe requests than the server has connections are refused at
    // once, and /metrics is answered throughout.
    for _ in 0..80 {
        let mut c = ask(true);
        let mut answer = String::new();
        c.read_to_string(&mut answer).expect("an answer, at once");
        assert!(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{answer}");
        assert!(answer.contains("\r\n\r\ntoo many requests waiting for an answer"), "{answer}");
    }
    let (code, out) = curl(&[&format!("http://{}/metrics", serve.addr)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("\nprober_serve_probes_total {IN_FLIGHT}\n")), "{out}");
    drop(hanging);
    assert!(
        target.wait_for_connections_closed(IN_FLIGHT, Duration::from_secs(30)),
        "the probes of clients that hung up are still running"
    );
}

/// Modules with large `body_size_limit`s are held to a total: each probe in flight reserves
/// its module's limit, so with seven 64 MiB probes and a 1 MiB one waiting (449 of the 512
/// MiB), another 64 MiB probe is answered 503 at once while a 1 MiB one still runs.
#[test]
fn the_output_held_by_probes_in_flight_is_bounded_in_total() {
    const BIG: u64 = 7;
    let config = write_file(
        "yml",
        "modules:\n  big:\n    prober: http\n    timeout: 100s\n    http: {body_size_limit: 64MiB}\n  small:\n    prober: http\n    timeout: 100s\n",
    );
    let serve = Serve::start(&["--config", config.path()]);
    let target = TargetServer::start();
    let ask = |module: &str, path: &str| {
        let probe = format!("/probe?module={module}&target={}", target.url(path));
        let mut c = std::net::TcpStream::connect(serve.addr).unwrap();
        c.set_read_timeout(Some(HANG)).unwrap();
        let request = format!("GET {probe} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        c.write_all(request.as_bytes()).unwrap();
        c
    };
    let answer = |mut c: std::net::TcpStream| {
        let mut answer = String::new();
        c.read_to_string(&mut answer).expect("an answer");
        answer
    };
    let mut hanging: Vec<_> = (0..BIG).map(|_| ask("big", "/never-answer")).collect();
    hanging.push(ask("small", "/never-answer"));
    assert!(target.wait_for_requests(BIG + 1, HANG), "the probes never reached the target");
    let refused = answer(ask("big", "/never-answer"));
    assert!(refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{refused}");
    assert!(refused.contains("too much probe output held by the probes in flight"), "{refused}");
    let small = answer(ask("small", "/"));
    assert!(small.contains("\nprobe_success 1\n"), "{small}");
    let (code, out) = curl(&[&format!("http://{}/metrics", serve.addr)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprober_serve_probes_over_budget_total 1\n"), "{out}");
    // Given back when the clients go: a big probe runs again.
    drop(hanging);
    assert!(
        target.wait_for_connections_closed(BIG + 1, Duration::from_secs(30)),
        "the probes of clients that hung up are still running"
    );
    let big = answer(ask("big", "/"));
    assert!(big.contains("\nprobe_success 1\n"), "{big}");
}

/// A `prober: unix` module (blackbox_exporter v0.28.0) loads from the file, and `/probe` with
/// a socket's path as the target connects to it (grpc-go's server listening on the socket).
#[test]
fn a_unix_module_probes_a_socket_by_its_path() {
    let dir = TempDir::new("serve-unix");
    let sock = dir.0.join("app.sock");
    let _server = prober_testkit::grpc::HealthServer::start(&["-unix", sock.to_str().unwrap()]);
    let config = write_file(
        "yml",
        &format!(
            "modules:\n  unix_connect:\n    prober: unix\n    timeout: 10s\n    allow: {{paths: [\"{}/\"]}}\n",
            dir.0.display()
        ),
    );
    let serve = Serve::start(&["--config", config.path()]);
    let probe = |target: &str| {
        curl(&[&format!("http://{}/probe?module=unix_connect&target={target}", serve.addr)])
    };
    let (code, out) = probe(sock.to_str().unwrap());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 1\n"), "{out}");
    assert!(!out.contains("probe_dns_lookup_time_seconds"), "{out}");
    let (code, out) = probe(dir.0.join("gone.sock").to_str().unwrap());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nprobe_success 0\n"), "{out}");
}
