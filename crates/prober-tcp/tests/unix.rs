//! Connect checks of Unix sockets (beyond the kubelet, issue 25): a real listener on a socket
//! file and on an abstract name, a missing socket, and send/expect over a Unix socket.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

use prober_core::{Outcome, Pattern, ProbeKind, ProbeResult, ProbeSpec, Reason, UnixSocket};
use prober_io::run_to_completion;
use prober_tcp::TcpProbe;

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Tcp(t) = &spec.kind else { panic!("not a TCP spec") };
    run_to_completion(&mut TcpProbe::new(t, spec.timeout))
}

/// A socket path unique to this test, in a fresh directory.
fn socket_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prober-unix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("s.sock")
}

fn spec(socket: UnixSocket) -> ProbeSpec {
    ProbeSpec::unix(socket).unwrap().with_timeout(Duration::from_secs(5)).unwrap()
}

#[test]
fn connects_to_a_socket_file() {
    let path = socket_path("file");
    let _listener = UnixListener::bind(&path).unwrap();
    let o = run(&spec(UnixSocket::path(&path).unwrap()));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert!(o.timings.connect.is_some());
}

#[test]
fn connects_to_an_abstract_socket() {
    let name = format!("prober-test-{}", std::process::id());
    let addr = {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap()
    };
    let _listener = UnixListener::bind_addr(&addr).unwrap();
    let o = run(&spec(UnixSocket::parse(&format!("unix-abstract:{name}")).unwrap()));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let o = run(&spec(UnixSocket::abstract_name("prober-nobody-listens").unwrap()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert_eq!(o.message, "dial unix @prober-nobody-listens: connect: connection refused");
}

#[test]
fn missing_and_dead_sockets_fail_as_go_says() {
    let path = socket_path("missing");
    let o = run(&spec(UnixSocket::path(&path).unwrap()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert_eq!(
        o.message,
        format!("dial unix {}: connect: no such file or directory", path.display())
    );
    // A socket file whose listener is gone: refused.
    drop(UnixListener::bind(&path).unwrap());
    let o = run(&spec(UnixSocket::path(&path).unwrap()));
    assert_eq!(o.message, format!("dial unix {}: connect: connection refused", path.display()));
}

#[test]
fn send_and_expect_over_a_unix_socket() {
    let path = socket_path("pong");
    let listener = UnixListener::bind(&path).unwrap();
    let server = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut got = [0u8; 6];
        c.read_exact(&mut got).unwrap();
        c.write_all(if &got == b"PING\r\n" { b"+PONG\r\n" } else { b"-ERR\r\n" }).unwrap();
        let _ = c.read(&mut [0u8; 16]);
    });
    let mut s = spec(UnixSocket::path(&path).unwrap());
    s.set_send(b"PING\r\n".to_vec()).unwrap();
    s.set_expect_reply(Pattern::new("^\\+PONG").unwrap()).unwrap();
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output, b"+PONG\r\n");
    server.join().unwrap();
}
