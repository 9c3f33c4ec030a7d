//! `prober watch` on watch files: state lines in order, human lines, `--until-ready`, startup
//! gating, gRPC and HTTPS probes.

mod common;

use common::*;
use prober_testkit::grpc::HealthServer;

#[test]
fn watch_reports_readiness_changes_in_order() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let mut w = Watch::start(&["--for", "5s", "--json", file.to_str().unwrap()]);

    let v = w.next_state("web", "readiness");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("initial")),
        "{v}"
    );
    assert_eq!(
        (v["started"].as_bool(), v["ready"].as_bool(), v["live"].as_bool()),
        (Some(true), Some(false), Some(true))
    );
    assert!(v["time_ms"].is_u64() && v["message"].is_string(), "{v}");

    let v = w.next_state("web", "readiness");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("success"), Some("none")),
        "{v}"
    );
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["ready"], true);
    server.set_healthy(false);

    let v = w.next_state("web", "readiness");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("status")),
        "{v}"
    );
    assert_eq!(v["message"], "HTTP probe failed with statuscode: 503");
    assert_eq!(v["ready"], false);

    let (status, rest) = w.wait();
    assert_eq!(status.code(), Some(0));
    let last: Value = serde_json::from_str(rest.last().expect("a summary line")).unwrap();
    assert_eq!(last["summary"][0]["target"], "web");
    assert_eq!(last["summary"][0]["ready"], false);
    assert_eq!(last["all_ready"], false);
}

#[test]
fn watch_human_lines() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let r = run(&["watch", "--until-ready", "--for", "30s", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].ends_with("web readiness failure (initial)  started=yes ready=no live=yes"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with("web readiness success (HTTP 200)  started=yes ready=yes live=yes"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "summary: web started=yes ready=yes live=yes");
}

#[test]
fn watch_human_lines_quote_names_that_could_pass_for_fields() {
    // A name with spaces would read as a name and a role and a result; one with a newline (or
    // a quote) could fake a line. Quoted, they stay one field; plain names stay as they are.
    let server = TargetServer::start();
    let probe = format!(
        r#""readinessProbe": {{"tcpSocket": {{"port": {}}}, "periodMilliseconds": 100}}"#,
        server.port()
    );
    let file = write_file(
        "json",
        &format!(
            r#"{{"targets": [
                {{"name": "web ready 3", {probe}}},
                {{"name": "a\nsummary: b", {probe}}},
                {{"name": "say \"hi\"", {probe}}},
                {{"name": "plain/name", {probe}}}
            ]}}"#
        ),
    );
    let r = run(&["watch", "--until-ready", "--for", "30s", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    for name in [r#""web ready 3""#, r#""a\nsummary: b""#, r#""say \"hi\"""#, "plain/name"] {
        let initial =
            format!("s {name} readiness failure (initial)  started=yes ready=no live=yes");
        assert!(lines.iter().any(|l| l.ends_with(&initial)), "{initial:?} in {lines:#?}");
        let ready = format!("s {name} readiness success  started=yes ready=yes live=yes");
        assert!(lines.iter().any(|l| l.ends_with(&ready)), "{ready:?} in {lines:#?}");
    }
    let summary: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("summary:")).collect();
    assert_eq!(
        summary,
        [
            r#"summary: "web ready 3" started=yes ready=yes live=yes"#,
            r#"summary: "a\nsummary: b" started=yes ready=yes live=yes"#,
            r#"summary: "say \"hi\"" started=yes ready=yes live=yes"#,
            "summary: plain/name started=yes ready=yes live=yes",
        ]
    );
}

