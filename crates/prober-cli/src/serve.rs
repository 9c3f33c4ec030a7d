//! `prober serve --config FILE --listen ADDR`: blackbox_exporter's `/probe` interface
//! (`prober_blackbox`) over HTTP.
//!
//! The HTTP side here is deliberately small: a thread per connection, at most
//! [`MAX_CONNECTIONS`] at once, one request per connection. Probes do not run on these
//! threads: each request waits for its outcome from the one engine thread, which runs them
//! all. (The shared metrics server with per-connection deadlines, TLS and basic auth, being
//! built for `--web-config`, is meant to replace this loop; the exporter is a plain function
//! of the request so that the change is small.)

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use prober_blackbox::{Exporter, Modules, Request};

use crate::args::{Failure, Parser, Token};

/// Connections served at once; more are answered 503 at once.
pub const MAX_CONNECTIONS: usize = 256;
/// The largest request head read.
const MAX_HEAD: usize = 16 << 10;
/// How long a client may take to send its request head, and to read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// What `prober serve` was asked.
#[derive(Debug)]
pub struct ServeArgs {
    config: PathBuf,
    listen: SocketAddr,
    timeout_offset: Duration,
}

/// Parses `prober serve` options; `None` after `--help`.
pub fn parse(mut p: Parser) -> Result<Option<ServeArgs>, Failure> {
    let (mut config, mut listen, mut offset) =
        (None, None, prober_blackbox::DEFAULT_TIMEOUT_OFFSET);
    while let Some(tok) = p.next()? {
        match tok {
            Token::Option(o) if o == "-h" || o == "--help" => {
                print!("{}", crate::usage::SERVE);
                return Ok(None);
            }
            Token::Option(o) if o == "--config" => config = Some(PathBuf::from(p.value(&o)?)),
            Token::Option(o) if o == "--listen" => {
                let v = p.value(&o)?;
                let v = v.to_string_lossy();
                listen = Some(
                    crate::metrics::parse_addr(&v)
                        .map_err(|e| p.usage(format!("--listen: {e}")))?,
                );
            }
            Token::Option(o) if o == "--timeout-offset" => {
                let v: OsString = p.value(&o)?;
                offset = crate::duration::parse(&v.to_string_lossy())
                    .map_err(|e| p.usage(format!("--timeout-offset: {e}")))?;
            }
            Token::Option(o) => return Err(p.usage(format!("unknown option '{o}'"))),
            Token::Value(v) => {
                return Err(p.usage(format!("unexpected argument '{}'", v.to_string_lossy())));
            }
        }
    }
    let config = config.ok_or_else(|| p.usage("missing --config FILE"))?;
    let listen = listen.ok_or_else(|| p.usage("missing --listen ADDR"))?;
    Ok(Some(ServeArgs { config, listen, timeout_offset: offset }))
}

/// Loads the modules, starts the engine and serves until the process is ended.
pub fn run(a: &ServeArgs) -> Result<i32, Failure> {
    let text = std::fs::read(&a.config).map_err(|e| {
        Failure::no_input(format!("{}: {}", a.config.display(), prober_core::os_error_text(&e)))
    })?;
    let text = String::from_utf8(text)
        .map_err(|_| Failure::input(format!("{}: not UTF-8", a.config.display())))?;
    let base = a.config.parent().unwrap_or(Path::new("."));
    let modules = Modules::parse(&text, base)
        .map_err(|e| Failure::input(format!("{}: {e}", a.config.display())))?;
    let mut exporter = Exporter::start(modules)
        .map_err(|e| Failure::software(format!("cannot start the engine: {e}")))?;
    exporter.set_timeout_offset(a.timeout_offset);
    let cannot =
        |e: io::Error| Failure::software(format!("--listen: cannot listen on {}: {e}", a.listen));
    let listener = TcpListener::bind(a.listen).map_err(cannot)?;
    let bound = listener.local_addr().map_err(cannot)?;
    eprintln!("prober serve: listening on {bound}");
    let exporter = Arc::new(exporter);
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Out of descriptors: wait instead of spinning.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::AcqRel);
            let mut s = stream;
            let _ = s.write_all(&response(503, "text/plain", "too many connections\n"));
            continue;
        }
        let (ex, count) = (exporter.clone(), open.clone());
        let spawned = std::thread::Builder::new().name("serve-conn".into()).spawn(move || {
            let _ = answer(stream, &ex);
            count.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn answer(mut stream: TcpStream, exporter: &Exporter) -> io::Result<()> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    let end = loop {
        if let Some(end) = req.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if req.len() > MAX_HEAD {
            return stream.write_all(&response(431, "text/plain", "request too large\n"));
        }
        let left = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero());
        stream.set_read_timeout(Some(left.ok_or(io::ErrorKind::TimedOut)?))?;
        let n = match stream.read(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Ok(());
        }
        req.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&req[..end]);
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let out = if method != "GET" && method != "HEAD" {
        response(405, "text/plain", "method not allowed\n")
    } else {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let r = exporter.handle(&Request { path, query, headers: &headers });
        let mut bytes = response(r.status, r.content_type, &r.body);
        if method == "HEAD" {
            let cut =
                bytes.windows(4).position(|w| w == b"\r\n\r\n").map_or(bytes.len(), |p| p + 4);
            bytes.truncate(cut);
        }
        bytes
    };
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    stream.write_all(&out)
}

fn response(status: u16, content_type: &str, body: &str) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}
