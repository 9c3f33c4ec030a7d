//! Body framing (Content-Length, chunked, close-delimited) and the bounded output sink.
//!
//! The chunked decoder is an explicit state machine after hyper's `ChunkedState`
//! (`src/proto/h1/decode.rs`), with the same limits: chunk sizes that overflow 64 bits are
//! refused, and chunk extensions and trailers are bounded to 16 KiB each over the whole body.
//!
//! # Output limit and `truncated`
//!
//! The kubelet reads at most 10240 bytes of body, then closes the connection; the status alone
//! decides the result and a body that is cut short past that point is not an error
//! (`utilio.ReadAtMost`). [`BodyReader`] does the same: it keeps at most `limit` bytes, and once
//! it holds `limit` bytes nothing that follows can turn the result into a failure.
//!
//! Whether the body had *more* than `limit` bytes (`truncated`) is decided without waiting:
//! - a `Content-Length` body is truncated when its declared length is larger than the limit;
//! - chunked and close-delimited bodies are truncated when one more body byte is already in what
//!   was read, or arrives in the one extra non-blocking read the I/O layer makes once the limit is
//!   reached. When that read would block, the body is reported as not truncated. So a body of
//!   exactly `limit` bytes is never truncated, and a body with more bytes is truncated unless
//!   the rest was not even in flight yet (a stalled server).

use std::fmt;

use prober_core::Compression;

use crate::coding::{CodingError, ContentDecoder, DecodedOut};

/// How the body of a response is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` (0 for responses without a body).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    Close,
}

/// Limit on chunk-extension bytes over a whole body (hyper's `CHUNKED_EXTENSIONS_LIMIT`).
pub const CHUNK_EXTENSIONS_LIMIT: u64 = 16 * 1024;
/// Limit on trailer bytes (hyper's `TRAILER_LIMIT`).
pub const TRAILER_LIMIT: u64 = 16 * 1024;

/// Why a body could not be read to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyError {
    /// The connection ended before the declared end of the body.
    UnexpectedEof {
        /// Body bytes received.
        received: u64,
        /// The declared length (Content-Length), if any.
        declared: Option<u64>,
    },
    /// Bad chunked framing.
    Chunked(String),
    /// The body does not decode with the spec's content coding (Go's words).
    Coding(CodingError),
}

