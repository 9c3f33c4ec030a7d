//! gRPC health probes against grpc-go's own health service (`prober_testkit::grpc`, built
//! with `go build`): the kubelet's upstream cases (`grpc_test.go`,
//! <https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/grpc/grpc_test.go>; numbered G1 to G10 here in the order ported) and
//! libprober's own.
// Without the `tls` feature the TLS cases are compiled out, and their helpers with them.
#![cfg_attr(not(feature = "tls"), allow(unused_imports, dead_code))]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use prober_core::{
    GrpcFacts, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, TlsOptions, TlsVerify,
    TlsVersion,
};
use prober_grpc::GrpcProbe;
use prober_io::run_to_completion;
use prober_testkit::bounds::{ends_by, gives_up_after};
use prober_testkit::closed_port;
use prober_testkit::grpc::HealthServer;
use prober_testkit::tls::TestCa;

const TIMEOUT: Duration = Duration::from_secs(5);

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Grpc(g) = &spec.kind else { panic!("not a gRPC spec") };
    let mut m = GrpcProbe::new(g, spec.timeout);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    let took = started.elapsed();
    assert!(took < ends_by(spec.timeout), "ended {took:?} after start: {o:?}");
    o
}

fn spec(port: u16, service: &str) -> ProbeSpec {
    ProbeSpec::grpc("127.0.0.1", port.into(), service).unwrap().with_timeout(TIMEOUT).unwrap()
}

fn check(port: u16, service: &str) -> Outcome {
    run(&spec(port, service))
}

fn check_tls(port: u16, tls: TlsOptions) -> Outcome {
    run(&spec(port, "").with_tls(tls).unwrap())
}

#[track_caller]
fn assert_healthy(o: &Outcome) {
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(o.output, b"service healthy");
    assert_eq!(o.http_status, Some(200));
}

#[track_caller]
fn assert_failure(o: &Outcome, reason: Reason, message: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, reason), "{o:?}");
    assert_eq!(o.message, message);
    assert!(o.output.is_empty());
}

/// The certificate files of a CA and a server certificate for 127.0.0.1, in a fresh directory.
struct Pki {
    ca_file: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    dir: PathBuf,
}

fn pki(tag: &str) -> Pki {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-grpc-{}-{tag}", std::process::id()));
    let ca = TestCa::new("gRPC test CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let (cert, key) =
        ca.issue_expiring(&["127.0.0.1", "localhost"], (2031, 2, 3)).write_files(&dir, "server");
    Pki { ca_file, cert, key, dir }
}

fn arg(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// G5/G6: SERVING.
#[test]
fn g5_serving_is_success() {
    let s = HealthServer::start(&[]);
    let o = check(s.port(), "");
    assert_healthy(&o);
    let t = o.timings;
    assert!(t.connect.is_some() && t.tls.is_none() && t.resolve.is_none(), "{t:?}");
    assert!(t.connect.unwrap() <= t.first_byte.unwrap() && t.first_byte.unwrap() <= t.total);
    assert_eq!(o.cert_not_after, None);
    assert_eq!(o.grpc, GrpcFacts { status_code: Some(0), serving_status: Some(1) });
    // A named service.
    let s = HealthServer::start(&["-status", "my.pkg.Svc=SERVING"]);
    assert_healthy(&check(s.port(), "my.pkg.Svc"));
}

/// G3 and the other statuses.
#[test]
fn g3_not_serving_and_other_statuses_fail() {
    let s = HealthServer::start(&[
        "-status",
        "down=NOT_SERVING",
        "-status",
        "gone=SERVICE_UNKNOWN",
        "-status",
        "unknown=UNKNOWN",
        "-status",
        "=NOT_SERVING",
    ]);
    for (service, name) in [
        ("down", "NOT_SERVING"),
        ("gone", "SERVICE_UNKNOWN"),
        ("unknown", "UNKNOWN"),
        ("", "NOT_SERVING"),
    ] {
        let o = check(s.port(), service);
        assert_failure(
            &o,
            Reason::Status,
            &format!("service unhealthy (responded with \"{name}\")"),
        );
        assert_eq!(o.http_status, Some(200));
        // The RPC itself succeeded (OK) with this serving status.
        let status = [(0, "UNKNOWN"), (2, "NOT_SERVING"), (3, "SERVICE_UNKNOWN")]
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(v, _)| *v);
        assert_eq!(o.grpc, GrpcFacts { status_code: Some(0), serving_status: status });
    }
}

/// grpc-go answers NotFound for a service it does not know (not SERVICE_UNKNOWN): the
/// kubelet's mapping makes that an RPC error.
#[test]
fn unknown_service_is_an_rpc_error() {
    let s = HealthServer::start(&[]);
    let o = check(s.port(), "no.such.Service");
    assert_failure(
        &o,
        Reason::Status,
        "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service",
    );
    assert_eq!(o.grpc, GrpcFacts { status_code: Some(5), serving_status: None });
}

/// G10: no health service at all.
#[test]
fn g10_server_without_the_health_service() {
    let s = HealthServer::start(&["-no-health"]);
    let o = check(s.port(), "");
    assert_failure(
        &o,
        Reason::Status,
        "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): \
         unknown service grpc.health.v1.Health",
    );
    assert_eq!(o.grpc.status_code, Some(12), "Unimplemented");
}

#[test]
fn the_user_agent_is_kube_probe() {
    let s = HealthServer::start(&["-require-user-agent", "kube-probe/1.37"]);
    assert_healthy(&check(s.port(), ""));
    // The check can fail: another prefix is refused, and the message shows what was sent.
    let s = HealthServer::start(&["-require-user-agent", "someone-else"]);
    let o = check(s.port(), "");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status), "{o:?}");
    assert!(
        o.message.starts_with(
            "error: health rpc probe failed: rpc error: code = PermissionDenied desc = \
             user-agent \"kube-probe/1.37"
        ),
        "{}",
        o.message
    );
}