#[test]
fn until_ready_exits_0_when_ready_and_1_when_not() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let r = run(&["watch", "--until-ready", "--for", "30s", "--json", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let last: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["all_ready"], true);

    server.set_healthy(false);
    let r = run(&["watch", "--until-ready", "--for", "1s", "--json", file.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let last: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["all_ready"], false);
    assert!(server.requests() > 0);
}

#[test]
fn watch_gates_readiness_on_startup_and_expands_target_env() {
    let server = TargetServer::start();
    let file = write_file(
        "json",
        &format!(
            r#"{{"targets": [{{
                "name": "svc",
                "env": [{{"name": "WANT", "value": "yes"}}],
                "ports": [{{"name": "http", "containerPort": {}}}],
                "startupProbe": {{"exec": {{"command": ["/bin/sh", "-c", "test $(WANT) = yes"]}}, "periodMilliseconds": 100}},
                "readinessProbe": {{"tcpSocket": {{"port": "http"}}, "periodSeconds": 60}}
            }}]}}"#,
            server.port()
        ),
    );
    let mut w = Watch::start(&["--until-ready", "--for", "30s", "--json", file.to_str().unwrap()]);
    let mut seen = Vec::new();
    loop {
        let v = w.next_json();
        if v.get("summary").is_some() {
            assert_eq!(v["all_ready"], true, "{v}");
            break;
        }
        seen.push(format!(
            "{} {} {}",
            v["role"].as_str().unwrap(),
            v["result"].as_str().unwrap(),
            v["reason"].as_str().unwrap()
        ));
    }
    let (status, _) = w.wait();
    assert_eq!(status.code(), Some(0));
    // Initial values first (startup unknown, readiness failure), then startup success, and
    // readiness only after it.
    let startup_ok =
        seen.iter().position(|s| s == "startup success none").expect("startup success");
    let ready_ok =
        seen.iter().position(|s| s == "readiness success none").expect("readiness success");
    assert!(startup_ok < ready_ok, "{seen:?}");
    assert!(seen.contains(&"startup unknown initial".to_string()), "{seen:?}");
}

#[test]
fn watch_grpc_and_https_probes_turn_ready() {
    let p = pki("watch", &["127.0.0.1"]);
    let plain = HealthServer::start(&["-status", "my.pkg.Svc=SERVING"]);
    let tls = HealthServer::start(&["-tls-cert", &p.cert, "-tls-key", &p.key]);
    let web = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    // In the directory of the CA file: `caFile: ca.crt` is relative to the watch file, not to
    // the current directory (the crate's, under cargo test).
    let file = p.dir.0.join("watch.yaml");
    std::fs::write(
        &file,
        format!(
            "targets:\n\
             - name: rpc\n\
             \x20 readinessProbe:\n\
             \x20   grpc: {{port: {}, service: my.pkg.Svc, host: 127.0.0.1}}\n\
             \x20   periodMilliseconds: 100\n\
             - name: rpc-tls\n\
             \x20 readinessProbe:\n\
             \x20   grpc: {{port: {}, mode: TLS}}\n\
             \x20   tls: {{caFile: ca.crt, minVersion: 1.3}}\n\
             \x20   periodMilliseconds: 100\n\
             - name: web\n\
             \x20 readinessProbe:\n\
             \x20   httpGet: {{path: /health, port: {}, scheme: HTTPS}}\n\
             \x20   periodMilliseconds: 100\n",
            plain.port(),
            tls.port(),
            web.port()
        ),
    )
    .unwrap();
    let r = run(&["watch", "--until-ready", "--for", "30s", "--json", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let (states, lines) = states_of(&r.stdout);
    for want in ["rpc readiness success", "rpc-tls readiness success", "web readiness success"] {
        assert!(states.iter().any(|s| s == want), "{want:?} missing from {states:?}");
    }
    let web_ok = lines.iter().find(|v| v["target"] == "web" && v["result"] == "success").unwrap();
    assert_eq!(web_ok["http_status"], 200);
    assert_eq!(web_ok["cert_not_after"], CERT_NOT_AFTER);
    assert_eq!(lines.last().unwrap()["all_ready"], true);
}

#[test]
fn watch_grpc_failure_lines_carry_the_message() {
    // A liveness probe starts as success: NOT_SERVING publishes a failure with the message.
    let s = HealthServer::start(&["-status", "down=NOT_SERVING"]);
    let file = one_probe_file(
        "rpc",
        "livenessProbe",
        &format!("grpc: {{port: {}, service: down}}", s.port()),
        &["periodMilliseconds: 100", "failureThreshold: 1"],
    );
    let mut w = Watch::start(&["--for", "30s", "--json", file.to_str().unwrap()]);
    let v = w.next_state("rpc", "liveness");
    assert_eq!(v["reason"], "initial");
    let v = w.next_state("rpc", "liveness");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("status")),
        "{v}"
    );
    assert_eq!(v["message"], "service unhealthy (responded with \"NOT_SERVING\")");
    assert_eq!(v["live"], false);
    w.signal(Signal::SIGTERM);
    let (status, _) = w.wait();
    assert_eq!(status.code(), Some(0));
}