impl BodyError {
    /// Broken framing (a protocol error) rather than a body cut short.
    pub fn is_protocol(&self) -> bool {
        matches!(self, BodyError::Chunked(_))
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::UnexpectedEof { received, declared: Some(d) } => {
                write!(f, "unexpected EOF reading body ({received} of {d} bytes received)")
            }
            BodyError::UnexpectedEof { received, declared: None } => {
                write!(f, "unexpected EOF reading chunked body ({received} bytes received)")
            }
            BodyError::Chunked(m) => write!(f, "malformed chunked encoding: {m}"),
            BodyError::Coding(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BodyError {}

/// Keeps the first `limit` body bytes and counts all of them.
#[derive(Clone, Debug)]
pub struct BodySink {
    limit: usize,
    kept: Vec<u8>,
    total: u64,
}

impl BodySink {
    /// A sink keeping at most `limit` bytes.
    pub fn new(limit: usize) -> BodySink {
        BodySink { limit, kept: Vec::new(), total: 0 }
    }

    /// Takes body bytes: kept up to the limit, counted all.
    pub fn push(&mut self, bytes: &[u8]) {
        let room = self.limit - self.kept.len();
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.total += bytes.len() as u64;
    }

    /// `limit` bytes are kept.
    pub fn is_full(&self) -> bool {
        self.kept.len() >= self.limit
    }

    /// More bytes than `limit` were seen.
    pub fn overflowed(&self) -> bool {
        self.total > self.limit as u64
    }

    /// The most bytes kept.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes kept.
    pub fn kept(&self) -> &[u8] {
        &self.kept
    }

    /// Body bytes seen in all, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The bytes kept, for the outcome.
    pub fn into_kept(self) -> Vec<u8> {
        self.kept
    }
}

/// Where [`BodyDecoder::decode`] puts body bytes: the sink, or a content decoder before it.
pub trait BodyOut {
    /// Takes body bytes.
    fn push(&mut self, bytes: &[u8]);
    /// Stop decoding: nothing more is wanted.
    fn overflowed(&self) -> bool;
}

impl BodyOut for BodySink {
    fn push(&mut self, bytes: &[u8]) {
        BodySink::push(self, bytes);
    }
    fn overflowed(&self) -> bool {
        BodySink::overflowed(self)
    }
}

impl DecodedOut for BodySink {
    fn room(&self) -> usize {
        self.limit - self.kept.len()
    }
    fn push(&mut self, bytes: &[u8]) {
        BodySink::push(self, bytes);
    }
    fn overflowed(&self) -> bool {
        BodySink::overflowed(self)
    }
}

impl BodyOut for ContentDecoder {
    fn push(&mut self, bytes: &[u8]) {
        self.accept(bytes);
    }
    fn overflowed(&self) -> bool {
        false
    }
}

/// hyper's `ChunkedState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkedState {
    Start,
    Size,
    SizeLws,
    Extension,
    SizeLf,
    Body,
    BodyCr,
    BodyLf,
    Trailer,
    TrailerLf,
    EndCr,
    EndLf,
    End,
}

#[derive(Clone, Debug)]
enum Kind {
    Length { declared: u64, remaining: u64 },
    Chunked { state: ChunkedState, size: u64, extensions: u64, trailers: u64 },
    Close { ended: bool },
}

/// Decodes one body from the bytes that follow the head.
#[derive(Clone, Debug)]
pub struct BodyDecoder {
    kind: Kind,
    received: u64,
}

impl BodyDecoder {
    /// A decoder of a body delimited as `framing` says.
    pub fn new(framing: Framing) -> BodyDecoder {
        let kind = match framing {
            Framing::Length(n) => Kind::Length { declared: n, remaining: n },
            Framing::Chunked => {
                Kind::Chunked { state: ChunkedState::Start, size: 0, extensions: 0, trailers: 0 }
            }
            Framing::Close => Kind::Close { ended: false },
        };
        BodyDecoder { kind, received: 0 }
    }

    /// The whole body has been decoded.
    pub fn is_done(&self) -> bool {
        match self.kind {
            Kind::Length { remaining, .. } => remaining == 0,
            Kind::Chunked { state, .. } => state == ChunkedState::End,
            Kind::Close { ended } => ended,
        }
    }

    /// Body bytes still to come, when the framing says (Content-Length).
    pub fn known_remaining(&self) -> Option<u64> {
        match self.kind {
            Kind::Length { remaining, .. } => Some(remaining),
            _ => None,
        }
    }

    /// Decodes `input`, handing body bytes to `sink`. Stops at the end of the body or as soon as
    /// the sink has overflowed; returns how many input bytes were used.
    ///
    /// # Errors
    /// Bad chunked framing (sizes, extensions or trailers too long).
    pub fn decode(&mut self, input: &[u8], sink: &mut impl BodyOut) -> Result<usize, BodyError> {
        let mut pos = 0;
        while pos < input.len() && !self.is_done() && !sink.overflowed() {
            match &mut self.kind {
                Kind::Length { remaining, .. } => {
                    let n =
                        (input.len() - pos).min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                    sink.push(&input[pos..pos + n]);
                    *remaining -= n as u64;
                    self.received += n as u64;
                    pos += n;
                }
                Kind::Close { .. } => {
                    sink.push(&input[pos..]);
                    self.received += (input.len() - pos) as u64;
                    pos = input.len();
                }
                Kind::Chunked { state, size, extensions, trailers } => {
                    if *state == ChunkedState::Body {
                        let n =
                            (input.len() - pos).min(usize::try_from(*size).unwrap_or(usize::MAX));
                        sink.push(&input[pos..pos + n]);
                        *size -= n as u64;
                        self.received += n as u64;
                        pos += n;
                        if *size == 0 {
                            *state = ChunkedState::BodyCr;
                        }
                    } else {
                        let b = input[pos];
                        pos += 1;
                        *state = chunked_step(*state, b, size, extensions, trailers)?;
                    }
                }
            }
        }
        Ok(pos)
    }

    /// The connection ended: fine for a close-delimited body, an error for a body that had not
    /// reached its declared end.
    ///
    /// # Errors
    /// [`BodyError::UnexpectedEof`] for a body cut short.
    pub fn eof(&mut self) -> Result<(), BodyError> {
        if self.is_done() {
            return Ok(());
        }
        match &mut self.kind {
            Kind::Close { ended } => {
                *ended = true;
                Ok(())
            }
            Kind::Length { declared, .. } => {
                Err(BodyError::UnexpectedEof { received: self.received, declared: Some(*declared) })
            }
            Kind::Chunked { .. } => {
                Err(BodyError::UnexpectedEof { received: self.received, declared: None })
            }
        }
    }
}

fn hex_value(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some(u64::from(b - b'0')),
        b'a'..=b'f' => Some(u64::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(b - b'A' + 10)),
        _ => None,
    }
}

fn bad(msg: impl Into<String>) -> BodyError {
    BodyError::Chunked(msg.into())
}

fn shown(b: u8) -> String {
    format!("{:?}", b as char)
}

/// One byte of chunked framing outside chunk data.
fn chunked_step(
    state: ChunkedState,
    b: u8,
    size: &mut u64,
    extensions: &mut u64,
    trailers: &mut u64,
) -> Result<ChunkedState, BodyError> {
    use ChunkedState as S;
    // Every byte of a chunk-size line (digits, white space, extensions) counts toward one
    // limit: otherwise endless leading zeros or spaces would be read forever without a
    // single body byte.
    if matches!(state, S::Size | S::SizeLws | S::Extension) {
        *extensions += 1;
        if *extensions > CHUNK_EXTENSIONS_LIMIT {
            return Err(bad("chunk size lines and extensions larger than 16 KiB"));
        }
    }
    Ok(match state {
        S::Start => match hex_value(b) {
            Some(v) => {
                *size = v;
                S::Size
            }
            None => {
                return Err(bad(format!(
                    "invalid chunk size: expected a hex digit, found {}",
                    shown(b)
                )));
            }
        },
        S::Size => match b {
            b'\t' | b' ' => S::SizeLws,
            b';' => S::Extension,
            b'\r' => S::SizeLf,
            _ => match hex_value(b) {
                Some(v) => {
                    *size = size
                        .checked_mul(16)
                        .and_then(|s| s.checked_add(v))
                        .ok_or_else(|| bad("invalid chunk size: larger than 64 bits"))?;
                    S::Size
                }
                None => return Err(bad(format!("invalid chunk size: unexpected {}", shown(b)))),
            },
        },
        S::SizeLws => match b {
            b'\t' | b' ' => S::SizeLws,
            b';' => S::Extension,
            b'\r' => S::SizeLf,
            _ => {
                return Err(bad(format!(
                    "invalid chunk size: unexpected {} after white space",
                    shown(b)
                )));
            }
        },
        S::Extension => match b {
            b'\r' => S::SizeLf,
            b'\n' => return Err(bad("chunk extension contains a bare newline")),
            _ => S::Extension,
        },
        S::SizeLf => match b {
            b'\n' if *size == 0 => S::EndCr,
            b'\n' => S::Body,
            _ => {
                return Err(bad(format!(
                    "invalid chunk size line: expected LF, found {}",
                    shown(b)
                )));
            }
        },
        // Chunk data never comes here (the decoder copies it in bulk).
        S::Body => S::Body,
        S::BodyCr => match b {
            b'\r' => S::BodyLf,
            _ => return Err(bad(format!("expected CR after chunk data, found {}", shown(b)))),
        },
        S::BodyLf => match b {
            b'\n' => S::Start,
            _ => return Err(bad(format!("expected LF after chunk data, found {}", shown(b)))),
        },
        S::Trailer => {
            *trailers += 1;
            if *trailers > TRAILER_LIMIT {
                return Err(bad("chunked trailers larger than 16 KiB"));
            }
            if b == b'\r' { S::TrailerLf } else { S::Trailer }
        }
        S::TrailerLf => match b {
            b'\n' => S::EndCr,
            _ => {
                return Err(bad(format!(
                    "invalid trailer line end: expected LF, found {}",
                    shown(b)
                )));
            }
        },
        S::EndCr => match b {
            b'\r' => S::EndLf,
            _ => {
                *trailers += 1;
                S::Trailer
            }
        },
        S::EndLf => match b {
            b'\n' => S::End,
            _ => {
                return Err(bad(format!(
                    "invalid chunked body end: expected LF, found {}",
                    shown(b)
                )));
            }
        },
        S::End => S::End,
    })
}

/// Where a body stands after some input or an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyProgress {
    /// Read more.
    NeedMore,
    /// The limit is reached and it is not known yet whether more body follows: make one more
    /// read if it does not block, and call [`BodyReader::would_block`] if it does.
    AtLimit,
    /// Stop reading: the body is complete, or the limit is reached.
    Complete {
        /// More body was seen than kept.
        truncated: bool,
    },
}

