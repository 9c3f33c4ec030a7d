//! [`KeepAliveServer`]: an HTTP/1.1 peer on loopback that keeps its connections, for the tests
//! of keep-alive probes ([`crate::TargetServer`] answers one request per connection).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Answers every request with 200 `ok` and `Content-Length: 2`, and keeps the connection open
/// for the next one; counts the connections and the requests it saw. Its threads end with the
/// test binary.
#[derive(Debug)]
pub struct KeepAliveServer {
    port: u16,
    counts: Arc<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    connections: AtomicU64,
    requests: AtomicU64,
}

impl KeepAliveServer {
    /// Binds a free port on 127.0.0.1 and serves on threads of its own.
    ///
    /// # Panics
    ///
    /// When no port on loopback can be bound.
    pub fn start() -> KeepAliveServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind on loopback");
        let port = listener.local_addr().expect("a bound address").port();
        let counts = Arc::new(Counts::default());
        let c = Arc::clone(&counts);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    while read_request_head(&mut stream, &mut buf) {
                        c.requests.fetch_add(1, Ordering::SeqCst);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        KeepAliveServer { port, counts }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// Requests answered so far, over all connections.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }
}

/// Reads from `stream` until `buf` (the bytes read so far and not yet consumed) holds a whole
/// request head, and drops that head from `buf`: a keep-alive peer's next request, bodies
/// aside. False once the client closed or the read failed.
pub fn read_request_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            return true;
        }
        match crate::threads::retry_interrupted(|| stream.read(&mut chunk)) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
