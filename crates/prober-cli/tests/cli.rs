//! The `prober` binary against `prober_testkit::TargetServer`: exit statuses, JSON fields,
//! headers, exec, timeouts, `watch` on files and manifests, bad input, signals; HTTPS against
//! `prober_testkit::tls::TlsTargetServer`, gRPC against grpc-go's health server (built with
//! `go build`, see `crates/prober-grpc/tests/support`: without Go those tests fail, never skip).
//!
//! No pass condition depends on wall-clock time, except generous "did not hang" bounds.

// Skipped by rustfmt: `cargo fmt -p prober-cli` must not reformat prober-grpc's file.
#[rustfmt::skip]
#[path = "../../prober-grpc/tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use prober_testkit::TargetServer;
use prober_testkit::tls::{Issued, TestCa, TlsServerOptions, TlsTargetServer, TlsVersions};
use serde_json::Value;
use support::HealthServer;

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
    assert_eq!(lines.len(), 1, "{args:?}: one line on stderr: {:?}", r.stderr);
    assert!(lines[0].starts_with("prober: "), "{args:?}: {}", lines[0]);
    assert!(lines[0].contains(needle), "{args:?}: {:?} lacks {needle:?}", lines[0]);
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
    assert_eq!(v["message"], "Probe terminated redirects, Response body: moved");
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
    assert!(v["message"].as_str().unwrap().contains("/no/such/binary"), "{v}");
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
    assert_eq!(v["message"], format!("dial tcp 127.0.0.1:{port}: connect: connection refused"));
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
        r.stdout.starts_with("failure: HTTP probe failed with statuscode: 500 (status, HTTP 500, "),
        "{}",
        r.stdout
    );
    let r = run(&["check", "--", "/bin/sh", "-c", "exit 3"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("failure: command terminated with exit code 3 (exit_code, exit 3, "),
        "{}",
        r.stdout
    );
}

// ---- check: usage errors ----------------------------------------------------------------

#[test]
fn usage_errors_exit_64_with_one_line() {
    assert_usage_error(&["check", "--bogus", "http://127.0.0.1:1/"], "unknown option '--bogus'");
    assert_usage_error(&["check", "127.0.0.1:80"], "bad target '127.0.0.1:80'");
    assert_usage_error(&["check", "ftp://127.0.0.1/"], "unsupported scheme 'ftp'");
    assert_usage_error(&["check", "tcp://127.0.0.1"], "missing port");
    assert_usage_error(&["check", "--timeout", "5", "http://127.0.0.1:1/"], "bad duration '5'");
    assert_usage_error(
        &["check", "--timeout", "soon", "http://127.0.0.1:1/"],
        "bad duration 'soon'",
    );
    assert_usage_error(&["check"], "missing TARGET");
    assert_usage_error(&["check", "--json"], "missing TARGET");
    assert_usage_error(&["check", "--"], "missing command");
    assert_usage_error(&["check", "-H", "NoColon", "http://127.0.0.1:1/"], "bad header 'NoColon'");
    assert_usage_error(
        &["check", "-H", "Bad Name: v", "http://127.0.0.1:1/"],
        "invalid HTTP header name",
    );
    assert_usage_error(&["check", "-H", "X: y", "tcp://127.0.0.1:1"], "applies to http");
    assert_usage_error(
        &["check", "--redirects", "all", "http://127.0.0.1:1/"],
        "bad --redirects 'all'",
    );
    assert_usage_error(&["check", "--env", "NOEQUALS", "--", "true"], "bad --env 'NOEQUALS'");
    assert_usage_error(&["frobnicate"], "unknown command 'frobnicate'");
    assert_usage_error(&[], "missing command");
    assert_usage_error(&["watch"], "missing FILE");
    assert_usage_error(&["watch", "--for", "1", "f.yaml"], "bad duration '1'");
    assert_usage_error(&["watch", "--until", "f.yaml"], "unknown option '--until'");
}