/// Decoded bytes a reader produces per [`BodyReader::feed`] or [`BodyReader::resume`]: the
/// bound on decoding work between two checks of the probe's turn budget.
pub const DECODE_PER_STEP: usize = 32 * 1024;

/// A decoder and a sink together: the whole body logic of a probe, without I/O.
#[derive(Debug)]
pub struct BodyReader {
    decoder: BodyDecoder,
    sink: BodySink,
    /// The content decoder, when the spec names a coding (see [`crate::coding`]).
    coding: Option<Box<ContentDecoder>>,
    /// Bytes came after the end of the body (the connection cannot be reused).
    excess: bool,
}

impl BodyReader {
    /// A reader of a body framed as `framing`, keeping at most `limit` bytes.
    pub fn new(framing: Framing, limit: usize) -> BodyReader {
        BodyReader {
            decoder: BodyDecoder::new(framing),
            sink: BodySink::new(limit),
            coding: None,
            excess: false,
        }
    }

    /// A reader that decodes the body with `coding` (when not identity) before keeping at most
    /// `limit` decoded bytes.
    pub fn with_coding(framing: Framing, limit: usize, coding: Option<Compression>) -> BodyReader {
        let mut reader = BodyReader::new(framing, limit);
        reader.coding = coding.and_then(ContentDecoder::new).map(Box::new);
        reader
    }

