//! Usage errors (exit 64, one line naming the option), help and version.

mod common;

use common::*;

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
    // Well formed but too long: out of range, not "expected a number and a unit".
    assert_usage_error(
        &["watch", "--for", "100000000h", "f.yaml"],
        "--for: duration '100000000h' out of range: at most 5124095h",
    );
    assert_usage_error(
        &["check", "--timeout", "99999999999999999999ms", "http://127.0.0.1:1/"],
        "--timeout: duration '99999999999999999999ms' out of range: at most 5124095h",
    );
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

#[test]
fn tls_and_grpc_usage_errors_exit_64() {
    let cases: &[(&[&str], &str)] = &[
        (&["grpc://127.0.0.1"], "missing port (expected grpc://HOST:PORT)"),
        (&["grpc://127.0.0.1:0/svc"], "invalid port 0"),
        (&["-H", "X: y", "grpc://127.0.0.1:1"], "applies to http"),
        (
            &["--tls-verify", "tcp://127.0.0.1:1"],
            "--tls-verify needs --tls or --starttls on tcp://",
        ),
        (&["--starttls", "grpc://127.0.0.1:1"], "--starttls applies to tcp:// targets only"),
        (
            &["--tls-verify", "--", "true"],
            "--tls-verify applies to https://, grpc://, tcp:// and dns:// targets only",
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

/// An argument of bytes that are not UTF-8: `prefix` then 0xFF then `suffix`.
fn not_utf8(prefix: &str, suffix: &str) -> OsString {
    let mut b = prefix.as_bytes().to_vec();
    b.push(0xff);
    b.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(b)
}

#[test]
fn non_utf8_arguments_are_refused_only_where_text_is_needed() {
    let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
    // Text options and the target: exit 64 naming what is not text.
    let mut args = os(&["check", "--timeout"]);
    args.extend([not_utf8("1", "s"), OsString::from("http://127.0.0.1:1/")]);
    let r = run_os(args);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "prober: --timeout: \"1\u{fffd}s\" is not valid UTF-8 text (see 'prober check --help')\n"
    );
    let mut args = os(&["check"]);
    args.push(not_utf8("http://h", "/"));
    let r = run_os(args);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(r.stderr.starts_with("prober: TARGET: \"http://h\u{fffd}/\" is not valid UTF-8"));
    // File names: taken as they are (here a file that does not exist: exit 66, not 64).
    for opt in [None, Some("--manifest")] {
        let mut args = os(&["watch"]);
        args.extend(opt.map(OsString::from));
        args.push(not_utf8("/no/such/dir/w", ".yaml"));
        let r = run_os(args);
        assert_eq!(r.code, 66, "{opt:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("prober: cannot read /no/such/dir/w\u{fffd}.yaml: "),
            "{}",
            r.stderr
        );
    }
    let mut args = os(&["check", "--tls-ca"]);
    args.extend([not_utf8("/no/such/ca", ".pem"), OsString::from("https://127.0.0.1:1/")]);
    let r = run_os(args);
    assert_ne!(r.code, 64, "a CA file name need not be UTF-8: {}", r.stderr);
}

#[test]
fn small_things_are_said_in_words() {
    assert_usage_error(
        &["check", "--timeout", "0s", "http://127.0.0.1:1/"],
        "--timeout: must be positive (got '0s')",
    );
    assert_usage_error(&["watch", "--for", "0ms", "f.yaml"], "--for: must be positive (got '0ms')");
    for target in ["gRPC:127.0.0.1:50051", "GRPC:127.0.0.1:50051"] {
        assert_usage_error(&["check", target], "did you mean 'grpc://127.0.0.1:50051'?");
    }
    let file = write_file(
        "yaml",
        "targets:\n- name: db\n  readinessProbe:\n    tcpSocket: {port: 5432}\n    periodSeconds: 99999999999999999999\n",
    );
    let r = run(&["watch", file.to_str().unwrap()]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "targets[0].readinessProbe.periodSeconds: the integer 99999999999999999999 is out of range"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("u128"), "{}", r.stderr);
}

#[test]
fn host_and_port_errors_blame_the_option() {
    assert_usage_error(
        &["watch", "--host", "127.0.0.1:18080", "--manifest", "m.yaml"],
        "--host: '127.0.0.1:18080' has a port; --host takes a host name or an IP address only \
         (map the probes' ports with --port PORT=LOCAL",
    );
    assert_usage_error(
        &["watch", "--host", "a b", "w.yaml"],
        "--host: invalid host \"a b\" (expected a host name or an IP address)",
    );
    assert_usage_error(
        &["watch", "--port", "8080:18080", "--manifest", "m.yaml"],
        "--port: bad mapping '8080:18080': no '='",
    );
    assert_usage_error(&["watch", "--port", "8080=0", "w.yaml"], "--port: bad mapping '8080=0'");
    assert_usage_error(&["watch", "--port"], "option '--port' needs a value");
}

/// Durations are Go's (`1m30s`, `0`, `+2s`), as in the files `serve` and `watch` read; a
/// negative one is refused by name; the reload interval also takes them.
#[test]
fn durations_are_gos() {
    let r = run(&["check", "--timeout", "1m30s", "--", "true"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let r = run(&["check", "--timeout=+2s", "--", "true"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    assert_usage_error(
        &["check", "--timeout", "-1s", "--", "true"],
        "--timeout: bad duration '-1s' (a length of time, not negative)",
    );
    assert_usage_error(&["watch", "--for", "0", "f.yaml"], "--for: must be positive (got '0')");
    // Parsed: what is missing next is the module file.
    for interval in ["1m", "45"] {
        assert_usage_error(
            &["serve", "--config.auto-reload-interval", interval, "--listen", "127.0.0.1:0"],
            "missing --config FILE",
        );
    }
    assert_usage_error(
        &["serve", "--config.auto-reload-interval", "1.5s"],
        "--config.auto-reload-interval: \"1.5s\": a whole number of seconds (30, 30s or 1m)",
    );
}