/// G2: a plain HTTP/1 server on the port.
#[test]
fn g2_http1_server_fails() {
    let s = HealthServer::start(&["-http1"]);
    let o = check(s.port(), "");
    let addr = format!("127.0.0.1:{}", s.port());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    let prefix = format!(
        "error: failed to connect service at \"{addr}\": the server does not speak HTTP/2: it \
         answered with HTTP/1: \"HTTP/1.1 "
    );
    assert!(o.message.starts_with(&prefix), "{}", o.message);
}

/// G4: Check takes longer than the probe's timeout.
#[test]
fn g4_slow_server_times_out_during_the_rpc() {
    let s = HealthServer::start(&["-delay", "4s"]);
    let timeout = Duration::from_millis(500);
    let started = Instant::now();
    let o = run(&spec(s.port(), "").with_timeout(timeout).unwrap());
    let took = started.elapsed();
    assert_failure(&o, Reason::Timeout, "timeout: health rpc did not complete within 500ms");
    // Not before the deadline (`run` checks that it ended by it).
    assert!(took >= timeout, "{took:?}");
    assert!(o.timings.connect.is_some());
    // Within the deadline, a slow answer is fine.
    let s = HealthServer::start(&["-delay", "200ms"]);
    assert_healthy(&check(s.port(), ""));
}

/// G1 (the deadline before the connection is established): the server accepts TCP (the
/// kernel does) and never sends its SETTINGS.
#[test]
fn g1_connect_timeout() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let o = run(&spec(port, "").with_timeout(Duration::from_millis(300)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "timeout: failed to connect service \"127.0.0.1:{port}\" within 300ms: context \
             deadline exceeded"
        ),
    );
}

/// G1 during a TLS handshake that the server never answers.
#[cfg(feature = "tls")]
#[test]
fn g1_connect_timeout_during_the_tls_handshake() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let s = spec(port, "").with_timeout(Duration::from_millis(300)).unwrap();
    let o = run(&s.with_tls(TlsOptions::default()).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "timeout: failed to connect service \"127.0.0.1:{port}\" within 300ms: context \
             deadline exceeded"
        ),
    );
    assert!(o.timings.connect.is_some() && o.timings.tls.is_none());
}

/// Without the `tls` feature (`cargo test -p prober-grpc --no-default-features`).
#[cfg(not(feature = "tls"))]
#[test]
fn tls_not_built_in() {
    let o = check_tls(1, TlsOptions::default());
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Unsupported), "{o:?}");
    assert_eq!(o.message, "TLS not built in: cannot probe gRPC over TLS at 127.0.0.1:1");
}

#[test]
fn closed_port_fails_at_once() {
    let port = closed_port();
    let started = Instant::now();
    let o = check(port, "");
    // At once: well before the deadline, which only a hang would reach.
    assert!(started.elapsed() < TIMEOUT / 2, "{o:?}");
    assert_failure(
        &o,
        Reason::Refused,
        &format!(
            "error: failed to connect service at \"127.0.0.1:{port}\": dial tcp 127.0.0.1:{port}: \
             connect: connection refused"
        ),
    );
    // grpc-go's RPC fails with Unavailable when the connection does.
    assert_eq!(o.grpc, GrpcFacts { status_code: Some(14), serving_status: None });
}