    /// Feeds bytes read from the connection. With a content coding, call it only when
    /// [`BodyReader::has_work`] is false (the bytes waiting to be decoded stay at one read).
    ///
    /// # Errors
    /// Bad framing or coding before the limit was reached (past it the kubelet reads nothing
    /// more).
    pub fn feed(&mut self, input: &[u8]) -> Result<BodyProgress, BodyError> {
        let decoded = match self.coding.as_deref_mut() {
            None => self.decoder.decode(input, &mut self.sink),
            Some(coding) => self.decoder.decode(input, coding),
        };
        match decoded {
            Ok(used) => {
                self.excess |= used < input.len();
                self.resume()
            }
            // Past the limit the kubelet reads nothing more: later framing errors are not seen.
            Err(_) if self.sink.is_full() => Ok(BodyProgress::Complete { truncated: false }),
            Err(e) => Err(e),
        }
    }

    /// Body bytes wait to be decoded: call [`BodyReader::resume`], not read, next.
    pub fn has_work(&self) -> bool {
        self.coding.as_ref().is_some_and(|c| c.has_work()) && !self.sink.overflowed()
    }

    /// Decodes at most [`DECODE_PER_STEP`] more bytes of what was fed.
    ///
    /// # Errors
    /// A body that does not decode, or whose framing ends before its coding, before the limit.
    pub fn resume(&mut self) -> Result<BodyProgress, BodyError> {
        let Some(coding) = self.coding.as_deref_mut() else { return Ok(self.progress()) };
        let step = coding.pump(&mut self.sink, DECODE_PER_STEP);
        let progress = match step {
            Ok(()) => self.coded_progress(),
            Err(e) => Err(BodyError::Coding(e)),
        };
        match progress {
            // Past the limit the kubelet reads nothing more: later errors are not seen (the
            // step that met one may have decoded past the limit first).
            Err(_) if self.sink.is_full() => {
                Ok(BodyProgress::Complete { truncated: self.sink.overflowed() })
            }
            p => p,
        }
    }

