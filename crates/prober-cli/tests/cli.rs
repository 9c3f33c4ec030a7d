//! The `prober` binary against `prober_testkit::TargetServer`: exit statuses, JSON fields,
//! headers, exec, timeouts, `watch` on files and manifests, bad input, signals.
//!
//! No pass condition depends on wall-clock time, except generous "did not hang" bounds.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use prober_testkit::TargetServer;
use serde_json::Value;

/// Bound for one command to finish: only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(60);

fn prober() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prober"))
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `prober ARGS` to completion (within [`HANG`]).
fn run(args: &[&str]) -> Run {
    let mut child = prober()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn prober");
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, HANG);
    Run {
        code: status.code().expect("prober ended by a signal"),
        stdout: out.recv().unwrap(),
        stderr: err.recv().unwrap(),
    }
}

fn reader(mut r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    rx
}

fn wait_bounded(child: &mut Child, bound: Duration) -> ExitStatus {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("prober did not finish within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The one line of `prober check --json`, parsed.
fn json_line(r: &Run) -> Value {
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", r.stdout);
    serde_json::from_str(lines[0]).expect("stdout is one JSON object")
}

fn check_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert_eq!(r.stderr, "", "no stderr expected");
    (r.code, json_line(&r))
}

/// The fields every `check --json` line has, with their types.
fn assert_common_fields(v: &Value) {
    for key in ["result", "message", "output", "reason"] {
        assert!(v[key].is_string(), "{key} in {v}");
    }
    assert!(v["truncated"].is_boolean(), "{v}");
    assert!(v["duration_ms"].is_number(), "{v}");
    assert!(v["timings"]["total_ms"].is_number(), "{v}");
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let r = run(args);
    assert_eq!(r.code, 64, "{args:?}: {}", r.stderr);
    assert_eq!(r.stdout, "", "{args:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: one line on stderr: {:?}",
        r.stderr
    );
    assert!(lines[0].starts_with("prober: "), "{args:?}: {}", lines[0]);
    assert!(
        lines[0].contains(needle),
        "{args:?}: {:?} lacks {needle:?}",
        lines[0]
    );
}

// ---- check: exit statuses and JSON ------------------------------------------------------

#[test]
fn check_success_exits_0_with_json_fields() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/health")]);
    assert_eq!(code, 0);
    assert_common_fields(&v);
    assert_eq!(v["result"], "success");
    assert_eq!(v["message"], "");
    assert_eq!(v["output"], "ok");
    assert_eq!(v["truncated"], false);
    assert_eq!(v["reason"], "none");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["output_total"], 2);
    assert!(v.get("exit_code").is_none(), "{v}");
}

#[test]
fn check_warning_exits_0() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/status/302?body=moved")]);
    assert_eq!(code, 0);
    assert_common_fields(&v);
    assert_eq!(v["result"], "warning");
    assert_eq!(v["reason"], "redirect");
    assert_eq!(v["http_status"], 302);
    assert_eq!(
        v["message"],
        "Probe terminated redirects, Response body: moved"
    );
    assert_eq!(v["output"], "moved");
}

#[test]
fn check_failure_exits_1() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let (code, v) = check_json(&[&server.url("/health")]);
    assert_eq!(code, 1);
    assert_common_fields(&v);
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "status");
    assert_eq!(v["http_status"], 503);
    assert_eq!(v["message"], "HTTP probe failed with statuscode: 503");
    assert_eq!(v["output"], "unhealthy");
}

#[test]
fn check_unknown_exits_2_for_a_missing_binary() {
    let (code, v) = check_json(&["--", "/no/such/binary", "arg"]);
    assert_eq!(code, 2);
    assert_common_fields(&v);
    assert_eq!(v["result"], "unknown");
    assert_eq!(v["reason"], "spawn");
    assert!(
        v["message"].as_str().unwrap().contains("/no/such/binary"),
        "{v}"
    );
}

