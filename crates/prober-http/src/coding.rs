//! Content decoding of a body (blackbox_exporter's `compression`): gzip, raw DEFLATE and brotli,
//! sans-I/O and incremental.
//!
//! The body reader hands the framed (de-chunked) body bytes to a [`ContentDecoder`], which keeps
//! them until they are decoded ([`ContentDecoder::accept`]); [`ContentDecoder::pump`] decodes
//! into the [`DecodedOut`] and stops at whichever comes first: the input is used up, the sink has
//! overflowed (the output limit bounds the *decoded* bytes, and nothing past one byte over it is
//! ever produced), the stream ended, or `budget` decoded bytes were produced in this call. So a
//! small body that expands without end (a decompression bomb) costs at most the output limit
//! plus one of decoding, in slices of `budget` bytes, and the probe yields between slices.
//!
//! Memory per decoder: DEFLATE and gzip (miniz_oxide, pure Rust) a 32 KiB window and their
//! tables (about 43 KiB) plus the [`OUT_CHUNK`] buffer; brotli (`brotli-decompressor`, pure
//! Rust) a ring buffer of the window the stream declares, at most 16 MiB (RFC 7932's largest;
//! the non-standard "large window" streams of up to 1 GiB are refused), shrunk to the body's
//! size when its first meta-block is its last. Input waiting to be decoded is at most one read.
//!
//! Errors are worded as Go's readers word them (`gzip: invalid header`, `gzip: invalid
//! checksum`, `flate: corrupt input`, `unexpected EOF`); blackbox_exporter logs them and fails
//! the probe.

use std::fmt;

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::{Crc, Decompress, FlushDecompress, Status};
use prober_core::Compression;

/// Where decoded bytes go (the body reader's sink).
pub trait DecodedOut {
    /// How many more bytes it keeps before it is full.
    fn room(&self) -> usize;
    /// Takes decoded bytes.
    fn push(&mut self, bytes: &[u8]);
    /// More bytes came than it keeps: nothing more is wanted.
    fn overflowed(&self) -> bool;
}

/// Decoded bytes produced per step of a decoder.
pub const OUT_CHUNK: usize = 16 * 1024;
/// The longest gzip member header accepted (Go reads the name and comment without a bound; a
/// header is a few bytes).
pub const MAX_GZIP_HEADER: usize = 64 * 1024;

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodingError(pub String);

impl fmt::Display for CodingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(msg: &str) -> CodingError {
    CodingError(msg.to_string())
}

type Brotli = BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>;

enum GzPhase {
    /// Reading a member header (at the start, or after a member when more bytes come).
    Header,
    Data,
    Trailer,
    /// A member ended: the body may end here, or another member follows.
    Between,
}

enum Codec {
    Deflate(Box<Decompress>),
    Gzip { inflate: Box<Decompress>, crc: Crc, phase: GzPhase },
    Br(Box<Brotli>),
}

/// Decodes one body's content coding into a [`DecodedOut`] (see the module documentation).
pub struct ContentDecoder {
    codec: Codec,
    /// Body bytes received and not yet decoded.
    pending: Vec<u8>,
    /// The last step filled its output: the decoder may hold more output without more input.
    more_out: bool,
    /// The compressed stream reached its end (DEFLATE, brotli): what follows is not read.
    ended: bool,
    out: Box<[u8]>,
}