#[test]
fn a_server_that_closes_before_its_settings() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        let _ = c.read(&mut buf);
        let _ = c.shutdown(std::net::Shutdown::Write);
        let _ = c.read(&mut buf);
    });
    let o = check(port, "");
    assert_failure(
        &o,
        Reason::Protocol,
        &format!(
            "error: failed to connect service at \"127.0.0.1:{port}\": connection closed before \
             server preface received"
        ),
    );
    t.join().unwrap();
}

/// An HTTP/2 server that answers every request with 404 and no gRPC status (a web server, not
/// gRPC): grpc-go maps the HTTP status to Unimplemented.
#[test]
fn a_plain_http2_server_answering_404() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        // SETTINGS, SETTINGS ACK, then HEADERS :status 404 (indexed, static index 13) with
        // END_STREAM, after reading the client's request.
        c.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == [0, 0, 0, 1]) {
            let n = c.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        c.write_all(&[0, 0, 0, 4, 1, 0, 0, 0, 0]).unwrap();
        c.write_all(&[0, 0, 1, 1, 5, 0, 0, 0, 1, 0x8d]).unwrap();
        let _ = c.read(&mut buf);
    });
    let o = check(port, "");
    assert_failure(
        &o,
        Reason::Status,
        "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): \
         unexpected HTTP status code received from server: 404 (Not Found); malformed header: missing HTTP content-type",
    );
    assert_eq!(o.http_status, Some(404));
    t.join().unwrap();
}

/// G7: TLS server, TLS probe; with the kubelet's default (no verification) and verified.
#[cfg(feature = "tls")]
#[test]
fn g7_tls_server_tls_probe() {
    let p = pki("g7");
    let s = HealthServer::start(&["-tls-cert", arg(&p.cert), "-tls-key", arg(&p.key)]);
    let o = check_tls(s.port(), TlsOptions::default());
    assert_healthy(&o);
    assert!(o.timings.tls.is_some());
    assert_eq!(o.cert_not_after, Some(1_927_843_200));
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!((t.version, t.earliest_not_after), (Some(TlsVersion::Tls13), Some(1_927_843_200)));
    let verified = TlsOptions {
        verify: TlsVerify::CaFile(p.ca_file.clone()),
        min_version: Some(TlsVersion::Tls13),
        ..TlsOptions::default()
    };
    assert_healthy(&check_tls(s.port(), verified));
    // Verified against another CA: the connection fails, reason Tls.
    let other = TestCa::new("other");
    let (other_file, _) = other.cert().write_files(&p.dir, "other-ca");
    let o = check_tls(
        s.port(),
        TlsOptions { verify: TlsVerify::CaFile(other_file), ..TlsOptions::default() },
    );
    assert_failure(
        &o,
        Reason::Tls,
        &format!(
            "error: failed to connect service at \"127.0.0.1:{}\": tls: invalid peer certificate: \
             UnknownIssuer",
            s.port()
        ),
    );
    assert_eq!(o.cert_not_after, Some(1_927_843_200));
}

/// G8: TLS server, plaintext probe.
#[test]
fn g8_tls_server_plaintext_probe_fails() {
    let p = pki("g8");
    let s = HealthServer::start(&["-tls-cert", arg(&p.cert), "-tls-key", arg(&p.key)]);
    let o = run(&spec(s.port(), "").with_timeout(Duration::from_secs(2)).unwrap());
    assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
    let prefix = format!("error: failed to connect service at \"127.0.0.1:{}\": ", s.port());
    assert!(o.message.starts_with(&prefix), "{}", o.message);
}

/// G9: plaintext server, TLS probe.
#[cfg(feature = "tls")]
#[test]
fn g9_plaintext_server_tls_probe_fails() {
    let s = HealthServer::start(&[]);
    let o = check_tls(s.port(), TlsOptions::default());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    let prefix = format!("error: failed to connect service at \"127.0.0.1:{}\": tls: ", s.port());
    assert!(o.message.starts_with(&prefix), "{}", o.message);
}

#[cfg(feature = "tls")]
#[test]
fn mutual_tls() {
    let p = pki("mtls");
    let clients = TestCa::new("client CA");
    let (client_ca, _) = clients.cert().write_files(&p.dir, "client-ca");
    let client = clients.issue_client("probe").write_files(&p.dir, "client");
    let s = HealthServer::start(&[
        "-tls-cert",
        arg(&p.cert),
        "-tls-key",
        arg(&p.key),
        "-client-ca",
        arg(&client_ca),
    ]);
    let with_cert = TlsOptions { client_cert: Some(client), ..TlsOptions::default() };
    assert_healthy(&check_tls(s.port(), with_cert));
    let o = check_tls(s.port(), TlsOptions::default());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    assert!(o.message.contains("tls: received fatal alert"), "{}", o.message);
}