#[test]
fn help_and_version() {
    for args in [&["--help"][..], &["check", "--help"], &["watch", "--help"], &["help", "check"]] {
        let r = run(args);
        assert_eq!(r.code, 0, "{args:?}");
        assert!(r.stdout.contains("Usage"), "{args:?}: {}", r.stdout);
        assert_eq!(r.stderr, "");
    }
    assert!(run(&["check", "--help"]).stdout.contains("--timeout DUR"));
    assert!(run(&["check", "--help"]).stdout.contains("grpc://HOST:PORT[/SERVICE]"));
    assert!(run(&["check", "--help"]).stdout.contains("--tls-ca FILE"));
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
    let (code, v) = check_json(&["-H", "User-Agent: my-agent/2", "--header=X-Probe: yes", &url]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("User-Agent: my-agent/2\n"), "{out}");
    assert!(!out.contains("kube-probe"), "{out}");
    assert!(out.contains("X-Probe: yes\n"), "{out}");
    let (_, v) = check_json(&["-H", "Accept: text/plain", &url]);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("Accept: text/plain\n") && !out.contains("*/*"), "{out}");
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
    let (code, v) =
        check_json(&["--env", "GREETING=hi", "--", "/bin/sh", "-c", "echo $(GREETING)"]);
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
fn exec_command_gets_no_descriptor_of_the_shell() {
    // The shell opens descriptor 7 (not close-on-exec: a redirection meant to be inherited)
    // and becomes `prober`, which must not hand it on to the command.
    let script = r#"exec 7</etc/hostname && exec "$0" check --json -- ls -ln /proc/self/fd/"#;
    let mut child = Command::new("/bin/sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_prober")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, HANG);
    let r = Run {
        code: status.code().unwrap(),
        stdout: out.recv().unwrap(),
        stderr: err.recv().unwrap(),
    };
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let v = json_line(&r);
    assert_eq!(v["result"], "success", "{v}");
    let listing = v["output"].as_str().unwrap();
    assert!(listing.contains(" 0 -> /dev/null"), "{listing}");
    for line in listing.lines().filter(|l| l.contains(" -> ")) {
        let (left, target) = line.split_once(" -> ").unwrap();
        let fd: u32 = left.split_whitespace().last().unwrap().parse().unwrap();
        assert!(
            !target.ends_with("/hostname"),
            "the shell's descriptor reached the command: {line}"
        );
        // Beyond stdin, stdout and stderr only ls's own directory descriptor.
        assert!(fd < 3 || (target.starts_with("/proc/") && target.ends_with("/fd")), "{line}");
    }
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
        let mut cmd = prober();
        // A watch started by a user at a terminal has SIGINT at its default disposition. The
        // tests may themselves run with SIGINT ignored (a background job of a non-interactive
        // shell, which the child would inherit and, as shells expect, keep ignoring): give the
        // child the default, so that what is tested does not depend on how the tests started.
        // SAFETY: signal(2) is async-signal-safe, and the closure touches nothing else.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd
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
        let line = self.lines.recv_timeout(HANG).expect("prober watch printed no line in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
    }

    /// The next state line of `target` and `role`, skipping others.
    fn next_state(&self, target: &str, role: &str) -> Value {
        loop {
            let v = self.next();
            assert!(v.get("summary").is_none(), "watch ended before the expected state: {v}");
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
    let w = Watch::start(&["--until-ready", "--for", "30s", "--json", file.to_str().unwrap()]);
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
    let startup_ok =
        seen.iter().position(|s| s == "startup success none").expect("startup success");
    let ready_ok =
        seen.iter().position(|s| s == "readiness success none").expect("readiness success");
    assert!(startup_ok < ready_ok, "{seen:?}");
    assert!(seen.contains(&"startup unknown initial".to_string()), "{seen:?}");
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
    let file = write_file("yaml", &MANIFEST.replace("PORT", &server.port().to_string()));
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
    assert!(stderr.contains("kind Service \"web\"): skipped"), "{stderr}");
    assert!(stderr.contains("web/worker: env[1] NODE: valueFrom is not resolved"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
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
        assert!(states.iter().any(|s| s == want), "{want:?} missing from {states:?}");
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
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.starts_with("prober: note: ")).collect();
    assert_eq!(lines.len(), 1, "one error line: {:?}", r.stderr);
    assert!(lines[0].starts_with(&format!("prober: {}: ", file.display())), "{}", lines[0]);
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
        &["unknown field `perodSeconds`", "targets[0].readinessProbe", "line 6 column 7"],
    );
    // Wrong type.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: 80}\n      periodSeconds: often\n"),
        "yaml",
        &["periodSeconds", "invalid type: string \"often\", expected an integer", "line 6"],
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
        &["targets[0].livenessProbe.tcpSocket", "missing field `port`", "line 5"],
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
        &["startupProbe", "periodSeconds or periodMilliseconds, not both"],
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
        &["container p/c", "readinessProbe.httpGet.port", "named port \"htp\""],
    );
    let manifest =
        manifest.replace("httpGet: {port: htp}", "httpGet: {port: http}, sucessThreshold: 1");
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
    assert!(r.stderr.starts_with("prober: cannot read /no/such/watch-file.yaml: "), "{}", r.stderr);
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
    assert_eq!(out.recv().unwrap(), "", "no verdict for an interrupted check");
    assert_process_ends(pid);
}