#[test]
fn check_https_is_unknown_without_tls_and_a_failure_with_it() {
    // The target server speaks plain HTTP: without TLS built in the probe cannot run (2,
    // unsupported); with TLS the handshake fails (1).
    let server = TargetServer::start();
    let url = server.url("/health").replacen("http://", "https://", 1);
    let (code, v) = check_json(&[&url]);
    assert_common_fields(&v);
    match v["reason"].as_str().unwrap() {
        "unsupported" => assert_eq!((code, v["result"].as_str()), (2, Some("unknown")), "{v}"),
        _ => assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "{v}"),
    }
}

#[test]
fn check_tcp_success_and_refused() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&format!("tcp://127.0.0.1:{}", server.port())]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert!(v.get("output_total").is_none(), "{v}");
    let port = prober_testkit::closed_port();
    let (code, v) = check_json(&[&format!("tcp://127.0.0.1:{port}")]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("refused")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        format!("dial tcp 127.0.0.1:{port}: connect: connection refused")
    );
}

#[test]
fn check_human_lines() {
    let server = TargetServer::start();
    let r = run(&["check", &server.url("/health")]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("success (HTTP 200, "), "{}", r.stdout);
    assert_eq!(r.stdout.lines().count(), 1);
    let r = run(&["check", &server.url("/status/500")]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .starts_with("failure: HTTP probe failed with statuscode: 500 (status, HTTP 500, "),
        "{}",
        r.stdout
    );
    let r = run(&["check", "--", "/bin/sh", "-c", "exit 3"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .starts_with("failure: command terminated with exit code 3 (exit_code, exit 3, "),
        "{}",
        r.stdout
    );
}

// ---- check: usage errors ----------------------------------------------------------------

#[test]
fn usage_errors_exit_64_with_one_line() {
    assert_usage_error(
        &["check", "--bogus", "http://127.0.0.1:1/"],
        "unknown option '--bogus'",
    );
    assert_usage_error(&["check", "127.0.0.1:80"], "bad target '127.0.0.1:80'");
    assert_usage_error(&["check", "ftp://127.0.0.1/"], "unsupported scheme 'ftp'");
    assert_usage_error(&["check", "tcp://127.0.0.1"], "missing port");
    assert_usage_error(
        &["check", "--timeout", "5", "http://127.0.0.1:1/"],
        "bad duration '5'",
    );
    assert_usage_error(
        &["check", "--timeout", "soon", "http://127.0.0.1:1/"],
        "bad duration 'soon'",
    );
    assert_usage_error(&["check"], "missing TARGET");
    assert_usage_error(&["check", "--json"], "missing TARGET");
    assert_usage_error(&["check", "--"], "missing command");
    assert_usage_error(
        &["check", "-H", "NoColon", "http://127.0.0.1:1/"],
        "bad header 'NoColon'",
    );
    assert_usage_error(
        &["check", "-H", "Bad Name: v", "http://127.0.0.1:1/"],
        "invalid HTTP header name",
    );
    assert_usage_error(
        &["check", "-H", "X: y", "tcp://127.0.0.1:1"],
        "applies to http",
    );
    assert_usage_error(
        &["check", "--redirects", "all", "http://127.0.0.1:1/"],
        "bad --redirects 'all'",
    );
    assert_usage_error(
        &["check", "--env", "NOEQUALS", "--", "true"],
        "bad --env 'NOEQUALS'",
    );
    assert_usage_error(&["frobnicate"], "unknown command 'frobnicate'");
    assert_usage_error(&[], "missing command");
    assert_usage_error(&["watch"], "missing FILE");
    assert_usage_error(&["watch", "--for", "1", "f.yaml"], "bad duration '1'");
    assert_usage_error(&["watch", "--until", "f.yaml"], "unknown option '--until'");
}

#[test]
fn help_and_version() {
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["watch", "--help"],
        &["help", "check"],
    ] {
        let r = run(args);
        assert_eq!(r.code, 0, "{args:?}");
        assert!(r.stdout.contains("Usage"), "{args:?}: {}", r.stdout);
        assert_eq!(r.stderr, "");
    }
    assert!(run(&["check", "--help"]).stdout.contains("--timeout DUR"));
    assert!(run(&["watch", "--help"]).stdout.contains("--until-ready"));
    let r = run(&["--version"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, format!("prober {}\n", env!("CARGO_PKG_VERSION")));
}

// ---- check: headers, redirects, exec, timeout --------------------------------------------

#[test]
fn default_headers_are_the_kubelets() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/echo/headers")]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("\nUser-Agent: kube-probe/"), "{out}");
    assert!(out.contains("\nAccept: */*\n"), "{out}");
}