#[cfg(feature = "tls")]
#[test]
fn unusable_tls_files_are_unknown() {
    let s = HealthServer::start(&[]);
    let o = check_tls(
        s.port(),
        TlsOptions {
            verify: TlsVerify::CaFile("/nonexistent/ca.pem".into()),
            ..TlsOptions::default()
        },
    );
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Tls), "{o:?}");
    assert_eq!(
        o.message,
        "TLS setup failed: cannot read CA file \"/nonexistent/ca.pem\": no such file or directory"
    );
}

#[test]
fn host_names_are_resolved() {
    let s = HealthServer::start(&[]);
    let spec =
        ProbeSpec::grpc("localhost", s.port().into(), "").unwrap().with_timeout(TIMEOUT).unwrap();
    let o = run(&spec);
    assert_healthy(&o);
    assert!(o.timings.resolve.is_some());
}

#[test]
fn many_probes_on_one_server() {
    let s = HealthServer::start(&["-status", "a=SERVING", "-status", "b=NOT_SERVING"]);
    for i in 0..50 {
        let (service, ok) = if i % 2 == 0 { ("a", true) } else { ("b", false) };
        let o = check(s.port(), service);
        assert_eq!(o.result.is_ok(), ok, "{i}: {o:?}");
    }
}

/// Cancelling a run (a removed target) closes its connection at once, with RST by default.
#[test]
fn cancel_closes_the_connection() {
    use mio::{Events, Poll, Token, Waker};
    use prober_io::{Ctx, Machine, Mailbox, Ready, Step};
    use std::sync::{Arc, mpsc};

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut buf = [0u8; 256];
        let mut got = 0;
        let end = loop {
            match c.read(&mut buf) {
                Ok(0) => break "eof",
                Ok(n) => {
                    got += n;
                    if got >= 24 {
                        let _ = tx.send("preface");
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break "reset",
                Err(_) => break "error",
            }
        };
        let _ = tx.send(end);
    });

    let sp = spec(port, "");
    let ProbeKind::Grpc(g) = &sp.kind else { unreachable!() };
    let mut m = GrpcProbe::new(g, sp.timeout);
    let mut poll = Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), Token(99)).unwrap());
    let mailbox = Mailbox::new(waker);
    let mut events = Events::with_capacity(8);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    assert!(matches!(m.start(&mut cx), Step::Pending));
    let deadline = Instant::now() + gives_up_after(sp.timeout);
    loop {
        assert!(Instant::now() < deadline, "the preface never arrived");
        if rx.try_recv() == Ok("preface") {
            break;
        }
        poll.poll(&mut events, Some(Duration::from_millis(20))).unwrap();
        for ev in events.iter() {
            let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
            assert!(matches!(m.ready(&mut cx, ev.token().0, Ready::from_event(ev)), Step::Pending));
        }
    }
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    m.cancel(&mut cx);
    assert_eq!(m.wake_at(), None);
    let end = rx.recv_timeout(ends_by(sp.timeout)).expect("the connection stayed open");
    assert_eq!(end, "reset");
    server.join().unwrap();
}

/// gRPC health over a Unix socket (grpc-health-probe's `-addr unix:///path`, issue 25), with
/// grpc-go's server listening on a socket file and on an abstract name.
#[test]
fn health_over_unix_sockets() {
    use prober_core::UnixSocket;
    let dir = std::env::temp_dir().join(format!("prober-grpc-unix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.sock");
    let _server =
        HealthServer::start(&["-unix", path.to_str().unwrap(), "-status", "down=NOT_SERVING"]);
    let target = format!("unix://{}", path.display());
    let socket = UnixSocket::parse(&target).unwrap();
    let s = ProbeSpec::grpc_unix(socket.clone(), "").unwrap().with_timeout(TIMEOUT).unwrap();
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let s = ProbeSpec::grpc_unix(socket, "down").unwrap().with_timeout(TIMEOUT).unwrap();
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
    assert_eq!(o.message, "service unhealthy (responded with \"NOT_SERVING\")");

    let name = format!("prober-grpc-test-{}", std::process::id());
    let _abstract = HealthServer::start(&["-unix", &format!("@{name}")]);
    let socket = UnixSocket::parse(&format!("unix-abstract:{name}")).unwrap();
    let o = run(&ProbeSpec::grpc_unix(socket, "").unwrap().with_timeout(TIMEOUT).unwrap());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");

    let gone = dir.join("gone.sock");
    let socket = UnixSocket::path(&gone).unwrap();
    let o = run(&ProbeSpec::grpc_unix(socket, "").unwrap().with_timeout(TIMEOUT).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "error: failed to connect service at \"unix://{0}\": dial unix {0}: connect: no such file or directory",
            gone.display()
        )
    );
}

