//! A sans-I/O HTTP/2 client connection (RFC 9113) for exactly one request, on stream 1.
//!
//! [`Client::new`] queues the connection preface and our SETTINGS (push disabled; every other
//! setting at its default). The request waits for the server's SETTINGS, which is also when
//! the connection counts as established (as grpc-go's client does): then the SETTINGS ACK, the
//! request's HEADERS (split into CONTINUATION frames when larger than the peer's frame size)
//! and its DATA (split by the peer's frame size, sent as the flow-control windows allow, the
//! last frame with END_STREAM).
//!
//! Received: SETTINGS (applied and acknowledged), PING (answered), WINDOW_UPDATE (opens our
//! send windows), HEADERS and CONTINUATION (every block goes through the HPACK decoder, so its
//! table stays in step with the server's; on stream 1 the first final block is the response
//! head, a later one the trailers), DATA on stream 1, RST_STREAM on stream 1, GOAWAY (an error
//! when our stream was not processed, otherwise remembered for a later EOF), PRIORITY and
//! unknown frame types (ignored). PUSH_PROMISE is an error: push is disabled.
//!
//! Limits against a hostile server: [`Client::process`] handles at most a [`Budget`] of frames
//! and bytes per call (the poll loop yields between calls), and at most [`MAX_INTERIM`]
//! informational (1xx) heads are skipped before the final one.
//!
//! We never send WINDOW_UPDATE: a health response is a few bytes, far below the 65535-byte
//! initial windows, and a response that would exceed them is refused as a flow-control error.
//! The exchange is done when stream 1 ends (END_STREAM); the owner then closes the connection.

use std::fmt;

use crate::frame::{
    CONTINUATION, DATA, FLAG_ACK, FLAG_END_HEADERS, FLAG_END_STREAM, FLAG_PRIORITY, FRAME_HEADER,
    GOAWAY, HEADERS, INITIAL_WINDOW, MAX_FRAME, MAX_HEADER_LIST, MAX_WINDOW, PING, PREFACE,
    PRIORITY, PUSH_PROMISE, RST_STREAM, SETTINGS, SETTINGS_ENABLE_PUSH,
    SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE, WINDOW_UPDATE, error_code_name,
    push_frame, unpad,
};
use crate::hpack;

/// The one stream a client opens.
const STREAM: u32 = 1;

/// One request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `:method` (`POST` for gRPC).
    pub method: String,
    /// `:scheme` (`http` or `https`).
    pub scheme: String,
    /// `:authority` (`host:port`).
    pub authority: String,
    /// `:path` (the RPC's method path).
    pub path: String,
    /// Regular header fields (lower-case names), after the pseudo-headers.
    pub headers: Vec<(String, String)>,
    /// The request's DATA (one gRPC message).
    pub body: Vec<u8>,
}

/// What came back on stream 1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// The final response head (for a trailers-only response, also the trailers).
    pub headers: Vec<(String, String)>,
    /// The DATA received on stream 1.
    pub data: Vec<u8>,
    /// The trailing header block, if one came.
    pub trailers: Option<Vec<(String, String)>>,
}

impl Response {
    /// The `:status` value.
    pub fn status(&self) -> Option<u16> {
        header(&self.headers, ":status").and_then(|s| s.parse().ok())
    }
}

/// The first value of `name` (lower case) in `fields`.
pub fn header<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Why the exchange failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum H2Error {
    /// The server does not speak HTTP/2: its first bytes are not a SETTINGS frame.
    NotHttp2(String),
    /// The server broke the protocol.
    Protocol(String),
    /// The server reset stream 1 with this error code.
    Reset(u32),
    /// The server said GOAWAY without processing our stream, or closed after GOAWAY.
    GoAway {
        /// The last stream the server says it processed.
        last_stream: u32,
        /// The GOAWAY error code.
        code: u32,
        /// Its debug data, as text.
        debug: String,
    },
    /// The connection ended before the server's SETTINGS (`preface == true`) or before the
    /// end of the response.
    Eof {
        /// The server's SETTINGS had not arrived.
        preface: bool,
    },
}

impl fmt::Display for H2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            H2Error::NotHttp2(what) => write!(f, "the server does not speak HTTP/2: {what}"),
            H2Error::Protocol(m) => write!(f, "http2: {m}"),
            H2Error::Reset(code) => write!(
                f,
                "stream terminated by RST_STREAM with error code: {}",
                error_code_name(*code)
            ),
            // A graceful GOAWAY that leaves our stream (1) unprocessed: grpc-go's words.
            H2Error::GoAway { last_stream: 0, code: 0, .. } => {
                f.write_str("the connection is draining")
            }
            H2Error::GoAway { last_stream, code, debug } => {
                write!(f, "the server sent GOAWAY (error code {}", error_code_name(*code))?;
                write!(f, ", last stream {last_stream}")?;
                if !debug.is_empty() {
                    write!(f, ", debug data {debug:?}")?;
                }
                f.write_str(")")
            }
            H2Error::Eof { preface: true } => {
                f.write_str("connection closed before server preface received")
            }
            H2Error::Eof { preface: false } => f.write_str("EOF"),
        }
    }
}

