//! The runner of grpc-go's health server (`prober_testkit::grpc`): it starts the real server
//! (built with Go), reports the port it listens on, and ends it when dropped. What the server
//! answers is tested by prober-grpc's tests, which probe it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use prober_testkit::grpc::HealthServer;

/// How long a read waits for the server: no timeout is under test, this only turns a hang into
/// a failure.
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn serves_http2_on_its_port_until_dropped() {
    let s = HealthServer::start(&["-status", "svc=NOT_SERVING"]);
    let port = s.port();
    // An HTTP/2 client preface: a gRPC server answers with its SETTINGS frame (type 4).
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    c.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    c.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    let mut frame = [0u8; 9];
    c.read_exact(&mut frame).unwrap();
    assert_eq!(frame[3], 4, "first frame {frame:?} is not SETTINGS");
    drop(c);
    drop(s);
    // Dropping waited for the process to exit: nothing listens there any more.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "port {port} still open");
}

#[test]
#[should_panic(expected = "did not print its port")]
fn a_bad_flag_is_reported() {
    let _ = HealthServer::start(&["-status", "no-equals-sign"]);
}
