//! Unit tests of specs and their validation.

use super::*;
use crate::expect::MAX_SEND_LEN;

#[test]
fn tcp_specs() {
    let s = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
    assert_eq!(s.timeout, DEFAULT_TIMEOUT);
    assert!(matches!(&s.kind, ProbeKind::Tcp(t) if t.connect.close == ClosePolicy::Reset));
    let s = ProbeSpec::tcp("[::1]", 8080).unwrap();
    assert!(matches!(&s.kind, ProbeKind::Tcp(t) if t.host == "::1"));
    assert_eq!(ProbeSpec::tcp("h", 0), Err(SpecError::InvalidPort(0)));
    assert_eq!(ProbeSpec::tcp("h", 65536), Err(SpecError::InvalidPort(65536)));
    assert_eq!(ProbeSpec::tcp("h", -1), Err(SpecError::InvalidPort(-1)));
    assert_eq!(ProbeSpec::tcp("", 1), Err(SpecError::InvalidHost(String::new())));
    assert!(ProbeSpec::tcp("a b", 1).is_err());
    assert!(ProbeSpec::tcp("a/b", 1).is_err());
    let msg = ProbeSpec::tcp("h", 70000).unwrap_err().to_string();
    assert_eq!(msg, "invalid port 70000 (expected 1 to 65535)");
}

#[test]
fn http_headers_refuse_injection() {
    let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
    s.add_header("X-Ok", "a b\tc").unwrap();
    assert_eq!(
        s.add_header("X-Bad", "a\r\nEvil: 1"),
        Err(SpecError::InvalidHeaderValue("X-Bad".into()))
    );
    assert!(s.add_header("X-Bad", "a\nb").is_err());
    assert!(s.add_header("X-Bad", "a\0b").is_err());
    assert!(s.add_header("Bad Name", "v").is_err());
    assert!(s.add_header("Bad\r\nName", "v").is_err());
    assert!(s.add_header("", "v").is_err());
    s.add_header("User-Agent", "").unwrap();
    assert!(s.validate().is_ok());
    assert!(ProbeSpec::http("tcp://x:1").is_err());
    let mut t = ProbeSpec::tcp("h", 1).unwrap();
    assert!(t.add_header("A", "b").is_err());
}

#[test]
fn hosts_are_hosts() {
    for bad in [
        "127.0.0.1/x",
        "a?b",
        "a#b",
        "a b",
        "a\tb",
        "user@evil",
        "h:80",
        "[::1]:80",
        "a..b",
        "-a",
        "a-",
        ".",
        "127.1",
        "x.123",
        "caf\u{e9}",
        "a\u{202e}b",
        "a%b",
        "::1%",
        "a\0b",
        "h\r\nX: y",
    ] {
        assert_eq!(
            ProbeSpec::tcp(bad, 80),
            Err(SpecError::InvalidHost(bad.to_string())),
            "{bad:?}"
        );
        assert!(ProbeSpec::grpc(bad, 80, "").is_err(), "{bad:?}");
        assert!(validate_host(bad).is_err(), "{bad:?}");
    }
    for good in [
        "localhost",
        "svc.ns.svc.cluster.local.",
        "my_svc",
        "a-b.example",
        "127.0.0.1",
        "::1",
        "[::1]",
        "fe80::1%eth0",
        "2001:db8::2",
    ] {
        assert!(ProbeSpec::tcp(good, 80).is_ok(), "{good:?}");
        assert!(ProbeSpec::grpc(good, 80, "").is_ok(), "{good:?}");
    }
    assert_eq!(
        ProbeSpec::tcp("127.0.0.1/x", 1).unwrap_err().to_string(),
        "invalid host \"127.0.0.1/x\" (expected a host name or an IP address)"
    );
    // validate() re-checks a host changed field by field.
    let mut s = ProbeSpec::tcp("h", 1).unwrap();
    if let ProbeKind::Tcp(t) = &mut s.kind {
        t.host = "h/x".into();
    }
    assert_eq!(s.validate(), Err(SpecError::InvalidHost("h/x".into())));
}

#[test]
fn host_header_is_host_and_port() {
    let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
    for bad in [
        "a b",
        "a\tb",
        "evil/x?y#z",
        "user@evil",
        "caf\u{e9}.example",
        "h:0",
        "h:65536",
        "h:",
        "h:x",
        "[::1",
        "[::1]x",
        "[h]:1",
        "::1:80:",
        "a:b:c",
        "h:80/x",
        "\u{202e}h",
    ] {
        for name in ["Host", "host", "HOST"] {
            assert_eq!(
                s.add_header(name, bad),
                Err(SpecError::InvalidHostHeader(bad.into())),
                "{name}: {bad:?}"
            );
        }
    }
    for good in [
        "example.com",
        "example.com:8080",
        "127.0.0.1",
        "127.0.0.1:80",
        "[::1]",
        "[::1]:8080",
        "::1",
        " vhost.local ",
        "",
        "my_svc:1",
    ] {
        s.add_header("Host", good).unwrap();
    }
    assert_eq!(
        s.add_header("Host", "a b").unwrap_err().to_string(),
        "invalid value \"a b\" for HTTP header \"Host\" (expected a host name or IP address with an optional :port)"
    );
    // Other headers keep their rules: spaces are fine there.
    s.add_header("X-Host", "a b").unwrap();
    assert!(s.validate().is_ok());
    if let ProbeKind::Http(h) = &mut s.kind {
        h.headers.push(("Host".into(), "evil/x".into()));
    }
    assert_eq!(s.validate(), Err(SpecError::InvalidHostHeader("evil/x".into())));
}

