//! A scripted line-protocol server, for multi-step TCP probes (blackbox_exporter's
//! `query_response`: SMTP and IMAP with STARTTLS, IRC, SSH and POP3 banners). Each connection
//! plays the script: [`Act::Say`] writes bytes, [`Act::Hear`] reads one line and checks it
//! (any other line is answered `ERR unexpected` and the connection ends), [`Act::StartTls`]
//! shakes hands on the connection, [`Act::Close`] ends it. Every line heard and every
//! handshake is recorded, so a test asserts what the probe sent.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::threads::{Restarting, lock};
use crate::tls::{Handshake, TlsServerOptions, accept_each, server_config};

/// One move of the server's script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// Write these bytes.
    Say(Vec<u8>),
    /// Read one line (up to `\n`, at most 1024 bytes) and check it equals this text once its
    /// `\n` and a `\r` before it are removed.
    Hear(String),
    /// Shake hands as a TLS server on the connection (the script's TLS options).
    StartTls,
    /// End the connection (also what the script's end does).
    Close,
}

impl Act {
    /// [`Act::Say`] of text.
    pub fn say(text: &str) -> Act {
        Act::Say(text.as_bytes().to_vec())
    }

    /// [`Act::Hear`] of text.
    pub fn hear(text: &str) -> Act {
        Act::Hear(text.to_string())
    }
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    heard: Mutex<Vec<Vec<u8>>>,
    handshakes: Mutex<Vec<Handshake>>,
}

/// The server on `127.0.0.1` (see the module docs).
#[derive(Debug)]
pub struct ScriptServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl ScriptServer {
    /// Starts on `127.0.0.1:0`, playing `script` on every connection; `tls`: the options of
    /// [`Act::StartTls`] (and of TLS from the first byte with `tls_first`). Panics on failure
    /// (test helper).
    pub fn start(script: Vec<Act>, tls: Option<TlsServerOptions>, tls_first: bool) -> ScriptServer {
        let config = tls.map(|o| Arc::new(server_config(o)));
        assert!(config.is_some() || !tls_first, "prober-testkit: TLS first needs TLS options");
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("prober-testkit: cannot listen on 127.0.0.1");
        let addr = listener.local_addr().expect("prober-testkit: local_addr");
        let shared = Arc::new(Shared::default());
        let stop = Arc::clone(&shared);
        let accept_thread =
            accept_each(listener, "prober-script", move || stop.stop.load(Ordering::Acquire), {
                let shared = Arc::clone(&shared);
                move |stream| {
                    let mut script = script.clone();
                    if tls_first {
                        script.insert(0, Act::StartTls);
                    }
                    play(stream, &script, config.as_ref(), &shared);
                }
            });
        ScriptServer { addr, shared, accept_thread: Some(accept_thread) }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every line heard so far, on all connections, in order, as received (with its line end).
    pub fn heard(&self) -> Vec<Vec<u8>> {
        lock(&self.shared.heard).clone()
    }

    /// Waits until at least `n` lines were heard (the server reads the probe's last line
    /// after the probe may have finished); returns them (possibly fewer on timeout).
    pub fn wait_heard(&self, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let end = Instant::now() + timeout;
        loop {
            let h = self.heard();
            if h.len() >= n || Instant::now() >= end {
                return h;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every handshake so far, in the order they ended.
    pub fn handshakes(&self) -> Vec<Handshake> {
        lock(&self.shared.handshakes).clone()
    }
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        drop(TcpStream::connect(self.addr));
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

/// The connection, plain or TLS.
enum Conn {
    Plain(Restarting<TcpStream>),
    Tls(Box<StreamOwned<ServerConnection, Restarting<TcpStream>>>),
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

fn play(tcp: TcpStream, script: &[Act], config: Option<&Arc<ServerConfig>>, shared: &Shared) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(10)));
    let mut conn = Conn::Plain(Restarting(tcp));
    for act in script {
        match act {
            Act::Say(bytes) => {
                if conn.write_all(bytes).and_then(|()| conn.flush()).is_err() {
                    return;
                }
            }
            Act::Hear(want) => {
                // Byte by byte up to the line's end: nothing after it may be read away from a
                // TLS handshake that follows.
                let mut line = Vec::new();
                let mut b = [0u8; 1];
                while !line.ends_with(b"\n") && line.len() < 1024 {
                    match conn.read(&mut b) {
                        Ok(1) => line.push(b[0]),
                        _ => return,
                    }
                }
                lock(&shared.heard).push(line.clone());
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                if text != want.as_bytes() {
                    let _ = conn.write_all(b"ERR unexpected\r\n");
                    return;
                }
            }
            Act::StartTls => {
                let (Some(config), Conn::Plain(io)) = (config, conn) else { return };
                let Ok(tls) = ServerConnection::new(Arc::clone(config)) else { return };
                let mut stream = StreamOwned::new(tls, io);
                let mut record = Handshake::default();
                while stream.conn.is_handshaking() {
                    if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
                        record.error = Some(e.to_string());
                        break;
                    }
                }
                record.sni = stream.conn.server_name().map(str::to_string);
                let failed = record.error.is_some();
                lock(&shared.handshakes).push(record);
                if failed {
                    return;
                }
                conn = Conn::Tls(Box::new(stream));
            }
            Act::Close => return,
        }
    }
}