// ---- TLS fixtures -----------------------------------------------------------------------

/// `not_after` of the server certificates below: 2031-02-03T00:00:00Z.
const CERT_NOT_AFTER: i64 = 1_927_843_200;

/// A directory under the tests' temporary directory, removed with its files when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let n = FILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("cli-{}-{n}-{tag}", std::process::id());
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA, a server certificate it signed (expiring at [`CERT_NOT_AFTER`]) and another CA, as
/// files: `ca.crt`, `server.crt`, `server.key`, `other-ca.crt`.
struct Pki {
    dir: TempDir,
    server: Issued,
    ca_file: String,
    other_ca_file: String,
    cert: String,
    key: String,
}

fn pki(tag: &str, names: &[&str]) -> Pki {
    let dir = TempDir::new(tag);
    let ca = TestCa::new("prober-cli test CA");
    let server = ca.issue_expiring(names, (2031, 2, 3));
    let (ca_file, _) = ca.cert().write_files(&dir.0, "ca");
    let (cert, key) = server.write_files(&dir.0, "server");
    let (other_ca_file, _) = TestCa::new("another CA").cert().write_files(&dir.0, "other-ca");
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    Pki {
        ca_file: s(ca_file),
        other_ca_file: s(other_ca_file),
        cert: s(cert),
        key: s(key),
        dir,
        server,
    }
}

fn grpc_target(port: u16, service: &str) -> String {
    format!("grpc://127.0.0.1:{port}/{service}")
}

// ---- check: gRPC ------------------------------------------------------------------------

#[test]
fn check_grpc_serving_exits_0() {
    let s = HealthServer::start(&["-status", "my.pkg.Svc=SERVING"]);
    for target in [
        format!("grpc://127.0.0.1:{}", s.port()),
        grpc_target(s.port(), ""),
        grpc_target(s.port(), "my.pkg.Svc"),
    ] {
        let (code, v) = check_json(&[&target]);
        assert_eq!(code, 0, "{target}: {v}");
        assert_common_fields(&v);
        assert_eq!(v["result"], "success");
        assert_eq!(v["reason"], "none");
        // The kubelet's gRPC prober: no message, output "service healthy".
        assert_eq!(v["message"], "");
        assert_eq!(v["output"], "service healthy");
        assert_eq!(v["output_total"], 15);
        assert_eq!(v["http_status"], 200);
        assert!(v["timings"]["connect_ms"].is_number(), "{v}");
        assert!(v["timings"].get("tls_ms").is_none(), "{v}");
        assert!(v.get("cert_not_after").is_none(), "{v}");
    }
    let r = run(&["check", &grpc_target(s.port(), "my.pkg.Svc")]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("success (HTTP 200, "), "{}", r.stdout);
}

#[test]
fn check_grpc_not_serving_exits_1() {
    let s = HealthServer::start(&["-status", "down=NOT_SERVING"]);
    let (code, v) = check_json(&[&grpc_target(s.port(), "down")]);
    assert_eq!(code, 1, "{v}");
    assert_common_fields(&v);
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "status");
    assert_eq!(v["message"], "service unhealthy (responded with \"NOT_SERVING\")");
    assert_eq!(v["output"], "");
    let r = run(&["check", &grpc_target(s.port(), "down")]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with(
            "failure: service unhealthy (responded with \"NOT_SERVING\") (status, HTTP 200, "
        ),
        "{}",
        r.stdout
    );
    // grpc-go answers NotFound for a service it does not know.
    let (code, v) = check_json(&[&grpc_target(s.port(), "no.such.Service")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        v["message"],
        "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"
    );
}