    /// [`BodyReader::progress`] of a body with a content coding: it is complete when its
    /// stream ends (what follows is not read, as Go's readers stop there), or when its framing
    /// ends after a complete stream.
    fn coded_progress(&self) -> Result<BodyProgress, BodyError> {
        let Some(coding) = self.coding.as_deref() else { return Ok(self.progress()) };
        Ok(if self.sink.overflowed() {
            BodyProgress::Complete { truncated: true }
        } else if coding.has_work() {
            BodyProgress::NeedMore
        } else if coding.ended() {
            BodyProgress::Complete { truncated: false }
        } else if self.decoder.is_done() {
            coding.finish().map_err(BodyError::Coding)?;
            BodyProgress::Complete { truncated: false }
        } else if self.sink.is_full() {
            // Whether more decoded bytes follow is known only once more input comes.
            BodyProgress::AtLimit
        } else {
            BodyProgress::NeedMore
        })
    }

    fn progress(&self) -> BodyProgress {
        if self.sink.overflowed() {
            BodyProgress::Complete { truncated: true }
        } else if self.decoder.is_done() {
            BodyProgress::Complete { truncated: false }
        } else if self.sink.is_full() {
            match self.decoder.known_remaining() {
                Some(n) => BodyProgress::Complete { truncated: n > 0 },
                None => BodyProgress::AtLimit,
            }
        } else {
            BodyProgress::NeedMore
        }
    }

    /// The connection ended (EOF).
    ///
    /// # Errors
    /// A body cut short of its declared end (or of its coded stream), before the limit was
    /// reached.
    pub fn eof(&mut self) -> Result<BodyProgress, BodyError> {
        let framed = self.decoder.eof();
        let coded = match (&framed, self.coding.as_deref()) {
            (Ok(()), Some(c)) if !c.ended() => c.finish().map_err(BodyError::Coding),
            _ => Ok(()),
        };
        match framed.and(coded) {
            Ok(()) => Ok(BodyProgress::Complete { truncated: self.sink.overflowed() }),
            Err(_) if self.sink.is_full() => Ok(BodyProgress::Complete { truncated: false }),
            Err(e) => Err(e),
        }
    }

    /// The extra read at the limit would block: stop with what is known.
    pub fn would_block(&self) -> BodyProgress {
        let progress = match self.coding {
            Some(_) => self.coded_progress().unwrap_or(BodyProgress::AtLimit),
            None => self.progress(),
        };
        match progress {
            BodyProgress::AtLimit => BodyProgress::Complete { truncated: false },
            p => p,
        }
    }

    /// The body was read to its declared end (Content-Length or the last chunk), and nothing
    /// followed it: the connection is where the next response would start. Never for a body
    /// delimited by the end of the connection.
    pub fn at_end(&self) -> bool {
        self.decoder.is_done() && !self.excess && !matches!(self.decoder.kind, Kind::Close { .. })
    }

    /// What was kept so far.
    pub fn sink(&self) -> &BodySink {
        &self.sink
    }