impl std::error::Error for H2Error {}

/// Where the exchange stands after new bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More bytes are needed.
    Pending,
    /// Stream 1 has ended: take the response.
    Done,
}

/// Where a budgeted [`Client::process`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Every whole frame received so far is handled: read more.
    Pending,
    /// The budget is spent and whole frames may still be buffered: call [`Client::process`]
    /// again with a fresh budget, after giving other work its turn. Read nothing meanwhile, so
    /// that the buffer does not grow.
    Budget,
    /// Stream 1 has ended: take the response.
    Done,
}

/// How much received work one [`Client::process`] call may do. A server can send frames of
/// nine bytes (empty DATA, PING, SETTINGS, WINDOW_UPDATE, tiny HEADERS) as fast as the link
/// carries them; without a bound, one connection's backlog holds its caller's thread for as
/// long as it takes to handle all of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Frames still allowed.
    pub frames: usize,
    /// Frame bytes (header and payload) still allowed; the frame that crosses it is handled
    /// whole, so a call handles at most this plus one frame.
    pub bytes: usize,
}

impl Budget {
    /// What one turn of a poll loop allows a connection: [`FRAMES_PER_TURN`] frames and
    /// [`BYTES_PER_TURN`] bytes.
    pub const PER_TURN: Budget = Budget { frames: FRAMES_PER_TURN, bytes: BYTES_PER_TURN };
    /// No bound (for callers that hold all the input already, such as tests).
    pub const UNBOUNDED: Budget = Budget { frames: usize::MAX, bytes: usize::MAX };

    fn spent(&self) -> bool {
        self.frames == 0 || self.bytes == 0
    }
}

/// Frames handled per turn ([`Budget::PER_TURN`]). Handling a small frame costs well under a
/// microsecond, so 128 of them stay far below a millisecond, while a healthy response (SETTINGS,
/// its ACK, WINDOW_UPDATE, HEADERS, DATA, trailers) needs fewer than ten.
pub const FRAMES_PER_TURN: usize = 128;
/// Frame bytes handled per turn ([`Budget::PER_TURN`]): the cost of large frames is their
/// bytes (copying, HPACK and Huffman decoding), about 0.1 ms for 64 KiB.
pub const BYTES_PER_TURN: usize = 64 * 1024;
/// Informational (1xx) response heads accepted before the final one, as Go's HTTP/1 and
/// HTTP/2 clients (`max1xxResponses`) and this library's HTTP/1 parser: a server that keeps
/// sending them is refused rather than read until the deadline.
pub const MAX_INTERIM: u32 = 5;

/// A header block being received in HEADERS + CONTINUATION frames.
#[derive(Debug)]
struct PartialBlock {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// The client side of one connection carrying one request.
#[derive(Debug)]
pub struct Client {
    request: Option<Request>,
    out: Vec<u8>,
    inbuf: Vec<u8>,
    decoder: hpack::Decoder,
    connected: bool,
    // Sending the body.
    body: Vec<u8>,
    body_sent: usize,
    end_sent: bool,
    conn_send_window: i64,
    stream_send_window: i64,
    peer_initial_window: i64,
    peer_max_frame: usize,
    // Receiving.
    partial: Option<PartialBlock>,
    recv_window_used: i64,
    response: Response,
    head_seen: bool,
    /// Informational (1xx) heads skipped so far.
    interim: u32,
    ended: bool,
    goaway: Option<H2Error>,
}

impl Client {
    /// A connection that will send `request`; the preface and SETTINGS are queued.
    pub fn new(request: Request) -> Client {
        let mut out = PREFACE.to_vec();
        let mut settings = Vec::new();
        settings.extend_from_slice(&SETTINGS_ENABLE_PUSH.to_be_bytes());
        settings.extend_from_slice(&0u32.to_be_bytes());
        push_frame(&mut out, SETTINGS, 0, 0, &settings);
        Client {
            request: Some(request),
            out,
            inbuf: Vec::new(),
            decoder: hpack::Decoder::default(),
            connected: false,
            body: Vec::new(),
            body_sent: 0,
            end_sent: false,
            conn_send_window: INITIAL_WINDOW,
            stream_send_window: INITIAL_WINDOW,
            peer_initial_window: INITIAL_WINDOW,
            peer_max_frame: MAX_FRAME,
            partial: None,
            recv_window_used: 0,
            response: Response::default(),
            head_seen: false,
            interim: 0,
            ended: false,
            goaway: None,
        }
    }

    /// Bytes waiting to be sent.
    pub fn pending_output(&self) -> &[u8] {
        &self.out
    }

