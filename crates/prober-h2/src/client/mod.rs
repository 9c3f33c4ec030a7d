//! A sans-I/O HTTP/2 client connection (RFC 9113) that carries any number of requests over
//! its life, one stream each.
//!
//! # API
//!
//! ```text
//! Client::new()                      queues the preface and our SETTINGS (push disabled)
//! client.open(Request) -> StreamId   a request on the next odd stream: HEADERS (+ CONTINUATION)
//!                                    and DATA as the windows allow; held until the server's
//!                                    SETTINGS arrive (the connection is then established)
//! client.open_encoded(Arc<EncodedRequest>)   the same for a request encoded once and sent on
//!                                    many streams (only the frames' stream id is the stream's)
//! client.push(bytes)                 what was read from the transport
//! client.process(&mut Budget)        handles buffered frames: Turn::Pending (read more),
//!                                    Turn::Budget (yield, call again), Turn::Ended(id)
//! client.pending_output() / consume_output(n)   what to write
//! client.response(id) / take_data(id)           the response so far, body chunks as they come
//! client.finish(id) -> Option<Result<Response, H2Error>>   an ended stream, removed
//! client.cancel(id)                  RST_STREAM(CANCEL) for a stream given up (a deadline)
//! client.ping() / ping_outstanding() a PING of ours and whether its ACK is still owed
//! client.can_open() / is_idle()      whether another request may go out / none is open
//! client.eof()                       the error for the streams open when the transport ended
//! client.receive(bytes)              push + unbudgeted process, for input already at hand
//! ```
//!
//! A request's HEADERS carry `:method`, `:scheme`, `:path`, `:authority` and then the
//! request's fields, all as HPACK literals without indexing (the server's table is never
//! touched); an empty body ends the stream with the HEADERS frame. Responses: every received
//! header block goes through the HPACK decoder so that its table stays in step with the
//! server's; on an open stream the first final block is the response head (up to
//! [`MAX_INTERIM`] 1xx heads are skipped), a later one the trailers.
//!
//! Connection handling: SETTINGS (applied and acknowledged: initial window, frame size,
//! concurrent streams), PING (answered; ours matched with their ACK), WINDOW_UPDATE (opens our
//! send windows), GOAWAY (streams above its last stream end as unprocessed, no new stream
//! opens; a close afterwards reports it), RST_STREAM (that stream ends with
//! [`H2Error::Reset`]), PRIORITY and unknown frame types (ignored). PUSH_PROMISE is an error:
//! push is disabled. A connection error ([`H2Error::Protocol`], [`H2Error::NotHttp2`]) ends
//! the connection: every later call returns it.
//!
//! Flow control: our windows are the defaults (65,535 bytes per stream and for the
//! connection). The connection's is given back (WINDOW_UPDATE on stream 0) each time half of
//! it has been received, whatever the stream; a stream's is given back as its owner takes the
//! body with [`Client::take_data`], so that a stream buffers at most its window, and at once
//! for what a padded DATA frame spends on its padding (never held). Both count whole DATA
//! payloads, Pad Length and padding included (RFC 9113 section 6.1). DATA beyond a window is
//! a flow-control error.
//!
//! Limits against a hostile server: [`Client::process`] handles at most a [`Budget`] of frames
//! and bytes per call (the poll loop yields between calls), and at most [`MAX_INTERIM`]
//! informational heads are skipped per stream.

mod types;

use std::collections::VecDeque;
use std::sync::Arc;

pub use types::{
    BYTES_PER_TURN, Budget, EncodedRequest, FRAMES_PER_TURN, H2Error, MAX_INTERIM, Progress,
    Request, Response, StreamId, Turn, header,
};

use crate::frame::{
    CONTINUATION, DATA, FLAG_ACK, FLAG_END_HEADERS, FLAG_END_STREAM, FLAG_PRIORITY, FRAME_HEADER,
    GOAWAY, HEADERS, INITIAL_WINDOW, MAX_FRAME, MAX_HEADER_LIST, MAX_WINDOW, PING, PREFACE,
    PRIORITY, PUSH_PROMISE, RST_STREAM, SETTINGS, SETTINGS_ENABLE_PUSH,
    SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_MAX_FRAME_SIZE,
    WINDOW_UPDATE, push_frame, unpad,
};
use crate::hpack;

