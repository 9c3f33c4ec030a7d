//! Content decoding (`prober_http::coding`, through `BodyReader::with_coding`): gzip, raw
//! DEFLATE and brotli bodies from a hostile peer.
//!
//! Input: byte 0 picks the coding, byte 1 the read size, bytes 2..4 the output limit; the rest
//! is the body as it comes (close-delimited), or for byte 0 >= 128 a payload that is first
//! compressed (gzip or DEFLATE, a round trip).
//!
//! Checked beyond "no panic":
//! - decoding is independent of how the body is split into reads (before a fault, the bytes
//!   kept may stop at different points of the same stream);
//! - at most `limit` bytes are kept and at most one decoded byte past the limit is produced;
//! - one step (`feed` or `resume`) decodes at most `DECODE_PER_STEP` plus one output chunk;
//! - a well-formed stream decodes to its payload (up to the limit), without an error.
#![no_main]

use std::io::Write;

use flate2::Compression as Level;
use flate2::write::{DeflateEncoder, GzEncoder};
use libfuzzer_sys::fuzz_target;
use prober_core::Compression;
use prober_http::body::{BodyError, BodyProgress, BodyReader, DECODE_PER_STEP, Framing};
use prober_http::coding::OUT_CHUNK;

/// Reads `wire` in reads of `step` as the probe does: decoding what waits before each read.
fn read(coding: Compression, wire: &[u8], step: usize, limit: usize) -> (Vec<u8>, Result<bool, BodyError>) {
    let mut r = BodyReader::with_coding(Framing::Close, limit, Some(coding));
    let mut done = None;
    let bounded = |r: &BodyReader, before: u64| {
        let made = r.sink().total() - before;
        assert!(made <= (DECODE_PER_STEP + OUT_CHUNK) as u64, "one step decoded {made} bytes");
    };
    'reads: for chunk in wire.chunks(step) {
        loop {
            let before = r.sink().total();
            let p = if r.has_work() { r.resume() } else { r.feed(chunk) };
            bounded(&r, before);
            match p {
                Ok(BodyProgress::Complete { truncated }) => {
                    done = Some(Ok(truncated));
                    break 'reads;
                }
                Err(e) => {
                    done = Some(Err(e));
                    break 'reads;
                }
                Ok(_) if r.has_work() => {}
                Ok(_) => break,
            }
        }
    }
    let done = done.unwrap_or_else(|| match r.eof() {
        Ok(BodyProgress::Complete { truncated }) => Ok(truncated),
        Ok(p) => panic!("eof left the reader at {p:?}"),
        Err(e) => Err(e),
    });
    let sink = r.sink();
    assert!(sink.kept().len() <= limit);
    assert!(sink.total() <= limit as u64 + 1, "decoded {} past a limit of {limit}", sink.total());
    (r.into_sink().into_kept(), done)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let coding = [Compression::Gzip, Compression::Deflate, Compression::Br][usize::from(data[0] % 3)];
    let step = usize::from(data[1]).max(1);
    let limit = usize::from(u16::from_le_bytes([data[2], data[3]])).max(1);
    let rest = &data[4..];
    if data[0] >= 128 && coding != Compression::Br {
        let wire = if coding == Compression::Gzip {
            let mut e = GzEncoder::new(Vec::new(), Level::fast());
            e.write_all(rest).unwrap();
            e.finish().unwrap()
        } else {
            let mut e = DeflateEncoder::new(Vec::new(), Level::fast());
            e.write_all(rest).unwrap();
            e.finish().unwrap()
        };
        let (kept, done) = read(coding, &wire, step, limit);
        assert_eq!(done, Ok(rest.len() > limit), "{coding:?} round trip");
        assert_eq!(kept, &rest[..rest.len().min(limit)]);
        return;
    }
    let whole = read(coding, rest, rest.len().max(1), limit);
    let split = read(coding, rest, step, limit);
    if whole.1.is_ok() != split.1.is_ok() {
        // A fault just past the limit: seen when the decoder met it in the step that was to
        // reach the limit (its input had come), unseen (as any fault past the limit) when the
        // limit was reached before its bytes came.
        let (ok, failed) = if whole.1.is_ok() { (&whole, &split) } else { (&split, &whole) };
        assert_eq!(ok.0.len(), limit, "a fault seen in one split only, before the limit");
        assert!(failed.0.len() < limit);
        return;
    }
    assert_eq!(whole.1, split.1, "result differs with reads of {step}");
    if whole.1.is_ok() {
        assert_eq!(whole.0, split.0, "kept bytes differ with reads of {step}");
    } else {
        // Before a fault, a decoder may not have written out all it decoded (brotli copies its
        // window out in steps): the bytes kept are then a prefix of the same stream.
        let n = whole.0.len().min(split.0.len());
        assert_eq!(whole.0[..n], split.0[..n], "kept bytes differ with reads of {step}");
    }
    if let Err(e) = &whole.1 {
        let _ = e.to_string();
    }
});