#[test]
fn check_grpc_closed_port_exits_1() {
    let port = prober_testkit::closed_port();
    let (code, v) = check_json(&[&grpc_target(port, "")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("refused")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        format!(
            "error: failed to connect service at \"127.0.0.1:{port}\": dial tcp 127.0.0.1:{port}: \
             connect: connection refused"
        )
    );
}

#[test]
fn check_grpc_over_tls() {
    let p = pki("grpc-tls", &["127.0.0.1", "localhost"]);
    let s = HealthServer::start(&["-tls-cert", &p.cert, "-tls-key", &p.key]);
    let target = grpc_target(s.port(), "");

    // --tls: the kubelet's TLS (KEP-4939), no verification.
    let (code, v) = check_json(&["--tls", &target]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"], "service healthy");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
    assert!(v["timings"]["tls_ms"].is_number(), "{v}");

    // Without --tls the probe is plaintext h2c, which a TLS server does not speak.
    let (code, v) = check_json(&["--timeout", "2s", &target]);
    assert_eq!(code, 1, "{v}");
    let prefix = format!("error: failed to connect service at \"127.0.0.1:{}\": ", s.port());
    assert!(v["message"].as_str().unwrap().starts_with(&prefix), "{v}");

    // Verified against its CA; TLS 1.3 at least.
    let (code, v) =
        check_json(&["--tls", "--tls-ca", &p.ca_file, "--tls-min-version", "1.3", &target]);
    assert_eq!(code, 0, "{v}");

    // Verified against another CA: failure, reason tls, and the expiry is still reported.
    let (code, v) = check_json(&["--tls", "--tls-ca", &p.other_ca_file, &target]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["reason"], "tls");
    assert_eq!(v["message"], format!("{prefix}tls: invalid peer certificate: UnknownIssuer"));
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
}

#[test]
fn check_grpc_mutual_tls_with_tls_cert_and_key() {
    let p = pki("grpc-mtls", &["127.0.0.1"]);
    let clients = TestCa::new("client CA");
    let (client_ca, _) = clients.cert().write_files(&p.dir.0, "client-ca");
    let (cert, key) = clients.issue_client("probe").write_files(&p.dir.0, "client");
    let s = HealthServer::start(&[
        "-tls-cert",
        &p.cert,
        "-tls-key",
        &p.key,
        "-client-ca",
        client_ca.to_str().unwrap(),
    ]);
    let target = grpc_target(s.port(), "");
    let (code, v) = check_json(&[
        "--tls",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        &target,
    ]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = check_json(&["--tls", &target]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("tls: received fatal alert"), "{v}");
}

// ---- check: HTTPS -----------------------------------------------------------------------

#[test]
fn check_https_does_not_verify_by_default() {
    let p = pki("https-default", &["127.0.0.1"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&[&url]);
    assert_eq!(code, 0, "{v}");
    assert_common_fields(&v);
    assert_eq!(v["result"], "success");
    assert_eq!(v["output"], "ok");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
    assert!(v["timings"]["tls_ms"].is_number(), "{v}");
    // --tls changes nothing for https://.
    let (code, v) = check_json(&["--tls", &url]);
    assert_eq!(code, 0, "{v}");
    // No SNI for an IP address.
    let hs = server.wait_for_handshakes(2, HANG);
    assert!(hs.iter().all(|h| h.sni.is_none() && h.error.is_none()), "{hs:?}");
    // A failure over TLS still reports the certificate.
    server.backend().set_healthy(false);
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, v["http_status"].as_u64()), (1, Some(503)), "{v}");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
}

#[test]
fn check_https_verifies_with_tls_ca() {
    let p = pki("https-ca", &["127.0.0.1"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, &url]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);

    let (code, v) = check_json(&["--tls-ca", &p.other_ca_file, &url]);
    assert_eq!(code, 1, "{v}");
    assert_eq!((v["result"].as_str(), v["reason"].as_str()), (Some("failure"), Some("tls")), "{v}");
    assert_eq!(
        v["message"],
        format!("Get \"{url}\": tls: invalid peer certificate: UnknownIssuer")
    );
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);

    // The system's roots do not know the test CA (or there are none here): reason tls either way.
    let (code, v) = check_json(&["--tls-verify", &url]);
    assert_ne!(code, 0, "{v}");
    assert_eq!(v["reason"], "tls", "{v}");

    // A CA file that cannot be read: the probe cannot run (unknown, 2).
    let (code, v) = check_json(&["--tls-ca", "/no/such/ca.pem", &url]);
    assert_eq!(code, 2, "{v}");
    assert_eq!((v["result"].as_str(), v["reason"].as_str()), (Some("unknown"), Some("tls")), "{v}");
    assert_eq!(
        v["message"],
        "TLS setup failed: cannot read CA file \"/no/such/ca.pem\": no such file or directory"
    );
}

#[test]
fn check_https_tls_server_name() {
    // A certificate for a name only: verification against 127.0.0.1 fails, against the name
    // given with --tls-server-name it passes, and that name is sent as SNI.
    let p = pki("https-sni", &["svc.test"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, &url]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("tls: invalid peer certificate"), "{v}");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, "--tls-server-name", "svc.test", &url]);
    assert_eq!(code, 0, "{v}");
    // (The failed handshake may be recorded after the good one: look for the good one.)
    let hs = server.wait_for_handshakes(2, HANG);
    assert!(hs.iter().any(|h| h.sni.as_deref() == Some("svc.test") && h.error.is_none()), "{hs:?}");
}