/// The largest stream id (2^31 - 1).
const MAX_STREAM_ID: u32 = (1 << 31) - 1;
/// RST_STREAM's CANCEL.
const CANCEL: u32 = 0x8;

/// A header block being received in HEADERS + CONTINUATION frames.
#[derive(Debug)]
struct PartialBlock {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// One stream of ours.
#[derive(Debug)]
struct Stream {
    id: StreamId,
    /// The request (shared with the other streams that send it), until its body is sent or
    /// the stream ends.
    request: Option<Arc<EncodedRequest>>,
    /// Its HEADERS went out (they wait until the connection is established).
    headers_sent: bool,
    body_sent: usize,
    end_sent: bool,
    send_window: i64,
    /// What the server may still send us on this stream.
    recv_window: i64,
    /// Bytes taken by the owner and not yet given back to the server.
    recv_owed: i64,
    response: Response,
    head_seen: bool,
    interim: u32,
    /// `None` while open; the stream's end otherwise.
    end: Option<Result<(), H2Error>>,
}

impl Stream {
    fn ended(&self) -> bool {
        self.end.is_some()
    }
}

/// The client side of one HTTP/2 connection (see the module docs).
#[derive(Debug)]
pub struct Client {
    out: Vec<u8>,
    inbuf: Vec<u8>,
    decoder: hpack::Decoder,
    connected: bool,
    streams: Vec<Stream>,
    next_stream: u32,
    conn_send_window: i64,
    peer_initial_window: i64,
    peer_max_frame: usize,
    peer_max_streams: u32,
    partial: Option<PartialBlock>,
    /// Bytes of DATA received and not yet given back on the connection.
    conn_recv_owed: i64,
    /// Streams that ended and were not yet reported by [`Client::process`].
    ended: VecDeque<StreamId>,
    goaway: Option<H2Error>,
    failed: Option<H2Error>,
    ping_sent: u64,
    ping_owed: Option<[u8; 8]>,
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

impl Client {
    /// A connection with the preface and our SETTINGS queued.
    pub fn new() -> Client {
        let mut out = PREFACE.to_vec();
        let mut settings = Vec::new();
        settings.extend_from_slice(&SETTINGS_ENABLE_PUSH.to_be_bytes());
        settings.extend_from_slice(&0u32.to_be_bytes());
        push_frame(&mut out, SETTINGS, 0, 0, &settings);
        Client {
            out,
            inbuf: Vec::new(),
            decoder: hpack::Decoder::default(),
            connected: false,
            streams: Vec::new(),
            next_stream: 1,
            conn_send_window: INITIAL_WINDOW,
            peer_initial_window: INITIAL_WINDOW,
            peer_max_frame: MAX_FRAME,
            peer_max_streams: u32::MAX,
            partial: None,
            conn_recv_owed: 0,
            ended: VecDeque::new(),
            goaway: None,
            failed: None,
            ping_sent: 0,
            ping_owed: None,
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

    /// Whether another request may be opened: no connection error, no GOAWAY, a stream id
    /// left and the server's concurrent-stream limit not reached.
    pub fn can_open(&self) -> bool {
        self.failed.is_none()
            && self.goaway.is_none()
            && self.next_stream <= MAX_STREAM_ID
            && (self.open_streams() as u64) < u64::from(self.peer_max_streams)
    }

    /// Streams opened and not yet ended.
    pub fn open_streams(&self) -> usize {
        self.streams.iter().filter(|s| !s.ended()).count()
    }

    /// Whether the connection may carry a later request: [`Client::can_open`], nothing of
    /// ours in flight (no stream, none ended and not taken), no header block half received.
    pub fn is_idle(&self) -> bool {
        self.can_open() && self.streams.is_empty() && self.partial.is_none()
    }

    /// The GOAWAY the server sent, if any.
    pub fn goaway(&self) -> Option<&H2Error> {
        self.goaway.as_ref()
    }

    /// Opens a stream for `request`: its frames are queued now, or when the server's SETTINGS
    /// arrive if they have not yet.
    ///
    /// # Errors
    /// No stream can be opened ([`Client::can_open`]): the connection failed (its error), the
    /// server sent GOAWAY (that GOAWAY), or the stream ids or the server's limit ran out.
    pub fn open(&mut self, request: Request) -> Result<StreamId, H2Error> {
        self.open_encoded(Arc::new(EncodedRequest::from_request(request)))
    }

    /// [`Client::open`] for a request encoded once ([`EncodedRequest`]): the stream shares it,
    /// so that opening copies and allocates nothing of the request.
    ///
    /// # Errors
    /// As [`Client::open`].
    pub fn open_encoded(&mut self, request: Arc<EncodedRequest>) -> Result<StreamId, H2Error> {
        if let Some(e) = self.failed.as_ref().or(self.goaway.as_ref()) {
            return Err(e.clone());
        }
        if !self.can_open() {
            return Err(H2Error::Protocol("no stream available on this connection".into()));
        }
        let id = self.next_stream;
        self.next_stream += 2;
        self.streams.push(Stream {
            id,
            request: Some(request),
            headers_sent: false,
            body_sent: 0,
            end_sent: false,
            send_window: self.peer_initial_window,
            recv_window: INITIAL_WINDOW,
            recv_owed: 0,
            response: Response::default(),
            head_seen: false,
            interim: 0,
            end: None,
        });
        if self.connected {
            self.start_streams();
        }
        Ok(id)
    }

    /// The response of stream `id` so far (head, DATA not yet taken, trailers).
    pub fn response(&self, id: StreamId) -> Option<&Response> {
        self.stream(id).map(|s| &s.response)
    }

    /// Whether stream `id`'s final response head arrived.
    pub fn has_response_head(&self, id: StreamId) -> bool {
        self.stream(id).is_some_and(|s| s.head_seen)
    }

    /// Takes the DATA of stream `id` received so far, and gives its window back to the server
    /// when half of it has been taken.
    pub fn take_data(&mut self, id: StreamId) -> Vec<u8> {
        let Some(i) = self.index(id) else {
            return Vec::new();
        };
        let s = &mut self.streams[i];
        let data = std::mem::take(&mut s.response.data);
        s.recv_owed += data.len() as i64;
        self.give_back(i);
        data
    }

    /// Gives stream `i`'s window back to the server (WINDOW_UPDATE) once half of it is owed.
    fn give_back(&mut self, i: usize) {
        let s = &mut self.streams[i];
        if !s.ended() && s.recv_owed >= INITIAL_WINDOW / 2 {
            let inc = s.recv_owed;
            s.recv_window += inc;
            s.recv_owed = 0;
            push_frame(&mut self.out, WINDOW_UPDATE, 0, s.id, &(inc as u32).to_be_bytes());
        }
    }

    /// Stream `id`'s end, once it has ended (the stream is then forgotten): its response, or
    /// why it failed. `None` while it is open (or for an unknown id).
    pub fn finish(&mut self, id: StreamId) -> Option<Result<Response, H2Error>> {
        let i = self.index(id)?;
        if !self.streams[i].ended() {
            return None;
        }
        let s = self.streams.swap_remove(i);
        self.ended.retain(|&e| e != id);
        match s.end {
            Some(Err(e)) => Some(Err(e)),
            _ => Some(Ok(s.response)),
        }
    }

    /// Gives up stream `id` (its deadline passed): RST_STREAM(CANCEL) when it is open, and the
    /// stream is forgotten; what the server still sends on it is ignored.
    pub fn cancel(&mut self, id: StreamId) {
        let Some(i) = self.index(id) else {
            return;
        };
        let s = self.streams.swap_remove(i);
        self.ended.retain(|&e| e != id);
        if !s.ended() && s.headers_sent {
            push_frame(&mut self.out, RST_STREAM, 0, id, &CANCEL.to_be_bytes());
        }
    }

    /// Queues a PING of ours; [`Client::ping_outstanding`] says whether its ACK is owed.
    pub fn ping(&mut self) {
        self.ping_sent += 1;
        let payload = self.ping_sent.to_be_bytes();
        push_frame(&mut self.out, PING, 0, 0, &payload);
        self.ping_owed = Some(payload);
    }

    /// Whether the server has not yet acknowledged our last PING.
    pub fn ping_outstanding(&self) -> bool {
        self.ping_owed.is_some()
    }

    /// Processes received bytes, all of them (until a stream ends): for input already at
    /// hand. A poll loop uses [`Client::push`] and a budgeted [`Client::process`] instead.
    ///
    /// # Errors
    /// As [`Client::process`].
    pub fn receive(&mut self, bytes: &[u8]) -> Result<Progress, H2Error> {
        self.push(bytes);
        let mut unbounded = Budget::UNBOUNDED;
        match self.process(&mut unbounded)? {
            Turn::Ended(id) => Ok(Progress::Ended(id)),
            // An unbounded budget is never spent (every frame is at least one byte).
            Turn::Pending | Turn::Budget => Ok(Progress::Pending),
        }
    }

    /// Buffers received bytes for [`Client::process`].
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_none() {
            self.inbuf.extend_from_slice(bytes);
        }
    }

    /// Handles the whole frames buffered by [`Client::push`] until they run out, a stream
    /// ends, or `budget` is spent; every frame handled takes one frame and its size in bytes
    /// from `budget`. A stream that ended earlier and was not yet reported is reported first.
    ///
    /// # Errors
    /// A connection error: the server is not HTTP/2 or broke the protocol. The connection is
    /// then unusable and every later call returns the same error.
    pub fn process(&mut self, budget: &mut Budget) -> Result<Turn, H2Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if let Some(id) = self.ended.pop_front() {
            return Ok(Turn::Ended(id));
        }
        if !self.connected {
            match self.check_preface() {
                Ok(true) => {}
                Ok(false) => return Ok(Turn::Pending),
                Err(e) => return Err(self.fail(e)),
            }
        }
        // Frames are handled in place: the buffer is lent out of `self` meanwhile (what the
        // frames queue goes to `out`, never to `inbuf`).
        let inbuf = std::mem::take(&mut self.inbuf);
        let mut pos = 0;
        let result = loop {
            let rest = &inbuf[pos..];
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
            let payload = &rest[FRAME_HEADER..FRAME_HEADER + len];
            pos += FRAME_HEADER + len;
            budget.frames -= 1;
            budget.bytes = budget.bytes.saturating_sub(FRAME_HEADER + len);
            if let Err(e) = self.frame(kind, flags, stream, payload) {
                break Err(e);
            }
            if let Some(id) = self.ended.pop_front() {
                break Ok(Turn::Ended(id));
            }
        };
        self.inbuf = inbuf;
        if pos == self.inbuf.len() {
            self.inbuf.clear();
        } else {
            self.inbuf.drain(..pos);
        }
        result.map_err(|e| self.fail(e))
    }