#[test]
fn exec_specs() {
    assert_eq!(ProbeSpec::exec::<&str>(&[]), Err(SpecError::EmptyArgv));
    assert_eq!(ProbeSpec::exec(&[""]), Err(SpecError::EmptyArgv));
    assert_eq!(ProbeSpec::exec(&["a", "b\0"]), Err(SpecError::InvalidArgument(1)));
    let mut s = ProbeSpec::exec(&["/bin/true"]).unwrap();
    s.set_env("A", "1").unwrap();
    s.set_env("A", "2").unwrap();
    assert!(
        matches!(&s.kind, ProbeKind::Exec(e) if e.env == vec![("A".to_string(), "2".to_string())])
    );
    assert!(s.set_env("A=B", "1").is_err());
    assert!(s.set_env("", "1").is_err());
}

#[test]
fn grpc_specs() {
    let s = ProbeSpec::grpc("127.0.0.1", 50051, "").unwrap();
    let ProbeKind::Grpc(g) = &s.kind else { panic!() };
    assert_eq!((g.host.as_str(), g.port, g.service.as_str()), ("127.0.0.1", 50051, ""));
    assert_eq!((g.connect.tls.as_ref(), g.connect.close), (None, ClosePolicy::Reset));
    assert_eq!(s.timeout, DEFAULT_TIMEOUT);
    let s = ProbeSpec::grpc("[::1]", 1, "my.Service").unwrap();
    assert!(matches!(&s.kind, ProbeKind::Grpc(g) if g.host == "::1" && g.service == "my.Service"));
    assert_eq!(ProbeSpec::grpc("h", 0, ""), Err(SpecError::InvalidPort(0)));
    // An empty host is the local machine, as the kubelet's ":PORT" (GrpcSpec::host).
    let s = ProbeSpec::grpc("", 1, "").unwrap();
    assert!(matches!(&s.kind, ProbeKind::Grpc(g) if g.host.is_empty()));
    s.validate().unwrap();
    assert_eq!(ProbeSpec::tcp("", 1), Err(SpecError::InvalidHost(String::new())));
    let mut s = ProbeSpec::grpc("h", 1, "").unwrap();
    s.set_close_policy(ClosePolicy::Fin);
    s.set_tls(TlsOptions::default()).unwrap();
    assert!(
        matches!(&s.kind, ProbeKind::Grpc(g) if g.connect.close == ClosePolicy::Fin && g.connect.tls == Some(TlsOptions::default()))
    );
    assert!(s.validate().is_ok());
    assert!(s.add_header("A", "b").is_err());
}

#[test]
fn tls_options() {
    let mut s = ProbeSpec::http("https://127.0.0.1:8443/").unwrap();
    assert!(matches!(&s.kind, ProbeKind::Http(h) if *h.tls() == TlsOptions::default()));
    let tls = TlsOptions {
        verify: TlsVerify::CaFile("/etc/ca.pem".into()),
        server_name: Some("svc.example".into()),
        client_cert: Some(("c.pem".into(), "k.pem".into())),
        min_version: Some(TlsVersion::Tls13),
        max_version: Some(TlsVersion::Tls13),
        resumption: true,
    };
    s.set_tls(tls.clone()).unwrap();
    assert!(matches!(&s.kind, ProbeKind::Http(h) if *h.tls() == tls));
    assert!(s.validate().is_ok());

    for name in ["a b", "", "-x.example", "x..y", "a/b", "1.2.3", "x.123"] {
        let bad = TlsOptions { server_name: Some(name.into()), ..TlsOptions::default() };
        assert!(matches!(s.set_tls(bad), Err(SpecError::InvalidTls(_))), "{name:?}");
    }
    for name in ["localhost", "svc.ns.svc.cluster.local.", "10.0.0.1", "::1", "a_b.example"] {
        let good = TlsOptions { server_name: Some(name.into()), ..TlsOptions::default() };
        assert!(s.set_tls(good).is_ok(), "{name:?}");
    }
    let bad = TlsOptions { verify: TlsVerify::CaFile("".into()), ..TlsOptions::default() };
    assert_eq!(s.set_tls(bad).unwrap_err().to_string(), "invalid TLS option: CA file: empty path");
    let crossed = TlsOptions {
        min_version: Some(TlsVersion::Tls13),
        max_version: Some(TlsVersion::Tls12),
        ..TlsOptions::default()
    };
    assert_eq!(
        s.set_tls(crossed).unwrap_err().to_string(),
        "invalid TLS option: minimum TLS version 1.3 is above the maximum 1.2"
    );
    let bad = TlsOptions { client_cert: Some(("c".into(), "".into())), ..TlsOptions::default() };
    assert!(s.set_tls(bad).is_err());
    // validate() re-checks options set field by field.
    if let ProbeKind::Http(h) = &mut s.kind {
        h.connect.tls.as_mut().unwrap().server_name = Some("bad name".into());
    }
    assert!(matches!(s.validate(), Err(SpecError::InvalidTls(_))));

    let mut t = ProbeSpec::exec(&["true"]).unwrap();
    assert_eq!(
        t.set_tls(TlsOptions::default()).unwrap_err().to_string(),
        "invalid TLS option: TLS options apply to TCP, HTTP, gRPC and DNS probes only"
    );

    assert_eq!(TlsVersion::parse("1.2"), Some(TlsVersion::Tls12));
    assert_eq!(TlsVersion::parse("TLSv1.3"), Some(TlsVersion::Tls13));
    assert_eq!(TlsVersion::parse("tls1.3"), Some(TlsVersion::Tls13));
    assert_eq!(TlsVersion::parse("1.1"), None);
    assert_eq!(TlsVersion::Tls13.as_str(), "1.3");
}

