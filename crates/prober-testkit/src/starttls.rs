//! A line-protocol server with TLS, for TCP probes with TLS and STARTTLS (issue 25): SMTP's
//! shape, much reduced. [`LineMode::StartTls`]: the server greets with `220 ready`, answers
//! `STARTTLS` with `220 go ahead` and then shakes hands on the same connection (anything else
//! gets `502 no` and the connection ends). [`LineMode::Tls`]: TLS from the first byte. Inside
//! TLS, `PING` is answered `+PONG`. Every handshake is recorded, as [`crate::tls`]'s are.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::threads::{Restarting, lock};
use crate::tls::{Handshake, TlsServerOptions, accept_each, server_config};

/// When the server starts TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineMode {
    /// After `STARTTLS` in plain text.
    StartTls,
    /// From the first byte.
    Tls,
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    handshakes: Mutex<Vec<Handshake>>,
}

/// The server on `127.0.0.1` (see the module docs).
#[derive(Debug)]
pub struct StartTlsServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl StartTlsServer {
    /// Starts on `127.0.0.1:0`. Panics on failure (test helper).
    pub fn start(opts: TlsServerOptions, mode: LineMode) -> StartTlsServer {
        let config = Arc::new(server_config(opts));
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("prober-testkit: cannot listen on 127.0.0.1");
        let addr = listener.local_addr().expect("prober-testkit: local_addr");
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        let accept_thread = accept_each(
            listener,
            "prober-starttls",
            move || thread_shared.stop.load(Ordering::Acquire),
            {
                let shared = Arc::clone(&shared);
                move |stream| serve(stream, &config, &shared, mode)
            },
        );
        StartTlsServer { addr, shared, accept_thread: Some(accept_thread) }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every handshake so far, in the order they ended.
    pub fn handshakes(&self) -> Vec<Handshake> {
        lock(&self.shared.handshakes).clone()
    }

    /// Waits until at least `n` handshakes have ended (the server records one after the
    /// client may already have finished); returns them (possibly fewer on timeout).
    pub fn wait_for_handshakes(&self, n: usize, timeout: Duration) -> Vec<Handshake> {
        let end = std::time::Instant::now() + timeout;
        loop {
            let h = self.handshakes();
            if h.len() >= n || std::time::Instant::now() >= end {
                return h;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for StartTlsServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        drop(TcpStream::connect(self.addr));
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(tcp: TcpStream, config: &Arc<ServerConfig>, shared: &Shared, mode: LineMode) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(10)));
    let mut io = Restarting(tcp);
    if mode == LineMode::StartTls {
        if io.write_all(b"220 starttls.test ready\r\n").is_err() {
            return;
        }
        // Byte by byte up to the line's end: nothing after it may be read away from TLS.
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while !line.ends_with(b"\n") && line.len() < 1024 {
            match io.read(&mut b) {
                Ok(1) => line.push(b[0]),
                _ => return,
            }
        }
        if line.trim_ascii() != b"STARTTLS" {
            let _ = io.write_all(b"502 no\r\n");
            return;
        }
        if io.write_all(b"220 go ahead\r\n").is_err() {
            return;
        }
    }
    let Ok(mut tls) = ServerConnection::new(Arc::clone(config)) else { return };
    let mut record = Handshake::default();
    while tls.is_handshaking() {
        if let Err(e) = tls.complete_io(&mut io) {
            record.sni = tls.server_name().map(str::to_string);
            record.error = Some(e.to_string());
            while tls.wants_write() && tls.write_tls(&mut io).is_ok() {}
            lock(&shared.handshakes).push(record);
            return;
        }
    }
    record.sni = tls.server_name().map(str::to_string);
    record.client_cert = tls.peer_certificates().is_some_and(|c| !c.is_empty());
    lock(&shared.handshakes).push(record);
    let mut stream = BufReader::new(StreamOwned::new(tls, io));
    let mut line = String::new();
    while stream.read_line(&mut line).is_ok_and(|n| n > 0) {
        let answer: &[u8] = if line.trim() == "PING" { b"+PONG\r\n" } else { b"-ERR\r\n" };
        if stream.get_mut().write_all(answer).and_then(|()| stream.get_mut().flush()).is_err() {
            return;
        }
        line.clear();
    }
}
