//! Hostile configuration and spec input for the `prober` binary: hosts that are not hosts,
//! forged `Host` headers, oversized and over-deep watch files and manifests, many targets,
//! and names and messages that try to forge output lines or reach the terminal.
//!
//! No pass condition depends on wall-clock time, except generous "did not hang" bounds.

mod common;

use common::*;

// ---- hosts --------------------------------------------------------------------------------

#[test]
fn watch_refuses_hosts_that_are_not_hosts() {
    // Before: `httpGet.host: "127.0.0.1/x"` made the URL http://127.0.0.1/x:PORT/, which probes
    // port 80 and can report Success from whatever listens there.
    for host in ["127.0.0.1/x", "a?b", "a#b", "a b", "user@evil", "127.0.0.1:81", "caf\u{e9}"] {
        let yaml = |probe: &str| format!("targets:\n- name: t\n  readinessProbe:\n    {probe}\n");
        let h = serde_json::to_string(host).unwrap();
        assert_bad_file(
            &[],
            &yaml(&format!("httpGet: {{host: {h}, port: 8080, path: /healthz}}")),
            "yaml",
            &["target \"t\": readinessProbe.httpGet.host: invalid host", &format!("{host:?}")],
        );
        assert_bad_file(
            &[],
            &yaml(&format!("tcpSocket: {{host: {h}, port: 8080}}")),
            "yaml",
            &["readinessProbe.tcpSocket.host: invalid host"],
        );
        assert_bad_file(
            &[],
            &yaml(&format!("grpc: {{host: {h}, port: 8080}}")),
            "yaml",
            &["readinessProbe.grpc.host: invalid host"],
        );
        // Also the default host given on the command line.
        // (A host with a port is told to use --port.)
        let r = run(&["watch", "--host", host, "-"]);
        assert_eq!(r.code, 64, "{}", r.stderr);
        let want = if host.ends_with(":81") { "has a port" } else { "--host: invalid host" };
        assert!(r.stderr.contains(want), "{}", r.stderr);
    }
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    livenessProbe:\n      httpGet: {host: '10.0.0.1/x?y', port: 8080}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &["container p/c: livenessProbe.httpGet.host: invalid host \"10.0.0.1/x?y\""],
    );
}

#[test]
fn watch_probes_the_port_of_a_valid_host() {
    // The same fields with a real host reach the server on the given port (IPv4, and IPv6 in
    // brackets or not): the refusal above is not a refusal of every host.
    let server = TargetServer::start();
    let text = format!(
        "targets:\n\
         - name: a\n  readinessProbe:\n    httpGet: {{host: 127.0.0.1, port: {p}, path: /ok}}\n    failureThreshold: 1\n\
         - name: b\n  readinessProbe:\n    httpGet: {{host: localhost, port: {p}, path: /ok}}\n    failureThreshold: 1\n",
        p = server.port()
    );
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("summary: a started=yes ready=yes"), "{}", r.stdout);
    assert!(r.stdout.contains("summary: b started=yes ready=yes"), "{}", r.stdout);
}