    /// What was kept, for the outcome.
    pub fn into_sink(self) -> BodySink {
        self.sink
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(
        framing: Framing,
        input: &[u8],
        step: usize,
    ) -> (Result<bool, BodyError>, Vec<u8>) {
        let mut d = BodyDecoder::new(framing);
        let mut sink = BodySink::new(1 << 20);
        for chunk in input.chunks(step.max(1)) {
            let mut off = 0;
            while off < chunk.len() && !d.is_done() {
                match d.decode(&chunk[off..], &mut sink) {
                    Ok(n) => off += n,
                    Err(e) => return (Err(e), sink.into_kept()),
                }
            }
        }
        let done = d.is_done();
        (Ok(done), sink.into_kept())
    }

    #[test]
    fn content_length() {
        for step in [1, 3, 100] {
            let (r, out) = decode_all(Framing::Length(5), b"helloEXTRA", step);
            assert_eq!(r, Ok(true));
            assert_eq!(out, b"hello");
        }
        let mut d = BodyDecoder::new(Framing::Length(10));
        let mut s = BodySink::new(100);
        assert_eq!(d.decode(b"abc", &mut s), Ok(3));
        assert_eq!(d.eof(), Err(BodyError::UnexpectedEof { received: 3, declared: Some(10) }));
        assert_eq!(
            d.eof().unwrap_err().to_string(),
            "unexpected EOF reading body (3 of 10 bytes received)"
        );
        assert!(BodyDecoder::new(Framing::Length(0)).is_done());
    }

    #[test]
    fn chunked_exact_in_any_split() {
        let wire = b"5\r\nhello\r\n1A;ext=1;b=\"x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\nNEXT";
        for step in [1, 2, 7, 1000] {
            let (r, out) = decode_all(Framing::Chunked, wire, step);
            assert_eq!(r, Ok(true), "step {step}");
            assert_eq!(out, b"helloabcdefghijklmnopqrstuvwxyz");
        }
        let mut d = BodyDecoder::new(Framing::Chunked);
        let mut s = BodySink::new(100);
        let used = d.decode(wire, &mut s).unwrap();
        assert_eq!(&wire[used..], b"NEXT");
        let (r, out) = decode_all(Framing::Chunked, b"3 \t;x\r\nabc\r\n0\r\n\r\n", 1);
        assert_eq!((r, out), (Ok(true), b"abc".to_vec()));
    }

    #[test]
    fn chunked_errors() {
        let err = |wire: &[u8]| decode_all(Framing::Chunked, wire, 1000).0.unwrap_err().to_string();
        assert_eq!(
            err(b"zz\r\n"),
            "malformed chunked encoding: invalid chunk size: expected a hex digit, found 'z'"
        );
        assert_eq!(
            err(b"ffffffffffffffffffff\r\n"),
            "malformed chunked encoding: invalid chunk size: larger than 64 bits"
        );
        // 16 hex digits fit, 17 do not.
        assert_eq!(decode_all(Framing::Chunked, b"ffffffffffffffff\r\nab", 1000).0, Ok(false));
        assert!(err(b"10000000000000000\r\n").contains("larger than 64 bits"));
        assert!(err(b"5x\r\n").contains("invalid chunk size: unexpected 'x'"));
        assert!(err(b"5 x\r\n").contains("after white space"));
        assert!(err(b"5\rx").contains("expected LF"));
        assert!(err(b"2\r\nabX").contains("expected CR after chunk data"));
        assert!(err(b"2\r\nab\rX").contains("expected LF after chunk data"));
        assert!(err(b"2;a\nb\r\n").contains("bare newline"));
        assert!(err(b"0\r\n\rX").contains("invalid chunked body end"));
        assert!(err(b"0\r\nA: b\rX").contains("invalid trailer line end"));
        let mut ext = b"1;".to_vec();
        ext.extend(std::iter::repeat_n(b'e', 16 * 1024 + 1));
        assert!(err(&ext).contains("extensions larger than 16 KiB"));
        let mut tr = b"0\r\n".to_vec();
        tr.extend(std::iter::repeat_n(b't', 16 * 1024 + 1));
        assert!(err(&tr).contains("trailers larger than 16 KiB"));
        // Early EOF.
        let mut d = BodyDecoder::new(Framing::Chunked);
        let mut s = BodySink::new(10);
        d.decode(b"5\r\nab", &mut s).unwrap();
        assert_eq!(
            d.eof().unwrap_err().to_string(),
            "unexpected EOF reading chunked body (2 bytes received)"
        );
        assert!(BodyError::Chunked(String::new()).is_protocol());
    }

    #[test]
    fn close_delimited() {
        let mut d = BodyDecoder::new(Framing::Close);
        let mut s = BodySink::new(100);
        assert_eq!(d.decode(b"abc", &mut s), Ok(3));
        assert!(!d.is_done());
        assert_eq!(d.eof(), Ok(()));
        assert!(d.is_done());
        assert_eq!(s.kept(), b"abc");
    }

    #[test]
    fn sink_keeps_limit_and_counts() {
        let mut s = BodySink::new(4);
        s.push(b"ab");
        assert!(!s.is_full());
        s.push(b"cdef");
        assert!(s.is_full() && s.overflowed());
        assert_eq!((s.kept(), s.total()), (&b"abcd"[..], 6));
    }

    #[test]
    fn reader_truncation_rules() {
        use BodyProgress::*;
        // Content-Length: decided by the declared length (H41, H42, H46).
        let mut r = BodyReader::new(Framing::Length(10241), 10240);
        assert_eq!(r.feed(&[b'a'; 10240]), Ok(Complete { truncated: true }));
        let mut r = BodyReader::new(Framing::Length(10240), 10240);
        assert_eq!(r.feed(&[b'a'; 10240]), Ok(Complete { truncated: false }));
        let mut r = BodyReader::new(Framing::Length(10239), 10240);
        assert_eq!(r.feed(&[b'a'; 5000]), Ok(NeedMore));
        assert_eq!(r.feed(&[b'a'; 5239]), Ok(Complete { truncated: false }));
        assert_eq!(r.sink().kept().len(), 10239);
        // A long Content-Length body cut short after the limit is not an error.
        let mut r = BodyReader::new(Framing::Length(1 << 30), 4);
        assert_eq!(r.feed(b"abcdef"), Ok(Complete { truncated: true }));
        assert_eq!(r.sink().kept(), b"abcd");

        // Close-delimited: one byte past the limit, EOF, or a read that would block.
        let mut r = BodyReader::new(Framing::Close, 4);
        assert_eq!(r.feed(b"abcd"), Ok(AtLimit));
        assert_eq!(r.eof(), Ok(Complete { truncated: false }));
        let mut r = BodyReader::new(Framing::Close, 4);
        assert_eq!(r.feed(b"abcd"), Ok(AtLimit));
        assert_eq!(r.feed(b"e"), Ok(Complete { truncated: true }));
        let mut r = BodyReader::new(Framing::Close, 4);
        assert_eq!(r.feed(b"abcd"), Ok(AtLimit));
        assert_eq!(r.would_block(), Complete { truncated: false });
        let mut r = BodyReader::new(Framing::Close, 4);
        assert_eq!(r.feed(b"ab"), Ok(NeedMore));
        assert_eq!(r.eof(), Ok(Complete { truncated: false }));
        assert_eq!(r.sink().kept(), b"ab");

        // Chunked: the terminating chunk right after the limit is not "more".
        let mut r = BodyReader::new(Framing::Chunked, 4);
        assert_eq!(r.feed(b"4\r\nabcd\r\n0\r\n\r\n"), Ok(Complete { truncated: false }));
        let mut r = BodyReader::new(Framing::Chunked, 4);
        assert_eq!(r.feed(b"4\r\nabcd\r\n"), Ok(AtLimit));
        assert_eq!(r.feed(b"1\r\ne"), Ok(Complete { truncated: true }));
        // Broken framing or EOF after the limit is not seen, as in the kubelet.
        let mut r = BodyReader::new(Framing::Chunked, 4);
        assert_eq!(r.feed(b"4\r\nabcd\r\nzz"), Ok(Complete { truncated: false }));
        let mut r = BodyReader::new(Framing::Chunked, 4);
        assert_eq!(r.feed(b"4\r\nabcd"), Ok(AtLimit));
        assert_eq!(r.eof(), Ok(Complete { truncated: false }));
        // Before the limit they are errors.
        let mut r = BodyReader::new(Framing::Chunked, 4);
        assert!(r.feed(b"2\r\nab\r\nzz").is_err());
        let mut r = BodyReader::new(Framing::Length(10), 4);
        assert_eq!(r.feed(b"ab"), Ok(NeedMore));
        assert!(r.eof().is_err());
    }

    #[test]
    fn endless_chunk_size_line_is_refused() {
        // Leading zeros and white space carry no body bytes; they still must not go on forever.
        for filler in [b' ', b'0'] {
            let mut d = BodyDecoder::new(Framing::Chunked);
            let mut sink = BodySink::new(10240);
            // "1" then spaces, or zeros only (a size that stays 0 and never overflows).
            let mut input = vec![if filler == b'0' { b'0' } else { b'1' }];
            input.extend(std::iter::repeat_n(filler, 20_000));
            let e = d.decode(&input, &mut sink).unwrap_err();
            assert!(e.to_string().contains("larger than 16 KiB"), "{e}");
        }
    }
}