#[test]
fn expectations() {
    let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
    s.set_expect_status(StatusSet::parse("200,418").unwrap()).unwrap();
    s.set_expect_body(Pattern::new("ok").unwrap()).unwrap();
    let ProbeKind::Http(h) = &s.kind else { panic!() };
    assert!(h.expect_status.as_ref().is_some_and(|e| e.contains(418)));
    assert_eq!(h.expect_body.as_ref().map(Pattern::as_str), Some("ok"));
    let mut t = ProbeSpec::tcp("h", 1).unwrap();
    assert_eq!(
        t.set_expect_status(StatusSet::parse("200").unwrap()).unwrap_err().to_string(),
        "expected statuses apply to HTTP probes only"
    );
    assert!(t.set_expect_body(Pattern::new("x").unwrap()).is_err());
    t.set_send(b"PING\r\n".to_vec()).unwrap();
    t.set_expect_reply(Pattern::new("^\\+PONG").unwrap()).unwrap();
    assert!(matches!(&t.kind, ProbeKind::Tcp(c) if c.send == b"PING\r\n" && c.expect.is_some()));
    assert!(t.set_send(vec![b'x'; MAX_SEND_LEN + 1]).is_err());
    assert!(t.validate().is_ok());
    assert_eq!(
        s.set_send(b"x".to_vec()).unwrap_err().to_string(),
        "data to send applies to TCP probes only"
    );
    assert!(s.set_expect_reply(Pattern::new("x").unwrap()).is_err());
}

#[test]
fn timeouts_and_limits() {
    let mut s = ProbeSpec::tcp("h", 1).unwrap();
    assert!(s.set_timeout(Duration::ZERO).is_err());
    assert!(s.set_timeout(Duration::from_millis(1)).is_ok());
    assert!(s.set_timeout(Duration::from_secs(100_000)).is_err());
    assert!(s.set_output_limit(0).is_err());
    assert!(s.set_output_limit(100).is_ok());
    s.output_limit = 0;
    assert_eq!(s.validate(), Err(SpecError::InvalidOutputLimit));
}

/// A spec printed with `{:?}` (debug pages, logs) never shows a credential's value.
#[test]
fn debug_hides_credential_headers_and_metadata() {
    let mut http = ProbeSpec::http("http://h/").unwrap();
    http.add_header("Authorization", "Bearer tok-HTTP").unwrap();
    http.add_header("X-Api-Key", "key-HTTP").unwrap();
    http.add_header("Accept", "text/plain").unwrap();
    let mut grpc = ProbeSpec::grpc("h", 1, "").unwrap();
    grpc.add_grpc_metadata("authorization", "Bearer tok-GRPC").unwrap();
    for spec in [&http, &grpc] {
        for text in [format!("{spec:?}"), format!("{spec:#?}")] {
            assert!(!text.contains("tok-") && !text.contains("key-HTTP"), "{text}");
            assert!(text.contains("<secret>"), "{text}");
        }
    }
    assert!(format!("{http:?}").contains(r#"("Accept", "text/plain")"#));
}

/// An exec probe's environment is printed with credential-like variables' values hidden.
#[test]
fn debug_hides_credential_environment_values() {
    let mut exec = ProbeSpec::exec(&["check", "--quick"]).unwrap();
    exec.set_env("DB_PASSWORD", "pw-EXEC").unwrap();
    exec.set_env("API_TOKEN", "tok-EXEC").unwrap();
    exec.set_env("LANG", "C.UTF-8").unwrap();
    for text in [format!("{exec:?}"), format!("{exec:#?}")] {
        assert!(!text.contains("pw-EXEC") && !text.contains("tok-EXEC"), "{text}");
        assert!(text.contains("<secret>"), "{text}");
    }
    let text = format!("{exec:?}");
    assert!(text.contains(r#"("LANG", "C.UTF-8")"#) && text.contains("--quick"), "{text}");
}