#[test]
fn empty_user_agent_removes_the_header() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["-H", "User-Agent:", &server.url("/echo/headers")]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(!out.to_ascii_lowercase().contains("user-agent"), "{out}");
    assert!(out.contains("Accept: */*"), "{out}");
}

#[test]
fn user_headers_replace_defaults_and_add() {
    let server = TargetServer::start();
    let url = server.url("/echo/headers");
    let (code, v) = check_json(&[
        "-H",
        "User-Agent: my-agent/2",
        "--header=X-Probe: yes",
        &url,
    ]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("User-Agent: my-agent/2\n"), "{out}");
    assert!(!out.contains("kube-probe"), "{out}");
    assert!(out.contains("X-Probe: yes\n"), "{out}");
    let (_, v) = check_json(&["-H", "Accept: text/plain", &url]);
    let out = v["output"].as_str().unwrap();
    assert!(
        out.contains("Accept: text/plain\n") && !out.contains("*/*"),
        "{out}"
    );
}

#[test]
fn redirect_policy_option() {
    let server = TargetServer::start();
    let url = server.url("/redirect-chain/1");
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&["--redirects", "none", &url]);
    assert_eq!(
        (code, v["result"].as_str(), v["http_status"].as_u64()),
        (0, Some("warning"), Some(302)),
        "{v}"
    );
}

#[test]
fn exec_expands_env() {
    let (code, v) = check_json(&[
        "--env",
        "GREETING=hi",
        "--",
        "/bin/sh",
        "-c",
        "echo $(GREETING)",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"], "success");
    assert_eq!(v["output"].as_str().unwrap().trim_end(), "hi");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["output_total"], 3);
    // Without the variable the reference stays as written.
    let (_, v) = check_json(&["--", "/bin/echo", "$(GREETING)"]);
    assert_eq!(v["output"], "$(GREETING)\n");
}

#[test]
fn timeout_is_a_failure() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["--timeout", "200ms", &server.url("/slow-headers/2000")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "timeout");
}

// ---- watch ------------------------------------------------------------------------------

static FILES: AtomicUsize = AtomicUsize::new(0);

/// A file under the tests' temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(ext: &str) -> TempFile {
        let n = FILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("cli-{}-{n}.{ext}", std::process::id());
        TempFile(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name))
    }
}

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes `text` to a fresh temporary file.
fn write_file(ext: &str, text: &str) -> TempFile {
    let file = TempFile::new(ext);
    std::fs::write(&file.0, text).unwrap();
    file
}

/// A running `prober watch` whose stdout lines arrive on a channel.
struct Watch {
    child: Child,
    lines: Receiver<String>,
}

impl Watch {
    fn start(args: &[&str]) -> Watch {
        let mut child = prober()
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn prober watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watch { child, lines }
    }

    /// The next line, parsed as JSON.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(HANG)
            .expect("prober watch printed no line in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
    }

    /// The next state line of `target` and `role`, skipping others.
    fn next_state(&self, target: &str, role: &str) -> Value {
        loop {
            let v = self.next();
            assert!(
                v.get("summary").is_none(),
                "watch ended before the expected state: {v}"
            );
            if v["target"] == target && v["role"] == role {
                return v;
            }
        }
    }

    fn wait(mut self) -> (ExitStatus, Vec<String>) {
        let status = wait_bounded(&mut self.child, HANG);
        (status, self.lines.iter().collect())
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(r, 0);
    }
}