#[test]
fn host_headers_must_be_host_and_port() {
    let server = TargetServer::start();
    let url = server.url("/echo/host");
    for bad in ["a b", "a\tb", "evil/x?y#z", "user@evil", "caf\u{e9}.example", "h:0", "[::1"] {
        let header = format!("Host: {bad}");
        let r = run(&["check", "-H", &header, &url]);
        assert_eq!(r.code, 64, "{bad:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, "");
        assert!(
            r.stderr.starts_with("prober: bad header: invalid value ")
                && r.stderr.contains("for HTTP header \\\"Host\\\"")
                    | r.stderr.contains("for HTTP header \"Host\""),
            "{bad:?}: {}",
            r.stderr
        );
        // The same value in a watch file's httpHeaders.
        let yaml = format!(
            "targets:\n- name: t\n  readinessProbe:\n    httpGet:\n      port: {}\n      httpHeaders: [{{name: host, value: {}}}]\n",
            server.port(),
            serde_json::to_string(bad).unwrap()
        );
        assert_bad_file(
            &[],
            &yaml,
            "yaml",
            &["readinessProbe.httpGet.httpHeaders[0]: invalid value", "\"Host\""],
        );
    }
    // A valid virtual host (with a port) is sent as given.
    let r = run(&[
        "check",
        "-H",
        "Host: vhost.example:8080",
        &server.url("/host-must-be/vhost.example/x"),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("success"), "{}", r.stdout);
}

// ---- loading ------------------------------------------------------------------------------

const LIMIT: u64 = 64 << 20;

#[test]
fn oversized_input_is_refused_before_it_is_read() {
    // A sparse file one byte over the limit: refused by its size, nothing parsed.
    let file = TempFile::new("yaml");
    std::fs::File::create(&file.0).unwrap().set_len(LIMIT + 1).unwrap();
    for args in [vec!["watch"], vec!["watch", "--manifest"]] {
        let mut all = args.clone();
        all.push(file.path());
        let r = run(&all);
        assert_eq!(r.code, 64, "{}", r.stderr);
        assert_eq!(
            r.stderr.trim_end(),
            format!(
                "prober: {}: larger than 64 MiB, the limit for watch files and manifests",
                file.path()
            )
        );
    }
    // Standard input: refused once the limit is crossed.
    let mut text = b"targets:\n- name: t\n  readinessProbe: {tcpSocket: {port: 1}}\n".to_vec();
    text.resize(LIMIT as usize + 1, b' ');
    let r = run_with_stdin(&["watch", "-"], text);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        r.stderr.trim_end(),
        "prober: -: larger than 64 MiB, the limit for watch files and manifests"
    );
    // Exactly at the limit is still read (and here refused only for what it says).
    let mut text = b"targets: []\n".to_vec();
    text.resize(LIMIT as usize, b'\n');
    let r = run_with_stdin(&["watch", "-"], text);
    assert_eq!(r.code, 64);
    assert_eq!(r.stderr.trim_end(), "prober: -: targets: the list is empty");
}

#[test]
fn deep_nesting_is_refused_before_parsing() {
    let deep = 100_000;
    let flow = format!("targets: {}{}\n", "[".repeat(deep), "]".repeat(deep));
    let needle = "line 1: nested deeper than 128 levels (the limit for watch files and manifests)";
    assert_bad_file(&[], &flow, "yaml", &[needle]);
    assert_bad_file(&["--manifest"], &flow, "yaml", &[needle]);
    // JSON: the same limit (JSON is read by the same walk; valueFrom is an untyped field that
    // serde_json would skip at any depth).
    let json = format!(
        "{{\"targets\": [{{\"name\": \"t\", \"env\": [{{\"name\": \"A\", \"valueFrom\": {}{}}}]}}]}}\n",
        "[".repeat(deep),
        "]".repeat(deep)
    );
    assert_bad_file(&[], &json, "json", &[needle]);
    // Block nesting, by indentation.
    let block: String = (0..200).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
    assert_bad_file(&[], &block, "yaml", &["line 129: nested deeper than 128 levels"]);
    let seqs = format!("targets:\n{}x\n", "- ".repeat(300));
    assert_bad_file(&[], &seqs, "yaml", &["line 2: nested deeper than 128 levels"]);
}

#[test]
fn nesting_behind_tags_and_anchors_is_refused_at_the_limit() {
    // Before: a textual pre-check missed a `[` after a tag or an anchor, and libyaml scanned
    // all 25,000 levels (7-10 s) before serde_norway refused them as "recursion limit
    // exceeded". The limit is now judged on the parser's events, which stop at level 129.
    let needle = "line 2: nested deeper than 128 levels (the limit for watch files and manifests)";
    for prefix in ["!t [", "&a [", "!!seq [", "&b !t ["] {
        let levels = 25_000;
        let deep = format!(
            "targets:
- {}1{}
",
            prefix.repeat(levels),
            "]".repeat(levels)
        );
        assert_bad_file(&[], &deep, "yaml", &[needle]);
        let pod = format!(
            "kind: Pod\nmetadata: {{name: p}}\nspec: {}1{}\n",
            prefix.replace('[', "{x: ").repeat(levels),
            "}".repeat(levels)
        );
        assert_bad_file(&["--manifest"], &pod, "yaml", &["line 3: nested deeper than 128 levels"]);
    }
}

/// Runs `prober ARGS` with its address space limited to 2 GiB, as a container's memory limit
/// would: an unbounded allocation aborts the process instead of growing for minutes. Under a
/// runner (`PROBER_TEST_RUNNER`, qemu in ci/arm64.sh) the limit is 8 GiB, which the runner's
/// own reservations fit in; the files below would ask for about 100 GB.
fn run_in_2_gib(args: &[&str]) -> Run {
    let program = prober();
    let under_runner = std::env::var_os("PROBER_TEST_RUNNER").is_some_and(|r| !r.is_empty());
    let kib = if under_runner { 8 << 20 } else { 2 << 20 };
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\"")).arg(program.get_program());
    cmd.args(program.get_args());
    cmd.args(args);
    run_command(&mut cmd, None)
}

