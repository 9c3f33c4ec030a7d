//! Multi-step TCP exchanges on the command line and in watch files (issue 28): repeated
//! `--expect`/`--send` in command-line order, `--send-template`, `--starttls` where it stands,
//! and `tcpSocket.steps`, against the testkit's scripted line server.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;
use prober_testkit::script::{Act, ScriptServer};
use prober_testkit::tls::{TestCa, TlsServerOptions};

fn smtp(ca: &TestCa) -> ScriptServer {
    ScriptServer::start(
        vec![
            Act::say("220 mail.test ESMTP Testfix\r\n"),
            Act::hear("EHLO mail.test"),
            Act::say("250-mail.test\r\n250-STARTTLS\r\n250 SIZE 1000\r\n"),
            Act::hear("STARTTLS"),
            Act::say("220 go ahead\r\n"),
            Act::StartTls,
            Act::hear("EHLO prober"),
            Act::say("250-mail.test\r\n250-AUTH PLAIN\r\n"),
        ],
        Some(TlsServerOptions::new(ca.issue(&["mail.test"]))),
        false,
    )
}

fn ca_file(ca: &TestCa, tag: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-tcp-steps-{}-{tag}", std::process::id()));
    let (file, _) = ca.cert().write_files(&dir, "ca");
    file.to_str().unwrap().to_string()
}

fn heard(s: &ScriptServer, n: usize) -> Vec<String> {
    let lines = s.wait_heard(n, Duration::from_secs(10));
    lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect()
}

#[test]
fn check_runs_steps_in_command_line_order() {
    let ca = TestCa::new("CLI steps CA");
    let ca_file = ca_file(&ca, "check");
    let server = smtp(&ca);
    let target = format!("tcp://127.0.0.1:{}", server.port());
    let (code, v) = check_json(&[
        "--tls-ca",
        &ca_file,
        "--tls-server-name",
        "mail.test",
        "--expect",
        "^220 ([^ ]+) ESMTP",
        "--send-template",
        "EHLO ${1}\\r\\n",
        "--expect",
        "^250-STARTTLS",
        "--send",
        "STARTTLS\\r\\n",
        "--expect",
        "^220",
        "--starttls",
        "--send",
        "EHLO prober\\r\\n",
        "--expect",
        "^250-AUTH",
        &target,
    ]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert_eq!(heard(&server, 3), ["EHLO mail.test\r\n", "STARTTLS\r\n", "EHLO prober\r\n"]);
    assert!(v["output"].as_str().unwrap().ends_with("250-AUTH PLAIN\r\n"), "{v}");

    // A server without STARTTLS: the step that awaits it fails, named, exit 1.
    let plain = ScriptServer::start(
        vec![
            Act::say("220 mail.test ESMTP x\r\n"),
            Act::hear("EHLO x"),
            Act::say("250 SIZE 1\r\n"),
        ],
        None,
        false,
    );
    let target = format!("tcp://127.0.0.1:{}", plain.port());
    let (code, v) = check_json(&[
        "--expect",
        "^220",
        "--send",
        "EHLO x\\r\\n",
        "--expect",
        "^250-STARTTLS",
        &target,
    ]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("body")), "{v}");
    assert_eq!(
        v["message"].as_str().unwrap(),
        "step 3 of 3: no line matched \"^250-STARTTLS\": the peer closed the connection, 12 \
         bytes received in this step: \"250 SIZE 1\\r\\n\""
    );
}

#[test]
fn check_refuses_what_steps_cannot_mean() {
    assert_usage_error(
        &["check", "--send-template", "PONG ${1}\\n", "tcp://127.0.0.1:1"],
        "--send-template must follow an --expect",
    );
    assert_usage_error(
        &["check", "--expect", "a", "--expect", "b", "http://127.0.0.1:1/"],
        "--send, --expect and --send-template apply to tcp:// targets only",
    );
    assert_usage_error(
        &["check", "--expect", "a", "--starttls", "--expect", "b", "--starttls", "tcp://h:1"],
        "more than one STARTTLS step",
    );
}

#[test]
fn watch_file_steps() {
    let ca = TestCa::new("CLI steps watch CA");
    let ca_file = ca_file(&ca, "watch");
    let server = smtp(&ca);
    let file = one_probe_file(
        "mail",
        "readinessProbe",
        &format!(
            "tcpSocket:
        port: {}
        steps:
        - {{expect: '^220 ([^ ]+) ESMTP', sendTemplate: 'EHLO ${{1}}\\r\\n'}}
        - {{expect: '^250-STARTTLS', send: 'STARTTLS\\r\\n'}}
        - {{expect: '^220', starttls: true}}
        - {{send: 'EHLO prober\\r\\n'}}
        - {{expect: '^250-AUTH'}}",
            server.port()
        ),
        &[&format!("tls: {{caFile: {ca_file}, serverName: mail.test}}"), "periodMilliseconds: 100"],
    );
    let r = run(&["watch", "--until-ready", "--for", "10s", file.path()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(heard(&server, 3)[..3], ["EHLO mail.test\r\n", "STARTTLS\r\n", "EHLO prober\r\n"]);

    let bad = |steps: &str, needle: &str| {
        assert_bad_file(
            &[],
            &format!(
                "targets:\n- name: m\n  readinessProbe:\n    tcpSocket: {{port: 25, {steps}}}\n"
            ),
            "yaml",
            &[needle],
        );
    };
    bad(
        "send: x, steps: [{expect: a}]",
        "readinessProbe.tcpSocket.steps: TCP steps replace the single send, expect and STARTTLS",
    );
    bad(
        "steps: [{sendTemplate: 'PONG ${1}'}]",
        "readinessProbe.tcpSocket.steps[0].sendTemplate: needs expect on the same step",
    );
    bad(
        "steps: [{expect: a, send: b, sendTemplate: c}]",
        "steps[0]: give send or sendTemplate, not both",
    );
    bad(
        "steps: [{expect: '('}]",
        "readinessProbe.tcpSocket.steps[0].expect: invalid regular expression",
    );
    bad("steps: [{expekt: a}]", "expekt");
}
