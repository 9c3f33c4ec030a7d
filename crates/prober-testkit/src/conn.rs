//! One connection: read the head, route, then end the way the route asks (FIN, RST or hold).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::request::Head;
use crate::request::{self, MAX_HEAD};
use crate::shared::Shared;

/// What answers a request: the routes of the target server (`routes::respond`).
pub(crate) type Respond = fn(&mut Conn, &Head<'_>) -> io::Result<End>;

/// How long a connection may stay without sending its request head.
const HEAD_WAIT: Duration = Duration::from_secs(60);
/// After FIN, how long to read and discard what the client still sends before closing.
const LINGER: Duration = Duration::from_secs(2);
/// Upper bound of one blocking read, so a stop is noticed even if a wake-up is missed.
const READ_SLICE: Duration = Duration::from_millis(500);

/// How a route wants the connection to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Send FIN, drain what the client sends until it closes (bounded), close.
    Finish,
    /// Abortive close: SO_LINGER 0 then close, the client gets RST.
    Reset,
    /// Say nothing more; keep the connection until the client closes or the time runs out.
    Hold(Duration),
    /// Close now (after a write error or a stop).
    Abort,
}

/// What a read observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Got {
    Data(usize),
    Eof,
    Reset,
    TimedOut,
    Stopped,
    Failed,
}

#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) shared: Arc<Shared>,
    id: u64,
    stream: Option<Arc<TcpStream>>,
    received: u64,
    client_closed: bool,
    client_reset: bool,
    /// The request was `HEAD`: simple routes send no body.
    pub(crate) head_only: bool,
    /// Bytes received after the request head (the start of a request body).
    pub(crate) after_head: Vec<u8>,
}

impl Conn {
    pub(crate) fn new(shared: Arc<Shared>, id: u64, stream: Arc<TcpStream>) -> Conn {
        Conn {
            shared,
            id,
            stream: Some(stream),
            received: 0,
            client_closed: false,
            client_reset: false,
            head_only: false,
            after_head: Vec::new(),
        }
    }

    pub(crate) fn stream(&self) -> &TcpStream {
        self.stream.as_deref().expect("stream present until drop")
    }

    /// Serves the connection to its end, answering its request with `respond`; dropping `self`
    /// closes the socket and updates counters.
    pub(crate) fn serve(mut self, respond: Respond) {
        let end = self.exchange(respond);
        match end {
            End::Finish => self.finish(),
            End::Reset => self.reset(),
            End::Hold(d) => self.hold(d),
            End::Abort => {}
        }
    }

    fn exchange(&mut self, respond: Respond) -> End {
        let mut head = Vec::with_capacity(1024);
        let mut chunk = [0u8; 4096];
        let until = deadline(HEAD_WAIT);
        let end = loop {
            match self.read(&mut chunk, until) {
                Got::Data(n) => {
                    let from = head.len().saturating_sub(3);
                    head.extend_from_slice(&chunk[..n]);
                    if let Some(end) = request::find_head_end(&head, from) {
                        break end;
                    }
                    if head.len() > MAX_HEAD {
                        return self.plain_error(431, "request head too large");
                    }
                }
                _ => return End::Abort,
            }
        };
        if end > MAX_HEAD {
            return self.plain_error(431, "request head too large");
        }
        let req = match request::parse_head(&head[..end]) {
            Ok(req) => req,
            Err(why) => return self.plain_error(400, why),
        };
        self.shared.count_request();
        self.head_only = req.method == "HEAD";
        self.after_head = head[end..].to_vec();
        respond(self, &req).unwrap_or(End::Abort)
    }

    fn plain_error(&mut self, status: u16, body: &str) -> End {
        simple(self, status, &[], body.as_bytes()).unwrap_or(End::Abort)
    }

    /// Reads once (retrying timeouts and interrupts) until data, EOF, reset, `until` or a stop.
    pub(crate) fn read(&mut self, buf: &mut [u8], until: Instant) -> Got {
        loop {
            if self.shared.is_stopped() {
                return Got::Stopped;
            }
            let now = Instant::now();
            if now >= until {
                return Got::TimedOut;
            }
            let _ = self.stream().set_read_timeout(Some((until - now).min(READ_SLICE)));
            match self.stream().read(buf) {
                Ok(0) if self.shared.is_stopped() => return Got::Stopped,
                Ok(0) => {
                    self.client_closed = true;
                    return Got::Eof;
                }
                Ok(n) => {
                    self.received += n as u64;
                    return Got::Data(n);
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::ConnectionReset => {
                        self.client_closed = true;
                        self.client_reset = true;
                        return Got::Reset;
                    }
                    io::ErrorKind::WouldBlock
                    | io::ErrorKind::TimedOut
                    | io::ErrorKind::Interrupted => {}
                    _ => return Got::Failed,
                },
            }
        }
    }

