//! HTTP over a Unix socket (curl's `--unix-socket`, issue 25) against Go's net/http serving on
//! a Unix socket (the testkit's grpc-health-server in `-http1 -unix` mode): the URL gives the
//! `Host` and the path, the socket the connection.

use std::path::PathBuf;
use std::time::Duration;

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, UnixSocket};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::grpc::HealthServer;

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit))
}

fn socket_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prober-http-unix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("s.sock")
}

fn spec(url: &str, socket: UnixSocket) -> ProbeSpec {
    ProbeSpec::http(url)
        .unwrap()
        .with_timeout(Duration::from_secs(5))
        .unwrap()
        .with_unix_socket(socket)
        .unwrap()
}

#[test]
fn http_over_a_socket_file() {
    let path = socket_path("file");
    let _server = HealthServer::start(&["-http1", "-unix", path.to_str().unwrap()]);
    let socket = UnixSocket::path(&path).unwrap();
    let o = run(&spec("http://localhost/echo", socket.clone()));
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(200)), "{o:?}");
    assert_eq!(o.output, b"GET localhost /echo");
    let mut post = spec("http://api.internal:8080/echo", socket);
    post.set_method("POST").unwrap();
    let o = run(&post);
    assert_eq!(o.output, b"POST api.internal:8080 /echo", "{o:?}");
}

#[test]
fn http_over_an_abstract_socket() {
    let name = format!("prober-http-test-{}", std::process::id());
    let _server = HealthServer::start(&["-http1", "-unix", &format!("@{name}")]);
    let o = run(&spec("http://localhost/", UnixSocket::abstract_name(name).unwrap()));
    assert_eq!((o.result, o.output.as_slice()), (ProbeResult::Success, &b"ok"[..]), "{o:?}");
}

#[test]
fn a_missing_socket_names_the_url_and_the_socket() {
    let path = socket_path("missing");
    let o = run(&spec("http://localhost/healthz", UnixSocket::path(&path).unwrap()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "Get \"http://localhost/healthz\": dial unix {}: connect: no such file or directory",
            path.display()
        )
    );
}