    /// `n` bytes of [`Client::pending_output`] were sent.
    pub fn consume_output(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    /// Whether the server's SETTINGS arrived (the connection is established).
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Whether the response head arrived.
    pub fn has_response_head(&self) -> bool {
        self.head_seen
    }

    /// The response so far (complete after [`Progress::Done`]).
    pub fn response(&self) -> &Response {
        &self.response
    }

    /// The response, once the stream has ended.
    pub fn into_response(self) -> Response {
        self.response
    }

    /// Processes received bytes, all of them: for input already at hand. A poll loop uses
    /// [`Client::push`] and a budgeted [`Client::process`] instead.
    ///
    /// # Errors
    /// As [`Client::process`].
    pub fn receive(&mut self, bytes: &[u8]) -> Result<Progress, H2Error> {
        self.push(bytes);
        let mut unbounded = Budget::UNBOUNDED;
        match self.process(&mut unbounded)? {
            Turn::Done => Ok(Progress::Done),
            // An unbounded budget is never spent (every frame is at least one byte).
            Turn::Pending | Turn::Budget => Ok(Progress::Pending),
        }
    }

    /// Buffers received bytes for [`Client::process`].
    pub fn push(&mut self, bytes: &[u8]) {
        if !self.ended {
            self.inbuf.extend_from_slice(bytes);
        }
    }

    /// Handles the whole frames buffered by [`Client::push`] until they run out or `budget`
    /// is spent; every frame handled takes one frame and its size in bytes from `budget`.
    ///
    /// # Errors
    /// The server is not HTTP/2, broke the protocol, reset the stream or went away.
    pub fn process(&mut self, budget: &mut Budget) -> Result<Turn, H2Error> {
        if self.ended {
            return Ok(Turn::Done);
        }
        if !self.connected && !self.check_preface()? {
            return Ok(Turn::Pending);
        }
        let mut pos = 0;
        let result = loop {
            let rest = &self.inbuf[pos..];
            if rest.len() < FRAME_HEADER {
                break Ok(Turn::Pending);
            }
            if budget.spent() {
                break Ok(Turn::Budget);
            }
            let len = usize::from(rest[0]) << 16 | usize::from(rest[1]) << 8 | usize::from(rest[2]);
            if len > MAX_FRAME {
                break Err(H2Error::Protocol(format!(
                    "frame of {len} bytes exceeds the maximum frame size {MAX_FRAME}"
                )));
            }
            if rest.len() < FRAME_HEADER + len {
                break Ok(Turn::Pending);
            }
            let (kind, flags) = (rest[3], rest[4]);
            let stream = u32::from_be_bytes([rest[5], rest[6], rest[7], rest[8]]) & 0x7fff_ffff;
            let payload = rest[FRAME_HEADER..FRAME_HEADER + len].to_vec();
            pos += FRAME_HEADER + len;
            budget.frames -= 1;
            budget.bytes = budget.bytes.saturating_sub(FRAME_HEADER + len);
            match self.frame(kind, flags, stream, &payload) {
                Ok(()) if self.ended => break Ok(Turn::Done),
                Ok(()) => {}
                Err(e) => break Err(e),
            }
        };
        self.inbuf.drain(..pos);
        result
    }

    /// The connection ended (EOF) before the response did.
    pub fn eof(&self) -> H2Error {
        if let Some(g) = &self.goaway {
            return g.clone();
        }
        H2Error::Eof { preface: !self.connected }
    }

    /// Before the server's SETTINGS: refuses bytes that cannot start a SETTINGS frame, saying
    /// what they look like. `Ok(false)`: not enough bytes to tell yet.
    fn check_preface(&self) -> Result<bool, H2Error> {
        let b = &self.inbuf;
        if b.starts_with(b"HTTP/") {
            let line = b.split(|&c| c == b'\r' || c == b'\n').next().unwrap_or(b);
            if line.len() < b.len() || b.len() >= 64 {
                let line = String::from_utf8_lossy(&line[..line.len().min(64)]);
                return Err(H2Error::NotHttp2(format!("it answered with HTTP/1: {line:?}")));
            }
            return Ok(false); // wait for the whole status line
        }
        if b.len() < FRAME_HEADER {
            return Ok(false);
        }
        let len = usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]);
        let stream = u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff;
        if b[3] != SETTINGS || b[4] & FLAG_ACK != 0 || stream != 0 || len % 6 != 0 {
            let shown: Vec<String> = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
            return Err(H2Error::NotHttp2(format!(
                "its first bytes are not a SETTINGS frame ({})",
                shown.join(" ")
            )));
        }
        Ok(true)
    }

    fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if let Some(p) = &self.partial {
            if kind != CONTINUATION || stream != p.stream {
                return Err(H2Error::Protocol("expected a CONTINUATION frame".into()));
            }
        }
        match kind {
            SETTINGS => self.settings(flags, stream, payload),
            PING => {
                if stream != 0 || payload.len() != 8 {
                    return Err(H2Error::Protocol("malformed PING frame".into()));
                }
                if flags & FLAG_ACK == 0 {
                    push_frame(&mut self.out, PING, FLAG_ACK, 0, payload);
                }
                Ok(())
            }
            WINDOW_UPDATE => self.window_update(stream, payload),
            GOAWAY => self.goaway(payload),
            RST_STREAM => {
                if stream == 0 || payload.len() != 4 {
                    return Err(H2Error::Protocol("malformed RST_STREAM frame".into()));
                }
                let code = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                if stream == STREAM { Err(H2Error::Reset(code)) } else { Ok(()) }
            }
            HEADERS => self.headers(flags, stream, payload),
            CONTINUATION => {
                let Some(mut p) = self.partial.take() else {
                    return Err(H2Error::Protocol("unexpected CONTINUATION frame".into()));
                };
                p.block.extend_from_slice(payload);
                if p.block.len() > 4 * MAX_HEADER_LIST {
                    return Err(H2Error::Protocol("header block too large".into()));
                }
                if flags & FLAG_END_HEADERS != 0 {
                    self.header_block(p.stream, p.end_stream, &p.block)
                } else {
                    self.partial = Some(p);
                    Ok(())
                }
            }
            DATA => self.data(flags, stream, payload),
            PUSH_PROMISE => Err(H2Error::Protocol("PUSH_PROMISE although push is disabled".into())),
            // PRIORITY and unknown frame types are ignored (RFC 9113 sections 5.5, 6.3).
            PRIORITY => Ok(()),
            _ => Ok(()),
        }
    }

    fn settings(&mut self, flags: u8, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if stream != 0 || payload.len() % 6 != 0 {
            return Err(H2Error::Protocol("malformed SETTINGS frame".into()));
        }
        if flags & FLAG_ACK != 0 {
            return if payload.is_empty() {
                Ok(())
            } else {
                Err(H2Error::Protocol("SETTINGS ACK with a payload".into()))
            };
        }
        for s in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([s[0], s[1]]);
            let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match id {
                SETTINGS_INITIAL_WINDOW_SIZE => {
                    let value = i64::from(value);
                    if value > MAX_WINDOW {
                        return Err(H2Error::Protocol("initial window size too large".into()));
                    }
                    self.stream_send_window += value - self.peer_initial_window;
                    self.peer_initial_window = value;
                }
                SETTINGS_MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&value) {
                        return Err(H2Error::Protocol(format!("invalid max frame size {value}")));
                    }
                    self.peer_max_frame = value as usize;
                }
                _ => {}
            }
        }
        push_frame(&mut self.out, SETTINGS, FLAG_ACK, 0, &[]);
        if !self.connected {
            self.connected = true;
            if let Some(request) = self.request.take() {
                self.send_headers(&request);
                self.body = request.body;
            }
        }
        self.send_body();
        Ok(())
    }

    fn window_update(&mut self, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if payload.len() != 4 {
            return Err(H2Error::Protocol("malformed WINDOW_UPDATE frame".into()));
        }
        let inc = i64::from(
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff,
        );
        if inc == 0 {
            return Err(H2Error::Protocol("WINDOW_UPDATE with an increment of 0".into()));
        }
        let window = match stream {
            0 => &mut self.conn_send_window,
            STREAM => &mut self.stream_send_window,
            _ => return Ok(()),
        };
        *window += inc;
        if *window > MAX_WINDOW {
            return Err(H2Error::Protocol("flow-control window overflow".into()));
        }
        self.send_body();
        Ok(())
    }

    fn goaway(&mut self, payload: &[u8]) -> Result<(), H2Error> {
        if payload.len() < 8 {
            return Err(H2Error::Protocol("malformed GOAWAY frame".into()));
        }
        let last_stream =
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
        let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
        let debug = String::from_utf8_lossy(&payload[8..payload.len().min(8 + 256)]).into_owned();
        let e = H2Error::GoAway { last_stream, code, debug };
        // Our stream was not processed: give up now. Otherwise the server finishes it first;
        // a close before that reports this GOAWAY.
        if last_stream < STREAM {
            return Err(e);
        }
        self.goaway = Some(e);
        Ok(())
    }

    fn headers(&mut self, flags: u8, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if stream == 0 || stream % 2 == 0 {
            return Err(H2Error::Protocol(format!("HEADERS on stream {stream}")));
        }
        let mut body = unpad(flags, payload).map_err(|e| H2Error::Protocol(e.into()))?;
        if flags & FLAG_PRIORITY != 0 {
            body = body.get(5..).ok_or_else(|| H2Error::Protocol("malformed HEADERS".into()))?;
        }
        let end_stream = flags & FLAG_END_STREAM != 0;
        if flags & FLAG_END_HEADERS != 0 {
            self.header_block(stream, end_stream, body)
        } else {
            self.partial = Some(PartialBlock { stream, end_stream, block: body.to_vec() });
            Ok(())
        }
    }

    fn header_block(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Result<(), H2Error> {
        let fields = self
            .decoder
            .decode(block, MAX_HEADER_LIST)
            .map_err(|e| H2Error::Protocol(e.to_string()))?;
        if stream != STREAM || self.ended {
            return Ok(()); // decoded only to keep the HPACK table in step
        }
        let fields: Vec<(String, String)> = fields
            .into_iter()
            .map(|(n, v)| {
                (String::from_utf8_lossy(&n).into_owned(), String::from_utf8_lossy(&v).into_owned())
            })
            .collect();
        if !self.head_seen {
            let informational =
                header(&fields, ":status").is_some_and(|s| s.len() == 3 && s.starts_with('1'));
            if informational && !end_stream {
                self.interim += 1;
                if self.interim > MAX_INTERIM {
                    return Err(H2Error::Protocol("too many 1xx informational responses".into()));
                }
                return Ok(()); // 1xx: the final head follows
            }
            self.head_seen = true;
            self.response.headers = fields;
        } else {
            if !end_stream {
                return Err(H2Error::Protocol("trailers without END_STREAM".into()));
            }
            self.response.trailers = Some(fields);
        }
        self.ended = end_stream;
        Ok(())
    }

    fn data(&mut self, flags: u8, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if stream == 0 {
            return Err(H2Error::Protocol("DATA on stream 0".into()));
        }
        self.recv_window_used += payload.len() as i64;
        if self.recv_window_used > INITIAL_WINDOW {
            return Err(H2Error::Protocol(
                "flow-control error: the response exceeds the 65535-byte window".into(),
            ));
        }
        if stream != STREAM || self.ended {
            return Ok(());
        }
        if !self.head_seen {
            return Err(H2Error::Protocol("DATA before the response headers".into()));
        }
        let body = unpad(flags, payload).map_err(|e| H2Error::Protocol(e.into()))?;
        self.response.data.extend_from_slice(body);
        self.ended = flags & FLAG_END_STREAM != 0;
        Ok(())
    }

    fn send_headers(&mut self, r: &Request) {
        let mut block = Vec::new();
        for (n, v) in [
            (":method", &r.method),
            (":scheme", &r.scheme),
            (":path", &r.path),
            (":authority", &r.authority),
        ] {
            hpack::encode_literal(&mut block, n.as_bytes(), v.as_bytes());
        }
        for (n, v) in &r.headers {
            hpack::encode_literal(&mut block, n.as_bytes(), v.as_bytes());
        }
        let mut chunks = block.chunks(self.peer_max_frame).peekable();
        let first = chunks.next().unwrap_or(&[]);
        let end = if chunks.peek().is_none() { FLAG_END_HEADERS } else { 0 };
        push_frame(&mut self.out, HEADERS, end, STREAM, first);
        while let Some(chunk) = chunks.next() {
            let end = if chunks.peek().is_none() { FLAG_END_HEADERS } else { 0 };
            push_frame(&mut self.out, CONTINUATION, end, STREAM, chunk);
        }
    }

    /// Queues as much of the body as the windows and the frame size allow.
    fn send_body(&mut self) {
        if !self.connected || self.end_sent || self.request.is_some() {
            return;
        }
        loop {
            let left = self.body.len() - self.body_sent;
            let room = self.conn_send_window.min(self.stream_send_window).max(0) as usize;
            let n = left.min(room).min(self.peer_max_frame);
            if n == 0 && left > 0 {
                return; // wait for WINDOW_UPDATE
            }
            let last = n == left;
            let chunk = &self.body[self.body_sent..self.body_sent + n];
            push_frame(&mut self.out, DATA, if last { FLAG_END_STREAM } else { 0 }, STREAM, chunk);
            self.body_sent += n;
            self.conn_send_window -= n as i64;
            self.stream_send_window -= n as i64;
            if last {
                self.end_sent = true;
                self.body = Vec::new();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FLAG_PADDED;

    fn request(body: Vec<u8>) -> Request {
        Request {
            method: "POST".into(),
            scheme: "http".into(),
            authority: "127.0.0.1:50051".into(),
            path: "/grpc.health.v1.Health/Check".into(),
            headers: vec![("content-type".into(), "application/grpc".into())],
            body,
        }
    }

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        push_frame(&mut v, kind, flags, stream, payload);
        v
    }

    fn block(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (n, v) in fields {
            hpack::encode_literal(&mut b, n.as_bytes(), v.as_bytes());
        }
        b
    }

    /// A frame as (type, flags, stream, payload).
    type Frame = (u8, u8, u32, Vec<u8>);

    /// The frames in `bytes`.
    fn frames(mut bytes: &[u8]) -> Vec<Frame> {
        let mut v = Vec::new();
        while bytes.len() >= 9 {
            let len =
                usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
            let stream = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
            v.push((bytes[3], bytes[4], stream, bytes[9..9 + len].to_vec()));
            bytes = &bytes[9 + len..];
        }
        assert!(bytes.is_empty());
        v
    }

    fn take_output(c: &mut Client) -> Vec<u8> {
        let out = c.pending_output().to_vec();
        c.consume_output(out.len());
        out
    }

    /// A client past the server's (empty) SETTINGS, with its output taken.
    fn connected(body: Vec<u8>) -> (Client, Vec<Frame>) {
        let mut c = Client::new(request(body));
        let out = take_output(&mut c);
        assert!(out.starts_with(PREFACE));
        assert_eq!(frames(&out[PREFACE.len()..]), [(SETTINGS, 0, 0, vec![0, 2, 0, 0, 0, 0])]);
        assert!(!c.is_connected());
        assert_eq!(c.receive(&frame(SETTINGS, 0, 0, &[])), Ok(Progress::Pending));
        assert!(c.is_connected());
        let sent = frames(&take_output(&mut c));
        (c, sent)
    }

    #[test]
    fn request_waits_for_server_settings_then_goes_out() {
        let (_, sent) = connected(b"hello".to_vec());
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert_eq!(sent[0], (SETTINGS, FLAG_ACK, 0, vec![]));
        let (kind, flags, stream, payload) = &sent[1];
        assert_eq!((*kind, *flags, *stream), (HEADERS, FLAG_END_HEADERS, 1));
        let fields = hpack::Decoder::default().decode(payload, 1 << 16).unwrap();
        let names: Vec<&[u8]> = fields.iter().map(|(n, _)| n.as_slice()).collect();
        assert_eq!(names, [&b":method"[..], b":scheme", b":path", b":authority", b"content-type"]);
        assert_eq!(fields[2].1, b"/grpc.health.v1.Health/Check");
        assert_eq!(sent[2], (DATA, FLAG_END_STREAM, 1, b"hello".to_vec()));
    }

    #[test]
    fn trailers_only_response() {
        let (mut c, _) = connected(b"x".to_vec());
        let head = block(&[
            (":status", "200"),
            ("content-type", "application/grpc"),
            ("grpc-status", "12"),
        ]);
        let p = c.receive(&frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &head));
        assert_eq!(p, Ok(Progress::Done));
        let r = c.into_response();
        assert_eq!(r.status(), Some(200));
        assert_eq!(header(&r.headers, "grpc-status"), Some("12"));
        assert_eq!((r.data.len(), r.trailers), (0, None));
    }

    #[test]
    fn headers_data_trailers_across_arbitrary_splits() {
        let mut wire = frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0x10, 0]);
        wire.extend(frame(PING, 0, 0, b"12345678"));
        let head = block(&[(":status", "200"), ("content-type", "application/grpc")]);
        wire.extend(frame(HEADERS, FLAG_END_HEADERS, 1, &head));
        // Padded DATA: pad length 3.
        wire.extend(frame(DATA, FLAG_PADDED, 1, &[3, 0, 0, 0, 0, 2, 8, 1, 0, 0, 0]));
        wire.extend(frame(WINDOW_UPDATE, 0, 0, &[0, 0, 0, 10]));
        let trailers = block(&[("grpc-status", "0"), ("grpc-message", "")]);
        // Trailers in HEADERS + CONTINUATION.
        wire.extend(frame(HEADERS, FLAG_END_STREAM, 1, &trailers[..4]));
        wire.extend(frame(CONTINUATION, FLAG_END_HEADERS, 1, &trailers[4..]));
        for split in [1, 2, 7, 9, 10, 33, wire.len()] {
            let mut c = Client::new(request(b"body".to_vec()));
            let mut last = Ok(Progress::Pending);
            for chunk in wire.chunks(split) {
                assert_eq!(last, Ok(Progress::Pending));
                last = c.receive(chunk);
            }
            assert_eq!(last, Ok(Progress::Done), "split {split}");
            let out = frames(&take_output(&mut c)[PREFACE.len()..]);
            assert!(out.contains(&(PING, FLAG_ACK, 0, b"12345678".to_vec())), "{out:?}");
            assert!(out.contains(&(DATA, FLAG_END_STREAM, 1, b"body".to_vec())), "{out:?}");
            let r = c.into_response();
            assert_eq!(r.data, [0, 0, 0, 0, 2, 8, 1]);
            assert_eq!(r.trailers.as_ref().and_then(|t| header(t, "grpc-status")), Some("0"));
        }
    }

    #[test]
    fn body_respects_windows_and_frame_size() {
        let body = vec![7u8; 70_000];
        // The server lowers the stream window to 10 bytes.
        let mut c = Client::new(request(body.clone()));
        take_output(&mut c);
        assert_eq!(c.receive(&frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 10])), Ok(Progress::Pending));
        let sent = frames(&take_output(&mut c));
        let data: Vec<_> = sent.iter().filter(|f| f.0 == DATA).collect();
        assert_eq!(data.len(), 1);
        assert_eq!((data[0].1, data[0].3.len()), (0, 10));
        // Opening the stream window: limited by the connection window (65535) and frame size.
        c.receive(&frame(WINDOW_UPDATE, 0, 1, &[0, 0x10, 0, 0])).unwrap();
        let data: Vec<usize> = frames(&take_output(&mut c)).iter().map(|f| f.3.len()).collect();
        assert_eq!(data, [16_384, 16_384, 16_384, 16_373]);
        c.receive(&frame(WINDOW_UPDATE, 0, 0, &[0, 1, 0, 0])).unwrap();
        let sent = frames(&take_output(&mut c));
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].1, sent[0].3.len()), (FLAG_END_STREAM, 70_000 - 65_535));
    }

    #[test]
    fn large_header_blocks_use_continuation() {
        let mut r = request(b"x".to_vec());
        r.headers.push(("x-big".into(), "v".repeat(40_000)));
        let mut c = Client::new(r);
        take_output(&mut c);
        c.receive(&frame(SETTINGS, 0, 0, &[])).unwrap();
        let sent = frames(&take_output(&mut c));
        let kinds: Vec<(u8, u8)> = sent.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(
            kinds,
            [
                (SETTINGS, FLAG_ACK),
                (HEADERS, 0),
                (CONTINUATION, 0),
                (CONTINUATION, FLAG_END_HEADERS),
                (DATA, FLAG_END_STREAM)
            ]
        );
    }

    #[test]
    fn not_http2() {
        let mut c = Client::new(request(vec![]));
        assert_eq!(c.receive(b"HTTP/1.1 400 Bad"), Ok(Progress::Pending));
        assert_eq!(
            c.receive(b" Request\r\n"),
            Err(H2Error::NotHttp2("it answered with HTTP/1: \"HTTP/1.1 400 Bad Request\"".into()))
        );
        let mut c = Client::new(request(vec![]));
        let e = c.receive(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x50, 0, 0]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server does not speak HTTP/2: its first bytes are not a SETTINGS frame \
             (15 03 01 00 02 02 50 00 00)"
        );
        // A SETTINGS ACK first is not a server preface.
        let mut c = Client::new(request(vec![]));
        assert!(matches!(c.receive(&frame(SETTINGS, FLAG_ACK, 0, &[])), Err(H2Error::NotHttp2(_))));
        let c = Client::new(request(vec![]));
        assert_eq!(c.eof(), H2Error::Eof { preface: true });
        assert_eq!(c.eof().to_string(), "connection closed before server preface received");
    }

    #[test]
    fn resets_and_goaway() {
        let (mut c, _) = connected(b"x".to_vec());
        assert_eq!(c.receive(&frame(RST_STREAM, 0, 1, &[0, 0, 0, 8])), Err(H2Error::Reset(8)));
        assert_eq!(
            H2Error::Reset(8).to_string(),
            "stream terminated by RST_STREAM with error code: CANCEL"
        );
        // GOAWAY that leaves our stream out.
        let (mut c, _) = connected(b"x".to_vec());
        let e = c.receive(&frame(GOAWAY, 0, 0, b"\0\0\0\0\0\0\0\x0bcalm")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server sent GOAWAY (error code ENHANCE_YOUR_CALM, last stream 0, debug data \"calm\")"
        );
        // A graceful GOAWAY covering our stream: the response still completes.
        let (mut c, _) = connected(b"x".to_vec());
        assert_eq!(
            c.receive(&frame(GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0])),
            Ok(Progress::Pending)
        );
        let head = block(&[(":status", "200"), ("grpc-status", "0")]);
        assert_eq!(
            c.receive(&frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &head)),
            Ok(Progress::Done)
        );
        // ... and a close instead reports the GOAWAY.
        let (mut c, _) = connected(b"x".to_vec());
        c.receive(&frame(GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0])).unwrap();
        assert!(matches!(c.eof(), H2Error::GoAway { last_stream: 1, code: 0, .. }));
        let (c, _) = connected(b"x".to_vec());
        assert_eq!(c.eof().to_string(), "EOF");
    }

    #[test]
    fn protocol_errors() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (frame(PUSH_PROMISE, FLAG_END_HEADERS, 1, &[0, 0, 0, 2]), "PUSH_PROMISE"),
            (frame(DATA, 0, 1, b"x"), "DATA before the response headers"),
            (frame(HEADERS, FLAG_END_HEADERS, 2, &[]), "HEADERS on stream 2"),
            (frame(CONTINUATION, FLAG_END_HEADERS, 1, &[]), "unexpected CONTINUATION"),
            (frame(WINDOW_UPDATE, 0, 1, &[0, 0, 0, 0]), "increment of 0"),
            (frame(SETTINGS, 0, 0, &[0, 5, 0, 0, 0, 1]), "invalid max frame size 1"),
            (frame(PING, 0, 0, b"short"), "malformed PING"),
            (frame(HEADERS, FLAG_END_HEADERS, 1, &[0x80]), "hpack: invalid table index 0"),
            (frame(HEADERS, FLAG_END_HEADERS | FLAG_PADDED, 1, &[5, 0x82]), "padding"),
        ];
        for (wire, expect) in cases {
            let (mut c, _) = connected(b"x".to_vec());
            match c.receive(&wire) {
                Err(H2Error::Protocol(m)) => assert!(m.contains(expect), "{m:?} vs {expect:?}"),
                other => panic!("{expect}: {other:?}"),
            }
        }
        // HEADERS without END_HEADERS, then another frame.
        let (mut c, _) = connected(b"x".to_vec());
        let mut wire = frame(HEADERS, 0, 1, &block(&[(":status", "200")]));
        wire.extend(frame(PING, 0, 0, b"12345678"));
        assert_eq!(
            c.receive(&wire),
            Err(H2Error::Protocol("expected a CONTINUATION frame".into()))
        );
        // An oversized frame.
        let (mut c, _) = connected(b"x".to_vec());
        let e = c.receive(&[0, 0x40, 0x01, DATA, 0, 0, 0, 0, 1]).unwrap_err();
        assert!(e.to_string().contains("exceeds the maximum frame size"), "{e}");
        // More DATA than our window.
        let (mut c, _) = connected(b"x".to_vec());
        c.receive(&frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "200")]))).unwrap();
        let chunk = vec![0u8; 16_384];
        let mut last = Ok(Progress::Pending);
        for _ in 0..5 {
            last = c.receive(&frame(DATA, 0, 1, &chunk));
        }
        assert!(matches!(last, Err(H2Error::Protocol(m)) if m.contains("flow-control")));
    }

    #[test]
    fn informational_heads_and_other_streams_are_skipped() {
        let (mut c, _) = connected(b"x".to_vec());
        let mut wire = frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "103")]));
        // A header block on another (odd) stream still updates the HPACK table.
        let mut indexed = vec![0x40];
        indexed.push(4);
        indexed.extend_from_slice(b"x-id");
        indexed.push(1);
        indexed.push(b'7');
        wire.extend(frame(HEADERS, FLAG_END_HEADERS, 3, &indexed));
        wire.extend(frame(PRIORITY, 0, 1, &[0, 0, 0, 0, 16]));
        wire.extend(frame(0xee, 0, 0, b"unknown type"));
        let mut head = block(&[(":status", "200")]);
        head.push(0xbe); // index 62: x-id: 7 from the block on stream 3
        wire.extend(frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &head));
        assert_eq!(c.receive(&wire), Ok(Progress::Done));
        let r = c.into_response();
        assert_eq!(r.status(), Some(200));
        assert_eq!(header(&r.headers, "x-id"), Some("7"));
    }

    #[test]
    fn process_stops_at_its_budget() {
        let (mut c, _) = connected(b"x".to_vec());
        c.receive(&frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "200")]))).unwrap();
        // 1000 empty DATA frames (9 bytes each), then the trailers.
        let mut wire = Vec::new();
        for _ in 0..1000 {
            wire.extend(frame(DATA, 0, 1, &[]));
        }
        let trailers = block(&[("grpc-status", "0")]);
        wire.extend(frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &trailers));
        c.push(&wire);
        let mut calls = 0;
        loop {
            let mut budget = Budget::PER_TURN;
            calls += 1;
            match c.process(&mut budget) {
                Ok(Turn::Budget) => assert_eq!(budget.frames, 0),
                Ok(Turn::Done) => break,
                other => panic!("{other:?} after {calls} calls"),
            }
        }
        assert_eq!(calls, 1001usize.div_ceil(FRAMES_PER_TURN));
        // The byte budget: frames of 16 KiB (unknown type) stop after 64 KiB, plus the frame
        // that crosses it.
        let (mut c, _) = connected(b"x".to_vec());
        for _ in 0..8 {
            c.push(&frame(0xee, 0, 0, &[0; MAX_FRAME]));
        }
        let mut budget = Budget::PER_TURN;
        assert_eq!(c.process(&mut budget), Ok(Turn::Budget));
        assert_eq!((budget.frames, budget.bytes), (FRAMES_PER_TURN - 4, 0));
        let mut budget = Budget::PER_TURN;
        assert_eq!(c.process(&mut budget), Ok(Turn::Pending));
        assert_eq!(budget.frames, FRAMES_PER_TURN - 4);
    }

    #[test]
    fn informational_heads_are_bounded() {
        let interim = frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "100")]));
        let fields = block(&[(":status", "200"), ("grpc-status", "0")]);
        let head = frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &fields);
        // MAX_INTERIM of them, then the final head: accepted.
        let (mut c, _) = connected(b"x".to_vec());
        let mut wire = interim.repeat(MAX_INTERIM as usize);
        wire.extend_from_slice(&head);
        assert_eq!(c.receive(&wire), Ok(Progress::Done));
        assert_eq!(c.into_response().status(), Some(200));
        // One more: refused.
        let (mut c, _) = connected(b"x".to_vec());
        let mut wire = interim.repeat(MAX_INTERIM as usize + 1);
        wire.extend_from_slice(&head);
        let e = c.receive(&wire).unwrap_err();
        assert_eq!(e.to_string(), "http2: too many 1xx informational responses");
    }
}
