//! `prober watch --health-listen ADDR` against real HTTP targets (`prober_testkit`'s server,
//! whose health the tests flip), asked over real HTTP connections as a load balancer or an
//! orchestrator would: `/readyz` and `/livez` aggregated (200 or 503), `?verbose` as the
//! Kubernetes API server's, `/readyz/TARGET` for one target; with `--metrics` on the same
//! address, one server answers both.

mod common;

use std::net::{SocketAddr, TcpListener};

use common::{
    HANG, Instant, Response, TargetServer, TempFile, Watch, http, run, scrape, write_file,
};

fn get(addr: SocketAddr, path: &str) -> Response {
    http(addr, format!("GET {path} HTTP/1.1\r\nHost: prober\r\n\r\n").as_bytes())
}

/// Asks `path` until the answer's status is `status`; returns that answer.
fn until_status(addr: SocketAddr, path: &str, status: u16) -> Response {
    let deadline = Instant::now() + HANG;
    loop {
        let r = get(addr, path);
        if r.status == status {
            return r;
        }
        assert!(Instant::now() < deadline, "{path} never answered {status}; last: {}", r.body);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Two targets: `web` (readiness) and `api/v1` (readiness and liveness), each on its server.
fn two_targets(web: &TargetServer, api: &TargetServer) -> TempFile {
    let probe = |port: u16| {
        format!(
            "      httpGet: {{path: /health, port: {port}}}\n      periodMilliseconds: 100\n      \
             failureThreshold: 1\n"
        )
    };
    write_file(
        "yaml",
        &format!(
            "targets:\n- name: web\n  readinessProbe:\n{}- name: api/v1\n  readinessProbe:\n{}  \
             livenessProbe:\n{}",
            probe(web.port()),
            probe(api.port()),
            probe(api.port())
        ),
    )
}

#[test]
fn readyz_and_livez_aggregate_the_targets_as_the_api_server_does() {
    let (web, api) = (TargetServer::start(), TargetServer::start());
    api.set_healthy(false);
    let file = two_targets(&web, &api);
    let mut w = Watch::start(&["--health-listen", "127.0.0.1:0", file.path()]);
    let addr = w.health_addr();

    // web ready, api not: 503, every target listed with why, verbose or not.
    let r = until_status(addr, "/readyz/web", 200);
    assert_eq!(r.body, "ok\n");
    assert!(r.head.contains("Content-Type: text/plain; charset=utf-8"), "{}", r.head);
    let r = until_status(addr, "/livez", 503);
    assert_eq!(
        r.body,
        "[+]web ok\n[-]api/v1 failed: liveness failure (status)\nlivez check failed\n"
    );
    let r = get(addr, "/readyz");
    assert_eq!(r.status, 503);
    assert_eq!(
        r.body,
        "[+]web ok\n[-]api/v1 failed: readiness failure (status)\nreadyz check failed\n"
    );
    assert_eq!(get(addr, "/readyz?verbose").body, r.body);
    // One target, its name percent-encoded; an unknown one.
    let r = get(addr, "/readyz/api%2Fv1");
    assert_eq!(
        (r.status, r.body.as_str()),
        (503, "[-]api/v1 failed: readiness failure (status)\nreadyz check failed\n")
    );
    assert_eq!(get(addr, "/readyz/api/v1").status, 503, "a / in a name may stay as it is");
    let r = get(addr, "/readyz/db");
    assert_eq!((r.status, r.body.as_str()), (404, "no target db\n"));

    // api recovers its readiness; its liveness failure stays (nothing restarts it here).
    api.set_healthy(true);
    let r = until_status(addr, "/readyz", 200);
    assert_eq!(r.body, "ok\n");
    let r = get(addr, "/readyz?verbose");
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, "[+]web ok\n[+]api/v1 ok\nreadyz check passed\n")
    );
    assert_eq!(get(addr, "/livez").status, 503);
    // HEAD: the status and length, no body; other methods and paths refused.
    let r = http(addr, b"HEAD /readyz HTTP/1.1\r\n\r\n");
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    assert!(r.head.contains("Content-Length: 3"), "{}", r.head);
    assert_eq!(http(addr, b"POST /readyz HTTP/1.1\r\n\r\n").status, 405);
    let r = get(addr, "/metrics");
    assert_eq!((r.status, r.body.as_str()), (404, "not found: served here: /readyz, /livez\n"));

    // A target whose server goes away is not ready, with the run's reason.
    drop(web);
    let r = until_status(addr, "/readyz/web", 503);
    assert_eq!(r.body, "[-]web failed: readiness failure (refused)\nreadyz check failed\n");
    let (status, _) = w.stop();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_target_is_not_ready_before_its_first_verdict() {
    // A startup probe an hour away: nothing is published but its initial value.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n- name: slow\n  startupProbe:\n    tcpSocket: {{port: {port}}}\n    \
             initialDelaySeconds: 3600\n"
        ),
    );
    let mut w = Watch::start(&["--health-listen", "127.0.0.1:0", file.path()]);
    let addr = w.health_addr();
    let r = get(addr, "/readyz?verbose");
    assert_eq!(
        (r.status, r.body.as_str()),
        (503, "[-]slow failed: startup unknown (initial)\nreadyz check failed\n")
    );
    assert_eq!(get(addr, "/livez").status, 200, "no liveness probe: live");
    w.stop();
}

#[test]
fn one_server_answers_metrics_and_health_on_one_address() {
    let web = TargetServer::start();
    let file = common::health_watch_file(&web);
    // The same port for both: one listener.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let at = format!("127.0.0.1:{port}");
    let mut w = Watch::start(&["--metrics", &at, "--health-listen", &at, file.path()]);
    let addr = w.metrics_addr();
    assert_eq!(w.health_addr(), addr);
    until_status(addr, "/readyz", 200);
    let e = scrape(addr);
    assert_eq!(e.get("prober_ready", &[("target", "web")]), Some(1.0));
    assert_eq!(get(addr, "/nope").body, "not found: served here: /metrics, /readyz, /livez\n");
    w.stop();
}

#[test]
fn bad_and_taken_addresses() {
    common::assert_usage_error(
        &["watch", "--health-listen", "localhost:1", "w.yaml"],
        "--health-listen: bad address 'localhost:1'",
    );
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap().to_string();
    let web = TargetServer::start();
    let file = common::health_watch_file(&web);
    let r = run(&["watch", "--health-listen", &at, file.path()]);
    assert_eq!(r.code, 70, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!("prober: --health-listen: cannot listen on {at}: ")),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "nothing ran");
}
