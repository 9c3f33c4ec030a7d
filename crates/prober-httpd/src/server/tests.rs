//! A panic anywhere in the server never leaves the process alive with dead endpoints: real
//! servers on loopback, real sockets, and a real child process for the last resort. Nothing
//! a client can send panics the server any more, so two test-only hooks make the panics: a
//! request starting with [`PANIC_IN_STEP`] panics its connection's step, and
//! [`PANIC_IN_ACCEPT`] panics the loop itself outside any connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::*;

/// A request that starts so panics the step of its connection (before its head is parsed).
const PANIC_IN_STEP: &[u8] = b"PANIC-IN-STEP";

/// Set: the loop panics the next time it accepts (outside any connection's guard).
static PANIC_IN_ACCEPT: AtomicBool = AtomicBool::new(false);

pub(super) fn panic_on(input: &[u8]) {
    assert!(!input.starts_with(PANIC_IN_STEP), "test hook: a bug in a connection's step");
}

pub(super) fn panic_if_asked() {
    assert!(!PANIC_IN_ACCEPT.load(Ordering::Relaxed), "test hook: a bug in the loop");
}

/// Set in the environment of the child process that is to abort.
const CHILD: &str = "PROBER_HTTPD_LOOP_PANIC_CHILD";

/// Longer than anything a test waits for.
const HANG: Duration = Duration::from_secs(30);

fn server() -> Running {
    let mut s = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    s.route("/ok", |_| Response::text(200, "ok\n"));
    s.route("/panic", |_| panic!("a handler's bug"));
    s.spawn("test-http").unwrap()
}

/// Sends `request` on a new connection and reads until the server closes it.
fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    // A reset (the connection dropped with input unread) ends it as well as a close.
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

const OK: &[u8] = b"GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n";

#[test]
fn a_panicking_handler_is_answered_500_and_the_server_goes_on() {
    let server = server();
    let answer = exchange(server.local_addr(), b"GET /panic HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 500 "), "{answer:?}");
    let answer = exchange(server.local_addr(), OK);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer:?}");
}

#[test]
fn a_panic_in_a_connections_step_closes_that_connection_only() {
    let server = server();
    // A connection that stays open across the panic is still served afterwards.
    let mut other = TcpStream::connect(server.local_addr()).unwrap();
    other.set_read_timeout(Some(HANG)).unwrap();
    let mut request = PANIC_IN_STEP.to_vec();
    request.extend_from_slice(b" / HTTP/1.1\r\n\r\n");
    assert_eq!(exchange(server.local_addr(), &request), "", "the panicking connection is closed");
    assert!(exchange(server.local_addr(), OK).starts_with("HTTP/1.1 200 "));
    other.write_all(OK).unwrap();
    let mut out = String::new();
    other.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200 "), "{out:?}");
}

/// The child half of [`a_panic_that_escapes_the_loop_aborts_the_process`]: a server whose
/// loop panics when it accepts.
#[test]
#[ignore = "run by a_panic_that_escapes_the_loop_aborts_the_process, in a child process"]
fn child_server_whose_loop_panics() {
    if std::env::var_os(CHILD).is_none() {
        eprintln!("the child half of a_panic_that_escapes_the_loop_aborts_the_process: not run");
        return;
    }
    let server = server();
    PANIC_IN_ACCEPT.store(true, Ordering::Relaxed);
    let _ = exchange(server.local_addr(), OK);
    // The process is aborted by now or soon; joining the thread would wait for that.
    std::thread::sleep(HANG);
    panic!("the process outlived its server thread's panic by {HANG:?}");
}

#[test]
fn a_panic_that_escapes_the_loop_aborts_the_process() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "server::tests::child_server_whose_loop_panics", "--ignored"])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(out.status.signal(), Some(6), "not aborted (SIGABRT): {:?}\n{stderr}", out.status);
    assert!(stderr.contains("test hook: a bug in the loop"), "{stderr}");
    assert!(stderr.contains("the HTTP server thread 'test-http' stopped: it panicked"), "{stderr}");
}