#[test]
fn aliases_cannot_multiply_a_small_file() {
    // Before: 1,000 targets whose `env` aliases one list of 1,000 aliases of a 100 KB string
    // (a 158 KB file) asked for about 100 GB, and under a memory limit the process aborted
    // ("memory allocation failed", exit 134).
    let big = "x".repeat(100_000);
    let list =
        format!("{{name: A, value: &s {big}}}, {}", vec!["{name: A, value: *s}"; 999].join(", "));
    let exec = "{exec: {command: [true]}}";
    let mut watch =
        format!("targets:\n- name: t0\n  env: &env [{list}]\n  readinessProbe: {exec}\n");
    let mut pod = format!(
        "kind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: c0\n    env: &env [{list}]\n    livenessProbe: {exec}\n"
    );
    for i in 1..1000 {
        watch.push_str(&format!("- name: t{i}\n  env: *env\n  readinessProbe: {exec}\n"));
        pod.push_str(&format!("  - name: c{i}\n    env: *env\n    livenessProbe: {exec}\n"));
    }
    for (args, text, line) in [(vec![], &watch, 3), (vec!["--manifest"], &pod, 6)] {
        assert!(text.len() < 200_000, "{}", text.len());
        let file = write_file("yaml", text);
        let mut all = vec!["watch", "--for", "1s"];
        all.extend_from_slice(&args);
        all.push(file.path());
        let r = run_in_2_gib(&all);
        assert_eq!(r.code, 64, "stderr: {}", r.stderr);
        let want = format!(
            "prober: {}: line {line}: alias *s repeats more than the file may",
            file.path()
        );
        assert!(r.stderr.starts_with(&want), "{}", r.stderr);
    }
    // The same shape within the budget loads: anchors shared by many targets are fine.
    let mut fine = String::from(
        "targets:\n- name: t\n  env: &env [{name: A, value: x}, {name: B, value: y}]\n  readinessProbe: {exec: {command: [true]}, periodSeconds: 3600}\n",
    );
    for i in 0..1000 {
        fine.push_str(&format!("- name: t{i}\n  env: *env\n  readinessProbe: {{exec: {{command: [true]}}, periodSeconds: 3600}}\n"));
    }
    let file = write_file("yaml", &fine);
    let r = run_in_2_gib(&["watch", "--for", "1ms", file.path()]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
}

#[test]
fn duplicate_names_are_reported_with_the_name() {
    let mut text = String::from("targets:\n");
    for i in 0..1000 {
        text.push_str(&format!("- name: t{i}\n  readinessProbe: {{tcpSocket: {{port: 1}}}}\n"));
    }
    text.push_str("- name: t500\n  readinessProbe: {tcpSocket: {port: 1}}\n");
    assert_bad_file(&[], &text, "yaml", &["targets[1000].name: duplicate target name \"t500\""]);
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {tcpSocket: {port: 1}}\n  - name: c\n    livenessProbe: {tcpSocket: {port: 1}}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &["container p/c: more than one container with this name"],
    );
}

