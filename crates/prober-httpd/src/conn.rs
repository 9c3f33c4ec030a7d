//! One connection: its byte stream (plain or TLS) and where its exchange stands.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::Instant;

use mio::net::TcpStream;
use rustls::ServerConnection;

use crate::pending::Waiter;
use crate::request::Request;

/// What Go's HTTP server answers plain HTTP sent to a TLS port (so a scraper configured for
/// `http://` is told why, instead of seeing a reset).
const PLAIN_ON_TLS: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// The most one read takes from a connection.
const READ_CHUNK: usize = 4096;

thread_local! {
    /// The buffer reads go through, one per server thread: zeroed once, not for every read
    /// (a connection is read two or three times per request).
    static READ_BUF: std::cell::RefCell<[u8; READ_CHUNK]> =
        const { std::cell::RefCell::new([0; READ_CHUNK]) };
}

/// The byte stream under the exchange.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls {
        sock: TcpStream,
        tls: Box<ServerConnection>,
        /// Whether the first byte was seen to be a TLS record.
        checked: bool,
    },
}

/// What `read_in` reports for plain HTTP on a TLS port.
#[derive(Debug)]
struct PlainOnTls;

impl std::fmt::Display for PlainOnTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("plain HTTP on a TLS port")
    }
}

impl std::error::Error for PlainOnTls {}

fn plain_on_tls() -> io::Error {
    io::Error::other(PlainOnTls)
}

/// Whether `e` is `read_in`'s report of plain HTTP on a TLS port.
pub(crate) fn is_plain_on_tls(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<PlainOnTls>())
}

impl Stream {
    pub(crate) fn sock(&mut self) -> &mut TcpStream {
        match self {
            Stream::Plain(s) | Stream::Tls { sock: s, .. } => s,
        }
    }

    /// Reads what is there into `buf`, at most `room` bytes: `Ok(0)` at the end of the
    /// stream, `WouldBlock` when nothing is there yet.
    pub(crate) fn read_in(&mut self, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
        READ_BUF.with_borrow_mut(|tmp| self.read_through(tmp, buf, room))
    }