/// Metadata, user agent and authority (grpc-health-probe's `-rpc-header`, `-user-agent`,
/// `-tls-server-name`; issue 25), checked by grpc-go's server; a refusal shows the server's
/// grpc-status and its (percent-decoded) grpc-message.
#[test]
fn metadata_user_agent_and_authority() {
    let s = HealthServer::start(&[
        "-require-metadata",
        "authorization=Bearer t0ken",
        "-require-metadata",
        "trace-bin=hello",
        "-require-user-agent",
        "grpc_health_probe",
        "-require-authority",
        "health.internal:443",
    ]);
    let mut sp = spec(s.port(), "");
    let o = run(&sp);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status), "{o:?}");
    assert_eq!(
        o.message,
        "error: health rpc probe failed: rpc error: code = PermissionDenied desc = user-agent \"kube-probe/1.37\""
    );
    sp.set_grpc_user_agent("grpc_health_probe").unwrap();
    let o = run(&sp);
    assert_eq!(
        o.message,
        "error: health rpc probe failed: rpc error: code = Unauthenticated desc = missing metadata authorization: 100% denied"
    );
    sp.add_grpc_metadata("Authorization", "Bearer t0ken").unwrap();
    sp.add_grpc_metadata("trace-bin", "aGVsbG8").unwrap(); // "hello", unpadded
    let o = run(&sp);
    assert!(o.message.contains("code = PermissionDenied desc = authority [\"127.0.0.1:"), "{o:?}");
    sp.set_grpc_authority("health.internal:443").unwrap();
    let o = run(&sp);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
}

/// grpc-health-probe's `-tls-server-name`: the name is SNI, what the certificate is verified
/// against, and (as grpc-go does) the `:authority`, unless an authority is set.
#[cfg(feature = "tls")]
#[test]
fn tls_server_name_is_the_authority() {
    let p = pki("authority");
    let s = HealthServer::start(&[
        "-tls-cert",
        arg(&p.cert),
        "-tls-key",
        arg(&p.key),
        "-require-authority",
        "localhost",
    ]);
    let named = TlsOptions {
        verify: TlsVerify::CaFile(p.ca_file.clone()),
        server_name: Some("localhost".into()),
        ..TlsOptions::default()
    };
    assert_healthy(&check_tls(s.port(), named.clone()));
    let mut sp = spec(s.port(), "").with_tls(named).unwrap();
    sp.set_grpc_authority("other:1").unwrap();
    let o = run(&sp);
    assert!(o.message.contains("code = PermissionDenied desc = authority [\"other:1\"]"), "{o:?}");
}

/// An empty host is the local machine, as the kubelet's `":PORT"` is for Go's dialer: a server
/// listening on every address answers it, with `localhost:PORT` as the authority (grpc-go's);
/// messages name `":PORT"`.
#[test]
fn an_empty_host_is_the_local_machine() {
    // The authority is checked by the server, which knows its port only once it listens: a
    // wrong authority fails the check (PermissionDenied), so a mismatch cannot pass silently.
    let s = HealthServer::start(&["-listen", "[::]:0", "-require-authority", "localhost:0"]);
    let o = run(&ProbeSpec::grpc("", s.port().into(), "").unwrap().with_timeout(TIMEOUT).unwrap());
    let want = format!("authority [\"localhost:{}\"]", s.port());
    assert!(o.message.contains(&want), "{o:?}");
    let s = HealthServer::start(&["-listen", "[::]:0"]);
    let empty =
        |port: u16| ProbeSpec::grpc("", port.into(), "").unwrap().with_timeout(TIMEOUT).unwrap();
    assert_healthy(&run(&empty(s.port())));
    let closed = closed_port();
    let o = run(&empty(closed));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    // What was dialed: the unspecified address ([::], or 0.0.0.0 without IPv6), as Go's
    // `dial tcp :PORT` is.
    let head = format!("error: failed to connect service at \":{closed}\": dial tcp ");
    let tail = format!(":{closed}: connect: connection refused");
    assert!(o.message.starts_with(&head) && o.message.ends_with(&tail), "{:?}", o.message);
}
