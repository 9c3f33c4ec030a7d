//! `--namespaces-of PID` and `namespacesOf:`: commands run inside another process's
//! namespaces, made here by `unshare`. These tests need root (CI runs them as root): without
//! it they fail, saying so, rather than skip.

mod common;

use common::*;
use prober_testkit::unshare::{Namespaced, Options};

fn target(hostname: &str) -> Namespaced {
    Namespaced::start(&Options { hostname: hostname.to_string(), user: false })
}

#[test]
fn check_runs_the_command_in_the_namespaces_of_a_process() {
    let t = target("cli-check");
    let pid = t.pid.to_string();
    let (code, v) = check_json(&["--namespaces-of", &pid, "--", "hostname"]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert_eq!(v["output"], "cli-check\n");
    // The file that only its mount namespace has; on the host the same command fails.
    let marker = t.marker();
    let marker = marker.to_str().unwrap();
    let (code, v) = check_json(&["--namespaces-of", &pid, "--", "cat", marker]);
    assert_eq!((code, v["output"].as_str()), (0, Some("only-inside\n")), "{v}");
    let (code, v) = check_json(&["--", "cat", marker]);
    assert_eq!(
        (code, v["result"].as_str(), v["exit_code"].as_i64()),
        (1, Some("failure"), Some(1))
    );
    // The human line of a failure inside.
    let r = run(&["check", "--namespaces-of", &pid, "--", "sh", "-c", "exit 4"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("failure: command terminated with exit code 4 (exit_code, exit 4, "),
        "{}",
        r.stdout
    );
}

#[test]
fn check_names_a_process_that_is_gone() {
    prober_testkit::unshare::need_root();
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id().to_string();
    gone.wait().unwrap();
    let (code, v) = check_json(&["--namespaces-of", &pid, "--", "true"]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (2, Some("unknown"), Some("spawn"))
    );
    assert_eq!(
        v["message"],
        format!("could not enter the namespaces of process {pid}: no such process")
    );
}

#[test]
fn check_without_the_rights_says_which() {
    let t = target("cli-eperm");
    let pid = t.pid.to_string();
    let exe = env!("CARGO_BIN_EXE_prober");
    // Root without CAP_SYS_ADMIN: the namespace files open, setns is refused.
    let r = run_command(
        Command::new("setpriv").args([
            "--inh-caps=-sys_admin",
            "--bounding-set=-sys_admin",
            exe,
            "check",
            "--namespaces-of",
            &pid,
            "--",
            "true",
        ]),
        None,
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(&format!(
            "unknown: could not enter the namespaces of process {pid}: setns "
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            ": operation not permitted (entering namespaces needs CAP_SYS_ADMIN) (spawn, "
        ),
        "{}",
        r.stdout
    );
    // Another user: not even the namespace files may be opened.
    let r = run_command(
        Command::new("setpriv").args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            exe,
            "check",
            "--namespaces-of",
            &pid,
            "--",
            "true",
        ]),
        None,
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(&format!(
            "unknown: could not enter the namespaces of process {pid}: open /proc/{pid}/"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(": permission denied (spawn, "), "{}", r.stdout);
}

#[test]
fn watch_file_targets_name_the_process() {
    let t = target("cli-watch");
    // One target inside, one on the host, in one file: the same check, two answers.
    let text = format!(
        "targets:\n\
         - name: inside\n  namespacesOf: {pid}\n  readinessProbe:\n    exec: {{command: [sh, -c, 'test \"$$(hostname)\" = cli-watch']}}\n    periodMilliseconds: 100\n\
         - name: host\n  livenessProbe:\n    exec: {{command: [sh, -c, 'test \"$$(hostname)\" = cli-watch']}}\n    periodMilliseconds: 100\n    failureThreshold: 1\n",
        pid = t.pid
    );
    let file = write_file("yaml", &text);
    let mut w = Watch::start(&["--json", file.path()]);
    // Past the initial values (readiness failure, liveness success): inside turns ready, the
    // host's copy of the same check fails with the command's exit code.
    let (mut inside, mut host) = (None, None);
    while inside.is_none() || host.is_none() {
        let v = w.next_json();
        assert!(v.get("summary").is_none(), "watch ended early: {v}");
        match (v["target"].as_str(), v["reason"].as_str()) {
            (Some("inside"), Some(r)) if r != "initial" => inside = Some(v),
            (Some("host"), Some(r)) if r != "initial" => host = Some(v),
            _ => {}
        }
    }
    let (inside, host) = (inside.unwrap(), host.unwrap());
    assert_eq!(inside["result"], "success", "{inside}");
    assert_eq!(
        (host["result"].as_str(), host["reason"].as_str()),
        (Some("failure"), Some("exit_code")),
        "{host}"
    );
    w.stop();
}