impl fmt::Debug for ContentDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContentDecoder")
            .field("pending", &self.pending.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl ContentDecoder {
    /// A decoder of `coding`; `None` for [`Compression::Identity`], which needs none.
    pub fn new(coding: Compression) -> Option<ContentDecoder> {
        let codec = match coding {
            Compression::Identity => return None,
            Compression::Deflate => Codec::Deflate(Box::new(Decompress::new(false))),
            Compression::Gzip => Codec::Gzip {
                inflate: Box::new(Decompress::new(false)),
                crc: Crc::new(),
                phase: GzPhase::Header,
            },
            Compression::Br => {
                let mut state = Box::new(Brotli::new(
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                ));
                // RFC 7932 windows only (at most 16 MiB): a large-window stream (up to 1 GiB,
                // not an HTTP content coding) is refused, not allocated for.
                state.large_window = false;
                Codec::Br(state)
            }
        };
        Some(ContentDecoder {
            codec,
            pending: Vec::new(),
            more_out: false,
            ended: false,
            out: vec![0; OUT_CHUNK].into_boxed_slice(),
        })
    }

    /// Takes body bytes to decode (dropped once the stream has ended).
    pub fn accept(&mut self, bytes: &[u8]) {
        if !self.ended {
            self.pending.extend_from_slice(bytes);
        }
    }

    /// Decoding work is left that needs no more input: call [`ContentDecoder::pump`] before
    /// reading again.
    pub fn has_work(&self) -> bool {
        !self.ended && (self.more_out || !self.pending.is_empty()) && !self.waits_for_input()
    }

    /// The pending bytes are an incomplete gzip header or trailer: only more input helps.
    fn waits_for_input(&self) -> bool {
        match &self.codec {
            Codec::Gzip { phase: GzPhase::Header | GzPhase::Between, .. } => {
                !self.pending.is_empty() && matches!(gzip_header(&self.pending), Ok(None))
            }
            Codec::Gzip { phase: GzPhase::Trailer, .. } => self.pending.len() < 8,
            _ => false,
        }
    }

    /// The stream ended (DEFLATE, brotli): the body is complete, whatever follows it.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Decodes pending bytes into `sink` until they are used up, the sink has overflowed, the
    /// stream ended, or about `budget` decoded bytes were produced.
    ///
    /// # Errors
    /// Input that is not of the coding (Go's words).
    pub fn pump(&mut self, sink: &mut impl DecodedOut, budget: usize) -> Result<(), CodingError> {
        let mut produced = 0;
        while self.has_work() && !sink.overflowed() && produced < budget {
            // Never more than one byte past the limit: that byte says the body is longer.
            let room = (sink.room() + 1).min(OUT_CHUNK);
            // What a failing step decoded before the fault is kept too, so the bytes kept do
            // not depend on how the body was split into reads.
            let (used, made, fault) = self.step(room);
            sink.push(&self.out[..made]);
            self.pending.drain(..used);
            fault?;
            produced += made;
            self.more_out = made == room;
            if used == 0 && made == 0 && !self.more_out {
                break; // waits for input (a partial header, trailer or code)
            }
        }
        Ok(())
    }

    /// One decoding step into `self.out[..room]`: input bytes used, output bytes made (also
    /// when it fails: what came before the fault), and the fault.
    fn step(&mut self, room: usize) -> (usize, usize, Result<(), CodingError>) {
        match self.step_codec(room) {
            Ok((used, made)) => (used, made, Ok(())),
            Err((made, e)) => (0, made, Err(e)),
        }
    }

    fn step_codec(&mut self, room: usize) -> Result<(usize, usize), (usize, CodingError)> {
        let out = &mut self.out[..room];
        let fault = |e: CodingError| (0, e);
        match &mut self.codec {
            Codec::Deflate(inflate) => {
                let (used, made, end) = inflate_step(inflate, &self.pending, out)?;
                self.ended = end;
                Ok((used, made))
            }
            Codec::Br(state) => {
                let (mut avail_in, mut in_off) = (self.pending.len(), 0);
                let (mut avail_out, mut out_off, mut total) = (out.len(), 0, 0);
                let r = BrotliDecompressStream(
                    &mut avail_in,
                    &mut in_off,
                    &self.pending,
                    &mut avail_out,
                    &mut out_off,
                    out,
                    &mut total,
                    state,
                );
                match r {
                    BrotliResult::ResultFailure => Err((out_off, err("brotli: corrupt input"))),
                    BrotliResult::ResultSuccess => {
                        self.ended = true;
                        Ok((in_off, out_off))
                    }
                    BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => {
                        Ok((in_off, out_off))
                    }
                }
            }
            Codec::Gzip { inflate, crc, phase } => match phase {
                GzPhase::Header | GzPhase::Between => {
                    match gzip_header(&self.pending).map_err(fault)? {
                        None => Ok((0, 0)),
                        Some(len) => {
                            inflate.reset(false);
                            crc.reset();
                            *phase = GzPhase::Data;
                            Ok((len, 0))
                        }
                    }
                }
                GzPhase::Data => {
                    let (used, made, end) = inflate_step(inflate, &self.pending, out)
                        .inspect_err(|(made, _)| crc.update(&out[..*made]))?;
                    crc.update(&out[..made]);
                    if end {
                        *phase = GzPhase::Trailer;
                    }
                    Ok((used, made))
                }
                GzPhase::Trailer => {
                    let Some(t) = self.pending.get(..8) else { return Ok((0, 0)) };
                    let sum = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
                    let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
                    if sum != crc.sum() || size != crc.amount() {
                        return Err(fault(err("gzip: invalid checksum")));
                    }
                    *phase = GzPhase::Between;
                    Ok((8, 0))
                }
            },
        }
    }

    /// The body ended: the stream must be complete (a gzip body after a whole member).
    ///
    /// # Errors
    /// `unexpected EOF` for a stream cut short (an empty body too, as Go's readers say).
    pub fn finish(&self) -> Result<(), CodingError> {
        let complete = self.ended
            || matches!(&self.codec, Codec::Gzip { phase: GzPhase::Between, .. })
                && self.pending.is_empty();
        if complete { Ok(()) } else { Err(err("unexpected EOF")) }
    }
}

/// One raw-DEFLATE step: bytes used, bytes made, whether the stream ended; on a fault, the
/// bytes made before it (flate2 counts them before it reports the fault).
fn inflate_step(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut [u8],
) -> Result<(usize, usize, bool), (usize, CodingError)> {
    let (in0, out0) = (inflate.total_in(), inflate.total_out());
    let status = inflate.decompress(input, out, FlushDecompress::None);
    let used = usize::try_from(inflate.total_in() - in0).unwrap_or(input.len());
    let made = usize::try_from(inflate.total_out() - out0).unwrap_or(0).min(out.len());
    match status {
        Ok(status) => Ok((used, made, status == Status::StreamEnd)),
        Err(_) => Err((made, err("flate: corrupt input"))),
    }
}

/// The length of the gzip member header at the start of `buf` (RFC 1952 2.3), `None` while it
/// is incomplete.
fn gzip_header(buf: &[u8]) -> Result<Option<usize>, CodingError> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let invalid = || err("gzip: invalid header");
    if buf.first().is_some_and(|&b| b != 0x1f)
        || buf.get(1).is_some_and(|&b| b != 0x8b)
        || buf.get(2).is_some_and(|&b| b != 8)
    {
        return Err(invalid());
    }
    if buf.len() < 10 {
        return Ok(None);
    }
    let flags = buf[3];
    if flags & 0xe0 != 0 {
        return Err(invalid());
    }
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let Some(l) = buf.get(at..at + 2) else { return incomplete(buf) };
        at += 2 + usize::from(u16::from_le_bytes([l[0], l[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let Some(rest) = buf.get(at..) else { return incomplete(buf) };
            match rest.iter().position(|&b| b == 0) {
                Some(z) => at += z + 1,
                None => return incomplete(buf),
            }
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if buf.len() < at { incomplete(buf) } else { Ok(Some(at)) }
}

fn incomplete(buf: &[u8]) -> Result<Option<usize>, CodingError> {
    if buf.len() > MAX_GZIP_HEADER { Err(err("gzip: header larger than 64 KiB")) } else { Ok(None) }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::{DeflateEncoder, GzEncoder};
    use flate2::{Compression as Level, GzBuilder};

    use super::*;
    use crate::body::{BodyError, BodyProgress, BodyReader, Framing};

    fn gzip_named(plain: &[u8]) -> Vec<u8> {
        let mut e = GzBuilder::new()
            .filename("name.txt")
            .comment("a comment")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), Level::default());
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    }

    fn deflate(plain: &[u8]) -> Vec<u8> {
        let mut e = DeflateEncoder::new(Vec::new(), Level::default());
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    }

    /// Feeds `wire` `step` bytes at a time, decoding all that waits before each feed, as the
    /// probe does; then EOF.
    fn read_all(
        coding: Compression,
        wire: &[u8],
        step: usize,
        limit: usize,
    ) -> (Result<BodyProgress, BodyError>, Vec<u8>) {
        let mut r = BodyReader::with_coding(Framing::Close, limit, Some(coding));
        let mut last = Ok(BodyProgress::NeedMore);
        for chunk in wire.chunks(step) {
            while r.has_work() && last.is_ok() {
                last = r.resume();
            }
            if matches!(last, Ok(BodyProgress::Complete { .. }) | Err(_)) {
                return (last, r.into_sink().into_kept());
            }
            last = r.feed(chunk);
        }
        while r.has_work() && last.is_ok() {
            last = r.resume();
        }
        if !matches!(last, Ok(BodyProgress::Complete { .. }) | Err(_)) {
            last = r.eof();
        }
        (last, r.into_sink().into_kept())
    }

    #[test]
    fn gzip_with_every_header_field_in_any_split() {
        let plain: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut wire = gzip_named(&plain);
        wire.extend(gzip_named(b"second member")); // members follow one another
        for step in [1, 7, 4096, wire.len()] {
            let (r, out) = read_all(Compression::Gzip, &wire, step, 1 << 20);
            assert_eq!(r, Ok(BodyProgress::Complete { truncated: false }), "step {step}");
            assert_eq!(out.len(), plain.len() + 13);
            assert!(out.starts_with(&plain) && out.ends_with(b"second member"));
        }
    }

    #[test]
    fn deflate_and_its_trailing_bytes() {
        let mut wire = deflate(b"hello deflate");
        wire.extend_from_slice(b"not read"); // after the final block: not read, as Go's reader
        for step in [1, 3, 1000] {
            let (r, out) = read_all(Compression::Deflate, &wire, step, 100);
            assert_eq!(
                (r, out),
                (Ok(BodyProgress::Complete { truncated: false }), b"hello deflate".to_vec())
            );
        }
    }

    #[test]
    fn broken_streams_fail_with_go_words() {
        let err = |coding, wire: &[u8]| match read_all(coding, wire, 5, 1 << 20).0 {
            Err(e) => e.to_string(),
            other => panic!("{other:?}"),
        };
        let whole = gzip_named(b"some text");
        assert_eq!(err(Compression::Gzip, &whole[..whole.len() - 3]), "unexpected EOF");
        assert_eq!(err(Compression::Gzip, &whole[..4]), "unexpected EOF");
        assert_eq!(err(Compression::Gzip, b""), "unexpected EOF");
        let mut bad_sum = whole.clone();
        let at = bad_sum.len() - 8;
        bad_sum[at] ^= 1;
        assert_eq!(err(Compression::Gzip, &bad_sum), "gzip: invalid checksum");
        let mut garbage_after = whole.clone();
        garbage_after.extend_from_slice(b"garbage");
        assert_eq!(err(Compression::Gzip, &garbage_after), "gzip: invalid header");
        assert_eq!(err(Compression::Gzip, b"plain text"), "gzip: invalid header");
        assert_eq!(err(Compression::Deflate, &[0xff; 16]), "flate: corrupt input");
        let d = deflate(b"some text");
        assert_eq!(err(Compression::Deflate, &d[..d.len() - 2]), "unexpected EOF");
        assert_eq!(err(Compression::Br, &[0xff; 16]), "brotli: corrupt input");
        // A gzip header without end is refused at 64 KiB, not held.
        let mut endless_name = vec![0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0];
        endless_name.extend(std::iter::repeat_n(b'n', MAX_GZIP_HEADER));
        assert_eq!(err(Compression::Gzip, &endless_name), "gzip: header larger than 64 KiB");
    }

    #[test]
    fn bytes_decoded_before_a_fault_are_kept_whatever_the_split() {
        // Found by fuzz/content_coding: one DEFLATE code, then a corrupt one. Read whole, the
        // step that met the fault used to drop the byte it had decoded; read in two, the first
        // read kept it.
        let wire = [0x0a, 0x00, 0xd8, 0xfd, 0xf5, 0xf5];
        for step in [wire.len(), 2, 1] {
            let (r, out) = read_all(Compression::Deflate, &wire, step, 100);
            assert_eq!(r.unwrap_err().to_string(), "flate: corrupt input", "step {step}");
            assert_eq!(out, b"P", "step {step}");
        }
    }

    #[test]
    fn a_fault_past_the_limit_is_not_seen_and_the_body_is_truncated() {
        // Found by fuzz/content_coding: zeros, then a corrupt code. With a limit of 1 the
        // step that decodes past the limit also meets the fault: the body is truncated (more
        // than the limit came) and the fault unseen, as when the reads bring them apart.
        let wire = [0x02, 0x0a, 0x00, 0x00, 0x00, 0x02, 0x00, 0x84, 0x00, 0x84];
        for step in [wire.len(), 1] {
            let (r, out) = read_all(Compression::Deflate, &wire, step, 1);
            assert_eq!((r, out), (Ok(BodyProgress::Complete { truncated: true }), vec![0]));
        }
    }

    #[test]
    fn the_limit_bounds_decoded_bytes_and_the_work_of_a_step() {
        // 16 MiB of zeros in about 16 KiB: one byte past the limit is decoded, no more.
        let mut e = GzEncoder::new(Vec::new(), Level::best());
        let mib = vec![0; 1 << 20];
        for _ in 0..16 {
            e.write_all(&mib).unwrap();
        }
        let wire = e.finish().unwrap();
        let mut r = BodyReader::with_coding(
            Framing::Length(wire.len() as u64),
            1000,
            Some(Compression::Gzip),
        );
        assert_eq!(r.feed(&wire), Ok(BodyProgress::Complete { truncated: true }));
        assert_eq!((r.sink().kept().len(), r.sink().total()), (1000, 1001));
        // With a large limit, one feed decodes at most DECODE_PER_STEP (plus one output chunk).
        let mut r = BodyReader::with_coding(
            Framing::Length(wire.len() as u64),
            16 << 20,
            Some(Compression::Gzip),
        );
        assert_eq!(r.feed(&wire), Ok(BodyProgress::NeedMore));
        assert!(r.has_work());
        assert!(r.sink().total() <= (crate::body::DECODE_PER_STEP + OUT_CHUNK) as u64);
        let mut steps = 0;
        while r.has_work() {
            r.resume().unwrap();
            steps += 1;
        }
        assert_eq!(r.sink().total(), 16 << 20);
        assert!(steps >= (16 << 20) / (crate::body::DECODE_PER_STEP + OUT_CHUNK) - 1, "{steps}");
    }

    #[test]
    fn chunked_framing_around_a_coded_body() {
        let d = deflate(b"inside chunks");
        let mut wire = Vec::new();
        for c in d.chunks(3) {
            wire.extend(format!("{:x}\r\n", c.len()).bytes());
            wire.extend_from_slice(c);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        let mut r = BodyReader::with_coding(Framing::Chunked, 100, Some(Compression::Deflate));
        let mut last = Ok(BodyProgress::NeedMore);
        for b in wire.chunks(1) {
            last = r.feed(b);
            while r.has_work() {
                last = r.resume();
            }
        }
        assert_eq!(last, Ok(BodyProgress::Complete { truncated: false }));
        assert_eq!(r.sink().kept(), b"inside chunks");
    }
}
