//! `prober-soak --serve-keep-alive`: the keep-alive peers of the soak, run in a process of their
//! own (started by the soak itself) so that their threads and sockets are not counted with the
//! engine's.
//!
//! Two servers on 127.0.0.1, their ports printed on one line (`KEEP CHURN`):
//!
//! - KEEP: [`prober_testkit::keep_alive::KeepAliveServer`], which answers every request with
//!   200 and keeps every connection: reuse without churn.
//! - CHURN: a keep-alive server that ends each connection after a few requests (1 to 7, by
//!   connection number), in one of four ways by connection number: it answers with
//!   `Connection: close` and closes; it answers and closes without saying so (a FIN on a
//!   connection the client keeps: the client finds it closed before reuse, or its reuse reads
//!   an EOF and dials again); it answers and resets (an RST on a kept connection); or it
//!   resets instead of answering a request that is not the connection's first (the reused
//!   connection fails before any response byte: the retry-once path). The first request on a
//!   connection is always answered, so a retried run always succeeds.
//!
//! Both serve until stdin reaches its end; then one line of the churn server's counts is
//! printed and the process exits.

use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prober_testkit::keep_alive::{KeepAliveServer, read_request_head};

/// How a churn connection ends.
#[derive(Clone, Copy)]
enum Ending {
    /// Last answer says `Connection: close`, then a FIN.
    CloseHeader,
    /// Last answer as any other, then a FIN.
    SilentClose,
    /// Last answer as any other, then an RST.
    ResetAfterAnswer,
    /// The request after the last answer gets an RST instead of an answer.
    ResetUnanswered,
}

#[derive(Default)]
struct ChurnCounts {
    connections: AtomicU64,
    answered: AtomicU64,
    close_header: AtomicU64,
    silent_close: AtomicU64,
    reset_after_answer: AtomicU64,
    reset_unanswered: AtomicU64,
}

/// Serves both peers until stdin ends (see the module docs).
///
/// # Errors
///
/// When the churn server cannot bind on loopback, or stdout cannot be written.
pub fn serve() -> Result<(), String> {
    let keep = KeepAliveServer::start();
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    let churn_port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let counts = Arc::new(ChurnCounts::default());
    let c = Arc::clone(&counts);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { continue };
            c.connections.fetch_add(1, Ordering::Relaxed);
            let c = Arc::clone(&c);
            std::thread::spawn(move || churn_connection(stream, n as u64, &c));
        }
    });
    let mut out = std::io::stdout();
    writeln!(out, "{} {churn_port}", keep.port()).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    let mut sink = String::new();
    let stdin = std::io::stdin();
    while stdin.lock().read_line(&mut sink).is_ok_and(|n| n > 0) {
        sink.clear();
    }
    let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
    writeln!(
        out,
        "keep server: {} connections, {} requests; churn server: {} connections, {} answered, ended by Connection: close {}, silent close {}, reset after an answer {}, reset instead of an answer {}",
        keep.connections(),
        keep.requests(),
        l(&counts.connections),
        l(&counts.answered),
        l(&counts.close_header),
        l(&counts.silent_close),
        l(&counts.reset_after_answer),
        l(&counts.reset_unanswered),
    )
    .map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

/// Serves connection number `n` of the churn server (see the module docs).
fn churn_connection(mut stream: TcpStream, n: u64, c: &ChurnCounts) {
    let ending = match n % 4 {
        0 => Ending::CloseHeader,
        1 => Ending::SilentClose,
        2 => Ending::ResetAfterAnswer,
        _ => Ending::ResetUnanswered,
    };
    // Answers on this connection before it ends: 1 to 7.
    let answers = 1 + (n / 4) % 7;
    let reset = |s: &TcpStream| {
        let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
    };
    let mut buf = Vec::new();
    let mut served = 0u64;
    while read_request_head(&mut stream, &mut buf) {
        if served == answers {
            // Only ResetUnanswered reads a request past its last answer; `served` is at
            // least 1 here, so this is never the connection's first request.
            c.reset_unanswered.fetch_add(1, Ordering::Relaxed);
            reset(&stream);
            return;
        }
        served += 1;
        let last = served == answers;
        let answer: &[u8] = if last && matches!(ending, Ending::CloseHeader) {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        };
        if stream.write_all(answer).is_err() {
            return;
        }
        c.answered.fetch_add(1, Ordering::Relaxed);
        if last {
            match ending {
                Ending::CloseHeader => {
                    c.close_header.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ending::SilentClose => {
                    c.silent_close.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ending::ResetAfterAnswer => {
                    c.reset_after_answer.fetch_add(1, Ordering::Relaxed);
                    reset(&stream);
                    return;
                }
                // Keeps reading: the next request gets the reset.
                Ending::ResetUnanswered => {}
            }
        }
    }
}