#[test]
fn check_https_tls_min_version() {
    let p = pki("https-min", &["127.0.0.1"]);
    let mut opts = TlsServerOptions::new(p.server.clone());
    opts.versions = TlsVersions::Tls12Only;
    let server = TlsTargetServer::start(opts);
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-min-version", "1.2", &url]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = check_json(&["--tls-min-version", "1.3", &url]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
}

#[test]
fn tls_and_grpc_usage_errors_exit_64() {
    let cases: &[(&[&str], &str)] = &[
        (&["grpc://127.0.0.1"], "missing port (expected grpc://HOST:PORT)"),
        (&["grpc://127.0.0.1:0/svc"], "invalid port 0"),
        (&["-H", "X: y", "grpc://127.0.0.1:1"], "applies to http"),
        (&["--tls", "tcp://127.0.0.1:1"], "--tls applies to https:// and grpc:// targets only"),
        (
            &["--tls-verify", "--", "true"],
            "--tls-verify applies to https:// and grpc:// targets only",
        ),
        (
            &["--tls", "http://127.0.0.1:1/"],
            "--tls applies to https:// and grpc:// targets, not http://",
        ),
        (&["--tls-ca", "ca.pem", "http://127.0.0.1:1/"], "not http://"),
        (&["--tls-ca", "ca.pem", "grpc://127.0.0.1:1"], "--tls-ca needs --tls on grpc:// targets"),
        (
            &["--tls", "--tls-cert", "c.pem", "grpc://127.0.0.1:1"],
            "--tls-cert needs --tls-key (give both or neither)",
        ),
        (
            &["--tls-key", "k.pem", "https://127.0.0.1:1/"],
            "--tls-key needs --tls-cert (give both or neither)",
        ),
        (
            &["--tls-min-version", "1.0", "https://127.0.0.1:1/"],
            "bad --tls-min-version '1.0' (expected 1.2 or 1.3)",
        ),
        (
            &["--tls-server-name", "not a name", "https://127.0.0.1:1/"],
            "invalid server name \"not a name\"",
        ),
        (&["https://127.0.0.1:1/", "--tls-ca"], "option '--tls-ca' needs a value"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        assert_usage_error(&all, needle);
    }
}

// ---- watch: gRPC and HTTPS --------------------------------------------------------------

/// The state lines of a finished `watch --json` run as `TARGET ROLE RESULT`, and the lines.
fn states_of(stdout: &str) -> (Vec<String>, Vec<Value>) {
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let states = lines
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
    (states, lines)
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
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: rpc\n\
             \x20 livenessProbe:\n\
             \x20   grpc: {{port: {}, service: down}}\n\
             \x20   periodMilliseconds: 100\n\
             \x20   failureThreshold: 1\n",
            s.port()
        ),
    );
    let w = Watch::start(&["--for", "30s", "--json", file.to_str().unwrap()]);
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
    w.signal(libc::SIGTERM);
    let (status, _) = w.wait();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn watch_manifest_with_grpc_and_https_probes() {
    let p = pki("manifest", &["127.0.0.1"]);
    let plain = HealthServer::start(&[]);
    let tls = HealthServer::start(&["-tls-cert", &p.cert, "-tls-key", &p.key]);
    let web = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let manifest = format!(
        "apiVersion: v1\n\
         kind: Pod\n\
         metadata: {{name: api}}\n\
         spec:\n\
         \x20 containers:\n\
         \x20 - name: server\n\
         \x20   image: example/api:1\n\
         \x20   ports:\n\
         \x20   - {{name: grpc, containerPort: {grpc}}}\n\
         \x20   readinessProbe:\n\
         \x20     grpc: {{port: {grpc}}}\n\
         \x20     periodSeconds: 1\n\
         \x20 - name: web\n\
         \x20   image: example/web:1\n\
         \x20   ports:\n\
         \x20   - {{name: https, containerPort: {https}}}\n\
         \x20   readinessProbe:\n\
         \x20     httpGet: {{path: /health, port: https, scheme: HTTPS}}\n\
         \x20 - name: secure\n\
         \x20   image: example/api:1\n\
         \x20   startupProbe:\n\
         \x20     grpc: {{port: {tls}, mode: TLS}}\n\
         \x20     periodSeconds: 1\n",
        grpc = plain.port(),
        https = web.port(),
        tls = tls.port(),
    );
    let file = write_file("yaml", &manifest);
    let r = run(&[
        "watch",
        "--manifest",
        file.to_str().unwrap(),
        "--until-ready",
        "--for",
        "30s",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let (states, _) = states_of(&r.stdout);
    for want in
        ["api/server readiness success", "api/web readiness success", "api/secure startup success"]
    {
        assert!(states.iter().any(|s| s == want), "{want:?} missing from {states:?}");
    }
    assert!(web.backend().requests() > 0);
}

#[test]
fn bad_grpc_and_tls_fields_exit_64_with_a_precise_message() {
    // Kubernetes does not allow named ports for gRPC probes.
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports: [{name: grpc, containerPort: 50051}]\n    livenessProbe: {grpc: {port: grpc}}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &["container p/c: livenessProbe.grpc.port: named port \"grpc\" is not allowed for gRPC \
             probes (Kubernetes requires a port number here; write its number, 50051)"],
    );
    let yaml = |probe: &str| format!("targets:\n  - name: api\n    readinessProbe:\n{probe}");
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1, mode: Secure}\n"),
        "yaml",
        &["target \"api\"", "readinessProbe.grpc.mode: expected Plaintext or TLS (got \"Secure\")"],
    );
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1, serivce: x}\n"),
        "yaml",
        &["unknown field `serivce`", "line 4"],
    );
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1}\n      tls: {caFile: ca.pem}\n"),
        "yaml",
        &[
            "readinessProbe.tls: applies to httpGet with scheme HTTPS and to grpc with mode TLS only",
        ],
    );
    assert_bad_file(
        &[],
        &yaml("      tcpSocket: {port: 1}\n      tls: {verify: true}\n"),
        "yaml",
        &["readinessProbe.tls: applies to"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {certFile: c.pem}\n"),
        "yaml",
        &["readinessProbe.tls: certFile needs keyFile (give both or neither)"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {minVersion: 1.1}\n"),
        "yaml",
        &["readinessProbe.tls.minVersion: expected 1.2 or 1.3 (got \"1.1\")"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {verify: yes-please}\n"),
        "yaml",
        &["tls.verify", "invalid type", "line 5"],
    );
}

#[test]
fn watch_notes_unreadable_tls_files() {
    let file = write_file(
        "yaml",
        "targets:\n\
         - name: web\n\
         \x20 readinessProbe:\n\
         \x20   httpGet: {port: 1, scheme: HTTPS}\n\
         \x20   tls: {caFile: /no/such/ca.pem}\n",
    );
    let r = run(&["watch", "--for", "200ms", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "prober: note: {}: target \"web\": readinessProbe.tls.caFile: cannot read \
             /no/such/ca.pem: no such file or directory; the probe's runs are unknown (never \
             published) until it can be read\n",
            file.display()
        )
    );
}
