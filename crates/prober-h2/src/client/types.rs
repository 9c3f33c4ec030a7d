//! What the owner of a [`super::Client`] hands it and gets back: requests, responses, errors,
//! budgets and where a call stopped.

use std::fmt;

use crate::frame::error_code_name;

/// A stream identifier (odd: streams the client opens).
pub type StreamId = u32;

/// One request: pseudo-headers, header fields and an optional body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `:method` (`POST` for gRPC, `GET` for an HTTP probe).
    pub method: String,
    /// `:scheme` (`http` or `https`).
    pub scheme: String,
    /// `:authority` (`host:port`, or the virtual host).
    pub authority: String,
    /// `:path` (with the query).
    pub path: String,
    /// Regular header fields (lower-case names), after the pseudo-headers.
    pub headers: Vec<(String, String)>,
    /// The request's DATA (one gRPC message, an HTTP body). Empty: the HEADERS frame ends the
    /// stream and no DATA is sent.
    pub body: Vec<u8>,
}

/// A request encoded once for any number of streams: its header block, HPACK literals without
/// indexing (so the block depends on no connection's table and is valid on every one), and its
/// body. A probe that sends the same request on each check of a kept connection encodes it
/// once ([`super::Client::open_encoded`]); only the stream id in the frame headers differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedRequest {
    /// The HPACK header block: the pseudo-headers, then the regular fields.
    pub(crate) block: Vec<u8>,
    /// The request's DATA (empty: the HEADERS frame ends the stream).
    pub(crate) body: Vec<u8>,
}

impl EncodedRequest {
    /// Encodes `request` (see [`super::Client`]'s module docs for the header order).
    pub fn new(request: &Request) -> EncodedRequest {
        let mut block = Vec::new();
        for (n, v) in [
            (":method", &request.method),
            (":scheme", &request.scheme),
            (":path", &request.path),
            (":authority", &request.authority),
        ] {
            crate::hpack::encode_literal(&mut block, n.as_bytes(), v.as_bytes());
        }
        for (n, v) in &request.headers {
            crate::hpack::encode_literal(&mut block, n.as_bytes(), v.as_bytes());
        }
        EncodedRequest { block, body: request.body.clone() }
    }

    /// The same, taking the body instead of copying it.
    pub fn from_request(request: Request) -> EncodedRequest {
        let body_less = Request { body: Vec::new(), ..request };
        let mut encoded = EncodedRequest::new(&body_less);
        encoded.body = request.body;
        encoded
    }

    /// The encoded header block.
    pub fn header_block(&self) -> &[u8] {
        &self.block
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.body
    }
}

/// What came back on a stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// The final response head (for a trailers-only response, also the trailers).
    pub headers: Vec<(String, String)>,
    /// The DATA received and not taken with [`super::Client::take_data`].
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

/// Why a stream or the connection failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum H2Error {
    /// The server does not speak HTTP/2: its first bytes are not a SETTINGS frame.
    NotHttp2(String),
    /// The server broke the protocol (a connection error: every stream fails with it).
    Protocol(String),
    /// The server reset the stream with this error code.
    Reset(u32),
    /// The server said GOAWAY without processing the stream (safe to retry elsewhere), or
    /// closed the connection after GOAWAY.
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

impl H2Error {
    /// Whether the server cannot have processed the stream (RFC 9113 section 8.7): a GOAWAY
    /// that leaves it out, or `REFUSED_STREAM`. The request may be sent again on another
    /// connection.
    pub fn unprocessed(&self, stream: StreamId) -> bool {
        match self {
            H2Error::GoAway { last_stream, .. } => *last_stream < stream,
            H2Error::Reset(code) => *code == 0x7,
            _ => false,
        }
    }
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
            // A graceful GOAWAY that leaves the first stream unprocessed: grpc-go's words.
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

/// Where the exchange stands after new bytes ([`super::Client::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More bytes are needed.
    Pending,
    /// This stream has ended (response complete, reset or refused): take it with
    /// [`super::Client::finish`].
    Ended(StreamId),
}

/// Where a budgeted [`super::Client::process`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Every whole frame received so far is handled: read more.
    Pending,
    /// The budget is spent and whole frames may still be buffered: call
    /// [`super::Client::process`] again with a fresh budget, after giving other work its
    /// turn. Read nothing meanwhile, so that the buffer does not grow.
    Budget,
    /// This stream has ended (response complete, reset or refused by GOAWAY): take it with
    /// [`super::Client::finish`]. Frames after the one that ended it stay buffered for the
    /// next call, so that a stream's end is never lost to what follows it.
    Ended(StreamId),
}

/// How much received work one [`super::Client::process`] call may do. A server can send
/// frames of nine bytes (empty DATA, PING, SETTINGS, WINDOW_UPDATE, tiny HEADERS) as fast as
/// the link carries them; without a bound, one connection's backlog holds its caller's thread
/// for as long as it takes to handle all of it.
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

    pub(crate) fn spent(&self) -> bool {
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