#[test]
fn a_hundred_thousand_targets_load_and_start() {
    // A closed loopback port: every probe is refused at once, so nothing is left open.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let n = 100_000;
    let mut text = String::with_capacity(n * 90);
    text.push_str("targets:\n");
    for i in 0..n {
        text.push_str(&format!(
            "- name: t{i}\n  readinessProbe:\n    tcpSocket: {{port: {port}}}\n    periodSeconds: 3600\n"
        ));
    }
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--for", "1ms", file.path()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].ends_with(" t0 readiness failure (initial)  started=yes ready=no live=yes"),
        "{}",
        lines[0]
    );
    let summaries = lines.iter().filter(|l| l.starts_with("summary: ")).count();
    assert_eq!(summaries, n, "every target is in the summary");
    // (Below a target's line, indented lines explain its roles: the last failure's message.)
    let last = lines.iter().rev().find(|l| l.starts_with("summary: "));
    assert_eq!(last.copied(), Some("summary: t99999 started=yes ready=no live=yes"));
}

// ---- output -------------------------------------------------------------------------------

/// Neither a raw control character nor a bidi override reaches stdout or stderr.
fn assert_clean(s: &str) {
    for c in s.chars() {
        assert!(
            c == '\n'
                || !(c.is_control()
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
            "raw {c:?} in {s:?}"
        );
    }
}

/// A hostile body that the warning message of a 3xx without Location repeats: a line break
/// and a forged line, an ESC sequence, a C1 control (CSI) and a right-to-left override.
const BODY: &str = "out%0Asummary%3A%20forged%1B%5B2J%C2%9B%E2%80%AE";
const BODY_ESCAPED: &str = "out\\nsummary: forged\\x1b[2J\\u{9b}\\u{202e}";

#[test]
fn watch_escapes_names_and_messages() {
    let server = TargetServer::start();
    // A name with a line break that would forge a summary line, an ESC sequence, a C1 control
    // and a right-to-left override.
    let yaml = format!(
        "targets:\n\
         - name: \"web\\nsummary: forged \\x1b[31mred\\x85\\u202e\"\n\
         \x20 readinessProbe:\n\
         \x20   httpGet: {{port: {}, path: '/no-location/302?body={BODY}'}}\n\
         \x20   periodMilliseconds: 100\n",
        server.port()
    );
    let file = write_file("yaml", &yaml);
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_clean(&r.stdout);
    assert_clean(&r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    // Quoted too: it has a space and controls, so it is one field whatever it holds.
    let name = r#""web\nsummary: forged \x1b[31mred\u{85}\u{202e}""#;
    assert!(!lines.iter().any(|l| l.starts_with("summary: forged")), "{lines:?}");
    assert!(
        lines[0].ends_with(&format!(
            " {name} readiness failure (initial)  started=yes ready=no live=yes"
        )),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(&format!(
            " {name} readiness success: Probe terminated redirects, Response body: {BODY_ESCAPED} (redirect, HTTP 302)"
        )),
        "{}",
        lines[1]
    );
    let summaries: Vec<&&str> = lines.iter().filter(|l| l.starts_with("summary: ")).collect();
    assert_eq!(summaries, [&format!("summary: {name} started=yes ready=yes live=yes").as_str()]);
    // JSON output stays JSON, with the name intact.
    let r = run(&["watch", "--json", "--for", "1ms", file.path()]);
    let first: serde_json::Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["target"], "web\nsummary: forged \u{1b}[31mred\u{85}\u{202e}");
}

#[test]
fn check_and_errors_escape_what_they_print() {
    let server = TargetServer::start();
    let r = run(&["check", &server.url(&format!("/no-location/302?body={BODY}"))]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_clean(&r.stdout);
    assert_eq!(r.stdout.lines().count(), 1, "{:?}", r.stdout);
    assert!(
        r.stdout.starts_with(&format!(
            "warning: Probe terminated redirects, Response body: {BODY_ESCAPED} ("
        )),
        "{}",
        r.stdout
    );
    // Error messages on stderr: an unknown field whose name holds an escape sequence.
    let file = write_file("yaml", "targets:\n- name: t\n  \"x\\e[2J\\u202ey\": 1\n");
    let r = run(&["watch", file.path()]);
    assert_eq!(r.code, 64);
    assert_clean(&r.stderr);
    assert!(r.stderr.contains("x\\x1b[2J\\u{202e}y"), "{}", r.stderr);
    let r = run(&["check", "-H", "X-A: \u{1b}[31m", "http://127.0.0.1:1/"]);
    assert_eq!(r.code, 64);
    assert_clean(&r.stderr);
}