    /// The request body announced by `Content-Length` (at most 64 KiB; none without the
    /// header), read within [`HEAD_WAIT`]; `None` if it did not all arrive.
    pub(crate) fn read_body(&mut self, content_length: Option<&[u8]>) -> Option<Vec<u8>> {
        let want: usize = match content_length {
            None => 0,
            Some(v) => std::str::from_utf8(v).ok()?.parse().ok().filter(|n| *n <= 64 * 1024)?,
        };
        let mut body = std::mem::take(&mut self.after_head);
        let until = deadline(HEAD_WAIT);
        let mut chunk = [0u8; 4096];
        while body.len() < want {
            match self.read(&mut chunk, until) {
                Got::Data(n) => body.extend_from_slice(&chunk[..n]),
                _ => return None,
            }
        }
        body.truncate(want);
        Some(body)
    }

    pub(crate) fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        self.stream().write_all(bytes)
    }

    /// FIN, then read and discard until the client closes (at most [`LINGER`]).
    fn finish(&mut self) {
        // Drain even when the shutdown fails: it fails when the client has already reset the
        // connection, and only the read that follows sees (and counts) that reset.
        let _ = self.stream().shutdown(Shutdown::Write);
        self.drain(deadline(LINGER));
    }

    fn drain(&mut self, until: Instant) {
        let mut buf = [0u8; 4096];
        while let Got::Data(_) = self.read(&mut buf, until) {}
    }

    /// Stays silent, reading and discarding, until the client closes or `d` passes.
    fn hold(&mut self, d: Duration) {
        self.drain(deadline(d));
    }

    /// SO_LINGER 0; the close on drop then sends RST.
    fn reset(&self) {
        let _ = socket2::SockRef::from(self.stream()).set_linger(Some(Duration::ZERO));
    }

    /// Waits (at most `max`) until the client has acknowledged everything written, so an abortive
    /// close right after does not discard data still queued in the send buffer.
    pub(crate) fn wait_acked(&self, max: Duration) {
        let until = deadline(max);
        while Instant::now() < until && !self.shared.is_stopped() {
            match unacked_bytes(self.stream()) {
                Some(0) | None => return,
                Some(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        drop(self.stream.take());
        let silent = self.client_closed && self.received == 0;
        self.shared.connection_ended(self.id, silent, self.client_reset);
    }
}

/// Bytes written but not yet acknowledged by the peer (Linux `SIOCOUTQ`); `None` elsewhere.
#[cfg(target_os = "linux")]
fn unacked_bytes(stream: &TcpStream) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (== SIOCOUTQ) on a TCP socket writes one c_int through the pointer, which
    // points to `n`, live for the whole call; the descriptor is owned by `stream`.
    let r = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut n as *mut libc::c_int) };
    (r == 0).then(|| u64::try_from(n).unwrap_or(0))
}

#[cfg(not(target_os = "linux"))]
fn unacked_bytes(_stream: &TcpStream) -> Option<u64> {
    std::thread::sleep(Duration::from_millis(50));
    None
}

/// The reason phrase of a status, for status lines.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Statuses that never carry a body (nor Content-Length here).
fn bodyless(status: u16) -> bool {
    status < 200 || status == 204 || status == 304
}

/// A complete response with a small in-memory body, `Content-Length` and `Connection: close`.
pub(crate) fn simple(
    conn: &Conn,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<End> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        let _ = write!(out, "{n}: {v}\r\n");
    }
    let no_body = bodyless(status);
    if !no_body {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut out = out.into_bytes();
    if !no_body && !conn.head_only {
        out.extend_from_slice(body);
    }
    conn.write_all(&out)?;
    Ok(End::Finish)
}

/// A deadline `d` from now.
fn deadline(d: Duration) -> Instant {
    Instant::now() + d
}