    /// The transport ended (EOF): the error of every stream still open, and of the
    /// connection. After a GOAWAY, that GOAWAY.
    pub fn eof(&self) -> H2Error {
        if let Some(g) = &self.goaway {
            return g.clone();
        }
        H2Error::Eof { preface: !self.connected }
    }

    fn fail(&mut self, e: H2Error) -> H2Error {
        self.failed = Some(e.clone());
        self.inbuf = Vec::new();
        e
    }

    fn index(&self, id: StreamId) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    fn stream(&self, id: StreamId) -> Option<&Stream> {
        self.streams.iter().find(|s| s.id == id)
    }

    /// Ends stream `i` with `end`, to be reported by [`Client::process`].
    fn end_stream(&mut self, i: usize, end: Result<(), H2Error>) {
        let s = &mut self.streams[i];
        if s.end.is_none() {
            s.end = Some(end);
            s.request = None;
            self.ended.push_back(s.id);
        }
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
                } else if self.ping_owed.is_some_and(|p| p[..] == *payload) {
                    self.ping_owed = None;
                }
                Ok(())
            }
            WINDOW_UPDATE => self.window_update(stream, payload),
            GOAWAY => self.goaway_frame(payload),
            RST_STREAM => {
                if stream == 0 || payload.len() != 4 {
                    return Err(H2Error::Protocol("malformed RST_STREAM frame".into()));
                }
                let code = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                if let Some(i) = self.index(stream) {
                    self.end_stream(i, Err(H2Error::Reset(code)));
                }
                Ok(())
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
                    let delta = value - self.peer_initial_window;
                    for s in &mut self.streams {
                        s.send_window += delta;
                    }
                    self.peer_initial_window = value;
                }
                SETTINGS_MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&value) {
                        return Err(H2Error::Protocol(format!("invalid max frame size {value}")));
                    }
                    self.peer_max_frame = value as usize;
                }
                SETTINGS_MAX_CONCURRENT_STREAMS => self.peer_max_streams = value,
                _ => {}
            }
        }
        push_frame(&mut self.out, SETTINGS, FLAG_ACK, 0, &[]);
        self.connected = true;
        self.start_streams();
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
        let window = if stream == 0 {
            &mut self.conn_send_window
        } else {
            match self.streams.iter_mut().find(|s| s.id == stream) {
                Some(s) => &mut s.send_window,
                None => return Ok(()),
            }
        };
        *window += inc;
        if *window > MAX_WINDOW {
            return Err(H2Error::Protocol("flow-control window overflow".into()));
        }
        self.send_bodies();
        Ok(())
    }

    fn goaway_frame(&mut self, payload: &[u8]) -> Result<(), H2Error> {
        if payload.len() < 8 {
            return Err(H2Error::Protocol("malformed GOAWAY frame".into()));
        }
        let last_stream =
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
        let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
        let debug = String::from_utf8_lossy(&payload[8..payload.len().min(8 + 256)]).into_owned();
        let e = H2Error::GoAway { last_stream, code, debug };
        // Streams the server did not process end now; the others it finishes first (a close
        // before that reports this GOAWAY, through `eof`).
        for i in 0..self.streams.len() {
            if self.streams[i].id > last_stream {
                self.end_stream(i, Err(e.clone()));
            }
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
        let Some(i) = self.index(stream).filter(|&i| !self.streams[i].ended()) else {
            return Ok(()); // decoded only to keep the HPACK table in step
        };
        // The decoded bytes become the strings: valid UTF-8 (every field of a sane server) is
        // not copied, and only a field that is not is decoded lossily.
        let text = |b: Vec<u8>| {
            String::from_utf8(b)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        };
        let fields: Vec<(String, String)> =
            fields.into_iter().map(|(n, v)| (text(n), text(v))).collect();
        let s = &mut self.streams[i];
        if !s.head_seen {
            let informational =
                header(&fields, ":status").is_some_and(|v| v.len() == 3 && v.starts_with('1'));
            if informational && !end_stream {
                s.interim += 1;
                if s.interim > MAX_INTERIM {
                    return Err(H2Error::Protocol("too many 1xx informational responses".into()));
                }
                return Ok(()); // 1xx: the final head follows
            }
            s.head_seen = true;
            s.response.headers = fields;
        } else {
            if !end_stream {
                return Err(H2Error::Protocol("trailers without END_STREAM".into()));
            }
            s.response.trailers = Some(fields);
        }
        if end_stream {
            self.end_stream(i, Ok(()));
        }
        Ok(())
    }

    fn data(&mut self, flags: u8, stream: u32, payload: &[u8]) -> Result<(), H2Error> {
        if stream == 0 {
            return Err(H2Error::Protocol("DATA on stream 0".into()));
        }
        // The connection's window is given back whatever the stream: what a stream may hold
        // is bounded by its own window.
        let len = payload.len() as i64;
        self.conn_recv_owed += len;
        if self.conn_recv_owed > INITIAL_WINDOW {
            return Err(H2Error::Protocol(
                "flow-control error: the server sent more than the connection's window".into(),
            ));
        }
        if self.conn_recv_owed >= INITIAL_WINDOW / 2 {
            let inc = self.conn_recv_owed as u32;
            push_frame(&mut self.out, WINDOW_UPDATE, 0, 0, &inc.to_be_bytes());
            self.conn_recv_owed = 0;
        }
        let Some(i) = self.index(stream).filter(|&i| !self.streams[i].ended()) else {
            return Ok(()); // a stream given up or ended: ignored
        };
        let s = &mut self.streams[i];
        s.recv_window -= len;
        if s.recv_window < 0 {
            return Err(H2Error::Protocol(
                "flow-control error: the response exceeds the stream's 65535-byte window".into(),
            ));
        }
        if !s.head_seen {
            return Err(H2Error::Protocol("DATA before the response headers".into()));
        }
        let body = unpad(flags, payload).map_err(|e| H2Error::Protocol(e.into()))?;
        s.response.data.extend_from_slice(body);
        // The Pad Length octet and the padding took window too (RFC 9113 section 6.1) and are
        // not kept: owed back at once, or a server that pads stalls once the stream's first
        // 65,535 bytes of frames are spent.
        s.recv_owed += len - body.len() as i64;
        if flags & FLAG_END_STREAM != 0 {
            self.end_stream(i, Ok(()));
        } else {
            self.give_back(i);
        }
        Ok(())
    }

    /// Sends the HEADERS of requests held until the connection was established, then bodies.
    fn start_streams(&mut self) {
        for i in 0..self.streams.len() {
            let s = &mut self.streams[i];
            if s.headers_sent || s.ended() {
                continue;
            }
            let Some(request) = s.request.clone() else { continue };
            let (id, end) = (s.id, request.body.is_empty());
            s.headers_sent = true;
            s.end_sent = end;
            if end {
                s.request = None;
            }
            self.send_headers(id, &request.block, end);
        }
        self.send_bodies();
    }

    /// Queues HEADERS (and CONTINUATION when the block exceeds the server's frame size) with
    /// an encoded block: only the stream id is this stream's.
    fn send_headers(&mut self, id: StreamId, block: &[u8], end_stream: bool) {
        let end_stream = if end_stream { FLAG_END_STREAM } else { 0 };
        let mut chunks = block.chunks(self.peer_max_frame).peekable();
        let first = chunks.next().unwrap_or(&[]);
        let end = if chunks.peek().is_none() { FLAG_END_HEADERS } else { 0 };
        push_frame(&mut self.out, HEADERS, end | end_stream, id, first);
        while let Some(chunk) = chunks.next() {
            let end = if chunks.peek().is_none() { FLAG_END_HEADERS } else { 0 };
            push_frame(&mut self.out, CONTINUATION, end, id, chunk);
        }
    }

    /// Queues as much of every body as the windows and the frame size allow.
    fn send_bodies(&mut self) {
        if !self.connected {
            return;
        }
        for s in &mut self.streams {
            if !s.headers_sent || s.end_sent || s.ended() {
                continue;
            }
            let Some(request) = s.request.as_ref() else { continue };
            let body = &request.body;
            loop {
                let left = body.len() - s.body_sent;
                let room = self.conn_send_window.min(s.send_window).max(0) as usize;
                let n = left.min(room).min(self.peer_max_frame);
                if n == 0 && left > 0 {
                    break; // wait for WINDOW_UPDATE
                }
                let last = n == left;
                let chunk = &body[s.body_sent..s.body_sent + n];
                let flags = if last { FLAG_END_STREAM } else { 0 };
                push_frame(&mut self.out, DATA, flags, s.id, chunk);
                s.body_sent += n;
                self.conn_send_window -= n as i64;
                s.send_window -= n as i64;
                if last {
                    s.end_sent = true;
                    break;
                }
            }
            if s.end_sent {
                s.request = None;
            }
        }
    }
}

#[cfg(test)]
mod tests;