    fn read_through(
        &mut self,
        tmp: &mut [u8; READ_CHUNK],
        buf: &mut Vec<u8>,
        room: usize,
    ) -> io::Result<usize> {
        let want = room.min(tmp.len());
        match self {
            Stream::Plain(sock) => loop {
                match sock.read(&mut tmp[..want]) {
                    Ok(n) => {
                        buf.extend_from_slice(&tmp[..n]);
                        return Ok(n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            },
            Stream::Tls { sock, tls, checked } => loop {
                match tls.reader().read(&mut tmp[..want]) {
                    Ok(n) => {
                        buf.extend_from_slice(&tmp[..n]);
                        return Ok(n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                // The handshake's own messages go out as they are made.
                flush_tls(sock, tls)?;
                if !*checked {
                    let mut first = [0u8; 1];
                    match sock.peek(&mut first) {
                        Ok(0) => return Ok(0),
                        // 0x16: a handshake record. Anything else is not TLS.
                        Ok(_) if first[0] != 0x16 => return Err(plain_on_tls()),
                        Ok(_) => *checked = true,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                }
                match tls.read_tls(sock) {
                    Ok(0) => return Ok(0),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
                if let Err(e) = tls.process_new_packets() {
                    // The alert that says why, if the socket takes it.
                    let _ = flush_tls(sock, tls);
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            },
        }
    }

    /// Sends `out` from `*written` on: `Ok(true)` once all of it is on the wire (for TLS:
    /// encrypted and handed to the socket), `Ok(false)` when the socket is full.
    pub(crate) fn write_out(&mut self, out: &[u8], written: &mut usize) -> io::Result<bool> {
        match self {
            Stream::Plain(sock) => {
                while *written < out.len() {
                    match sock.write(&out[*written..]) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => *written += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(true)
            }
            Stream::Tls { sock, tls, .. } => loop {
                if *written < out.len() {
                    *written += tls.writer().write(&out[*written..])?;
                }
                if !flush_tls(sock, tls)? {
                    return Ok(false);
                }
                if *written == out.len() {
                    return Ok(true);
                }
            },
        }
    }

    /// Ends the sending side: no more answers on this connection.
    pub(crate) fn finish(&mut self) {
        if let Stream::Tls { sock, tls, .. } = self {
            tls.send_close_notify();
            let _ = flush_tls(sock, tls);
        }
        let _ = self.sock().shutdown(Shutdown::Write);
    }
}

/// Writes what TLS has to send: `Ok(true)` when all of it went out.
fn flush_tls(sock: &mut TcpStream, tls: &mut ServerConnection) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Where the exchange stands.
#[derive(Debug)]
pub(crate) enum State {
    /// Waiting for (the rest of) a request head. `kept`: after an answer, before any byte of
    /// the next request (the idle timeout runs, not the header timeout).
    Head { kept: bool },
    /// The credentials are being checked off the loop; the request waits here.
    Auth { request: Box<Request>, close: bool },
    /// A deferred route's handler has the request; its [`crate::Reply`] comes back through
    /// the loop's waker.
    /// Dropping the state (answered, connection gone) drops its [`Waiter`] (held for that), which cancels the
    /// request if it was not answered.
    Deferred { head_only: bool, close: bool, _waiter: Waiter },
    /// Sending an answer; then the connection is kept, or closed when `close`.
    Writing { close: bool },
    /// Answered and closed for sending: what the client still sends is read and dropped
    /// until it closes too, so that closing does not reset the answer away before it is read.
    Lingering,
}

/// One connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) stream: Stream,
    pub(crate) input: Vec<u8>,
    /// How much of `input` has been searched for the end of the head.
    pub(crate) scanned: usize,
    pub(crate) output: Vec<u8>,
    pub(crate) written: usize,
    pub(crate) state: State,
    /// When the current phase's time is up.
    pub(crate) deadline: Instant,
    /// Since when the connection has waited for a request (which connection is dropped when
    /// the bound is reached: the one waiting longest).
    pub(crate) waiting_since: Instant,
    /// The last read found the socket empty, and no readiness was reported since: reading
    /// again would find nothing (readiness is edge-triggered: what arrives later is reported).
    /// Saves a read that fails with `WouldBlock` after each request and each answer.
    pub(crate) drained: bool,
    /// The peer's end was reported closed (or in error): reads go on until they see it.
    pub(crate) closing: bool,
}

impl Conn {
    pub(crate) fn new(stream: Stream, now: Instant, deadline: Instant) -> Conn {
        Conn {
            stream,
            input: Vec::new(),
            scanned: 0,
            output: Vec::new(),
            written: 0,
            state: State::Head { kept: false },
            deadline,
            waiting_since: now,
            drained: false,
            closing: false,
        }
    }

    /// Readiness reported for the connection: `readable` (bytes, the end of the stream or an
    /// error may be there to read) and `closed` (the peer's end closed or in error).
    pub(crate) fn ready(&mut self, readable: bool, closed: bool) {
        if readable || closed {
            self.drained = false;
        }
        self.closing |= closed;
    }

    /// [`Stream::read_in`] into `input`, noting when the socket is left empty: on `WouldBlock`,
    /// or when a plain socket gave less than asked (it had no more; bytes arriving after are
    /// reported), unless its end was reported closed (the end is then read too).
    ///
    /// Plain connections only: a TLS connection's reads also send what its handshake has to
    /// send when the socket takes it again, so it is read on every readiness, writable too.
    pub(crate) fn read_more(&mut self, room: usize) -> io::Result<usize> {
        let read = self.stream.read_in(&mut self.input, room);
        self.drained = self.is_plain()
            && match &read {
                Err(e) => e.kind() == io::ErrorKind::WouldBlock,
                Ok(n) => !self.closing && *n > 0 && *n < room.min(READ_CHUNK),
            };
        read
    }

    pub(crate) fn is_plain(&self) -> bool {
        matches!(self.stream, Stream::Plain(_))
    }

    /// Whether the connection may be dropped to make room: it is not in the middle of an
    /// answer.
    pub(crate) fn idle(&self) -> bool {
        matches!(self.state, State::Head { .. } | State::Lingering)
    }

    /// Answers plain HTTP on a TLS port (best effort: the socket is fresh and empty).
    pub(crate) fn refuse_plain(&mut self) {
        let sock = self.stream.sock();
        let _ = sock.write(PLAIN_ON_TLS);
        let _ = sock.shutdown(Shutdown::Write);
    }
}