fn health_watch_file(server: &TargetServer) -> TempFile {
    write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: web\n\
             \x20 readinessProbe:\n\
             \x20   httpGet: {{path: /health, port: {}}}\n\
             \x20   periodMilliseconds: 100\n\
             \x20   timeoutMilliseconds: 500\n\
             \x20   failureThreshold: 1\n",
            server.port()
        ),
    )
}

#[test]
fn watch_reports_readiness_changes_in_order() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let w = Watch::start(&["--for", "5s", "--json", file.to_str().unwrap()]);

    let v = w.next_state("web", "readiness");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("initial")),
        "{v}"
    );
    assert_eq!(
        (
            v["started"].as_bool(),
            v["ready"].as_bool(),
            v["live"].as_bool()
        ),
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
    let r = run(&[
        "watch",
        "--until-ready",
        "--for",
        "30s",
        file.to_str().unwrap(),
    ]);
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
fn until_ready_exits_0_when_ready_and_1_when_not() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let r = run(&[
        "watch",
        "--until-ready",
        "--for",
        "30s",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let last: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["all_ready"], true);

    server.set_healthy(false);
    let r = run(&[
        "watch",
        "--until-ready",
        "--for",
        "1s",
        "--json",
        file.to_str().unwrap(),
    ]);
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
    let w = Watch::start(&[
        "--until-ready",
        "--for",
        "30s",
        "--json",
        file.to_str().unwrap(),
    ]);
    let mut seen = Vec::new();
    loop {
        let v = w.next();
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
    let startup_ok = seen
        .iter()
        .position(|s| s == "startup success none")
        .expect("startup success");
    let ready_ok = seen
        .iter()
        .position(|s| s == "readiness success none")
        .expect("readiness success");
    assert!(startup_ok < ready_ok, "{seen:?}");
    assert!(
        seen.contains(&"startup unknown initial".to_string()),
        "{seen:?}"
    );
}

const MANIFEST: &str = r#"# A Deployment with two containers and a sidecar, plus a Service.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
        - name: migrate
          image: example/migrate:1
          command: [/bin/migrate]
      containers:
        - name: app
          image: example/app:1
          ports:
            - name: http
              containerPort: PORT
              protocol: TCP
          resources:
            limits: {cpu: 500m, memory: 128Mi}
          startupProbe:
            tcpSocket:
              port: http
            periodSeconds: 1
            failureThreshold: 30
          readinessProbe:
            httpGet:
              path: /health
              port: http
              httpHeaders:
                - name: X-Probe
                  value: readiness
            periodSeconds: 5
          livenessProbe:
            httpGet:
              path: /ok
              port: PORT
            periodSeconds: 10
            timeoutSeconds: 2
        - name: worker
          image: example/worker:1
          ports:
            - name: metrics
              containerPort: PORT
          env:
            - name: MODE
              value: ready
            - name: NODE
              valueFrom:
                fieldRef: {fieldPath: spec.nodeName}
          readinessProbe:
            exec:
              command: ["/bin/sh", "-c", "test $(MODE) = ready"]
            periodSeconds: 5
          livenessProbe:
            tcpSocket: {port: metrics}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
      targetPort: http
"#;

#[test]
fn watch_manifest_runs_every_containers_probes() {
    let server = TargetServer::start();
    let file = write_file(
        "yaml",
        &MANIFEST.replace("PORT", &server.port().to_string()),
    );
    let mut child = prober()
        .args([
            "watch",
            "--manifest",
            file.to_str().unwrap(),
            "--until-ready",
            "--for",
            "30s",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, HANG);
    let (stdout, stderr) = (out.recv().unwrap(), err.recv().unwrap());
    assert_eq!(status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("kind Service \"web\"): skipped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("web/worker: env[1] NODE: valueFrom is not resolved"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let states: Vec<String> = lines
        .iter()
        .filter(|v| v.get("role").is_some())
        .map(|v| {
            format!(
                "{} {} {}",
                v["target"].as_str().unwrap(),
                v["role"].as_str().unwrap(),
                v["result"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "web/app startup unknown",
        "web/app readiness failure",
        "web/app liveness success",
        "web/app startup success",
        "web/app readiness success",
        "web/worker readiness failure",
        "web/worker liveness success",
        "web/worker readiness success",
    ] {
        assert!(
            states.iter().any(|s| s == want),
            "{want:?} missing from {states:?}"
        );
    }
    let summary = lines.last().unwrap();
    assert_eq!(summary["all_ready"], true);
    let targets: Vec<&str> = summary["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["web/app", "web/worker"]);
    assert!(server.requests() > 0);
}

// ---- watch: bad input -------------------------------------------------------------------

fn assert_bad_file(args: &[&str], text: &str, ext: &str, needles: &[&str]) {
    let file = write_file(ext, text);
    let mut all: Vec<&str> = vec!["watch", "--for", "1s"];
    all.extend_from_slice(args);
    all.push(file.to_str().unwrap());
    let r = run(&all);
    assert_eq!(r.code, 64, "{text}\n{}", r.stderr);
    assert_eq!(r.stdout, "", "nothing runs on bad input");
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("prober: note: "))
        .collect();
    assert_eq!(lines.len(), 1, "one error line: {:?}", r.stderr);
    assert!(
        lines[0].starts_with(&format!("prober: {}: ", file.display())),
        "{}",
        lines[0]
    );
    for n in needles {
        assert!(lines[0].contains(n), "{:?} lacks {n:?}", lines[0]);
    }
}

#[test]
fn bad_watch_files_exit_64_with_a_precise_message() {
    let yaml = |probe: &str| {
        format!("targets:\n  - name: api\n    ports: [{{name: web, containerPort: 8080}}]\n{probe}")
    };
    // Unknown field: its name and its line.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: 80}\n      perodSeconds: 3\n"),
        "yaml",
        &[
            "unknown field `perodSeconds`",
            "targets[0].readinessProbe",
            "line 6 column 7",
        ],
    );
    // Wrong type.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: 80}\n      periodSeconds: often\n"),
        "yaml",
        &[
            "periodSeconds",
            "invalid type: string \"often\", expected an integer",
            "line 6",
        ],
    );
    assert_bad_file(
        &[],
        "targets:\n  - name: [a]\n",
        "yaml",
        &["targets[0].name", "invalid type: sequence", "line 2"],
    );
    // Missing port.
    assert_bad_file(
        &[],
        &yaml("    livenessProbe:\n      tcpSocket: {host: localhost}\n"),
        "yaml",
        &[
            "targets[0].livenessProbe.tcpSocket",
            "missing field `port`",
            "line 5",
        ],
    );
    // Named port not found: the target and the field path.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: http, path: /}\n"),
        "yaml",
        &[
            "target \"api\"",
            "readinessProbe.httpGet.port",
            "named port \"http\" not found (declared: web)",
        ],
    );
    // Threshold rules.
    assert_bad_file(
        &[],
        &yaml("    livenessProbe:\n      tcpSocket: {port: web}\n      successThreshold: 2\n"),
        "yaml",
        &[
            "target \"api\"",
            "livenessProbe.successThreshold",
            "must be 1 for liveness probes (got 2)",
        ],
    );
    assert_bad_file(
        &[],
        &yaml(
            "    startupProbe:\n      tcpSocket: {port: 1}\n      periodSeconds: 1\n      periodMilliseconds: 500\n",
        ),
        "yaml",
        &[
            "startupProbe",
            "periodSeconds or periodMilliseconds, not both",
        ],
    );
    assert_bad_file(&[], "targets: []\n", "yaml", &["empty"]);
    assert_bad_file(&[], "targets: [\n", "yaml", &["line"]);
    // JSON files get serde_json's positions.
    assert_bad_file(
        &[],
        "{\"targets\": [{\"name\": \"a\",\n \"readinessProbe\": {\"tcpSocket\": {\"port\": 1}, \"bogus\": true}}]}",
        "json",
        &["unknown field `bogus`", "line 2"],
    );
    // Manifests: the container and the field path.
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports: [{name: http, containerPort: 80}]\n    readinessProbe: {httpGet: {port: htp}}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &[
            "container p/c",
            "readinessProbe.httpGet.port",
            "named port \"htp\"",
        ],
    );
    let manifest = manifest.replace(
        "httpGet: {port: htp}",
        "httpGet: {port: http}, sucessThreshold: 1",
    );
    assert_bad_file(
        &["--manifest"],
        &manifest,
        "yaml",
        &["unknown field `sucessThreshold`", "line 7"],
    );
}

#[test]
fn unreadable_file_exits_66() {
    let r = run(&["watch", "/no/such/watch-file.yaml"]);
    assert_eq!(r.code, 66, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("prober: cannot read /no/such/watch-file.yaml: "),
        "{}",
        r.stderr
    );
}

// ---- watch: signals ---------------------------------------------------------------------

/// Waits for `/bin/sh -c 'echo $$$$ > FILE; exec ...'` to have written its pid.
fn wait_for_pid(path: &std::path::Path) -> i32 {
    let deadline = Instant::now() + HANG;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if let Some(line) = s.strip_suffix('\n') {
                return line.parse().expect("a pid");
            }
        }
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until process `pid` has ended (gone, or a zombie left to whoever adopted it).
fn assert_process_ends(pid: i32) {
    let deadline = Instant::now() + HANG;
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return,
            Ok(stat) => {
                let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
                if state == Some(Some('Z')) {
                    return;
                }
            }
        }
        assert!(Instant::now() < deadline, "process {pid} outlived prober");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Where a command writes its pid (the file does not exist yet).
fn pid_file() -> TempFile {
    TempFile::new("pid")
}

fn signal_stops_watch_cleanly(sig: i32) {
    let server = TargetServer::start();
    let pid_file = pid_file();
    // A startup probe whose command would run for minutes: it must die with the watch.
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: web\n\
             \x20 readinessProbe: {{tcpSocket: {{port: {}}}}}\n\
             - name: slow\n\
             \x20 startupProbe:\n\
             \x20   exec: {{command: [/bin/sh, -c, 'echo $$$$ > {}; exec /bin/sleep 300']}}\n\
             \x20   timeoutSeconds: 600\n",
            server.port(),
            pid_file.display()
        ),
    );
    let w = Watch::start(&["--json", file.to_str().unwrap()]);
    let v = w.next_state("web", "readiness");
    assert_eq!(v["reason"], "initial");
    let v = w.next_state("web", "readiness");
    assert_eq!(v["result"], "success");
    let pid = wait_for_pid(&pid_file);
    w.signal(sig);
    let (status, rest) = w.wait();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let last: Value = serde_json::from_str(rest.last().expect("a summary line")).unwrap();
    assert!(last.get("summary").is_some(), "{last}");
    assert_eq!(last["summary"][1]["started"], false, "{last}");
    assert_process_ends(pid);
}

#[test]
fn sigterm_stops_watch_cleanly() {
    signal_stops_watch_cleanly(libc::SIGTERM);
}

#[test]
fn sigint_stops_watch_cleanly() {
    signal_stops_watch_cleanly(libc::SIGINT);
}

#[test]
fn sigterm_to_check_kills_its_command_and_ends_by_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let pid_file = pid_file();
    let script = format!("echo $$$$ > {}; exec /bin/sleep 300", pid_file.display());
    let mut child = prober()
        .args(["check", "--timeout", "10m", "--", "/bin/sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = reader(child.stdout.take().unwrap());
    let pid = wait_for_pid(&pid_file);
    // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(r, 0);
    let status = wait_bounded(&mut child, HANG);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_eq!(
        out.recv().unwrap(),
        "",
        "no verdict for an interrupted check"
    );
    assert_process_ends(pid);
}
