//! Body framing (`prober_http::body`): Content-Length, chunked and close-delimited decoding
//! and the bounded `BodyReader`.
//!
//! Input: byte 0 picks the framing, byte 1 the read size (how the network splits the body),
//! bytes 2..4 the output limit, then (Content-Length only) 8 bytes of declared length; the
//! rest is the wire.
//!
//! Checked beyond "no panic":
//! - decoding is independent of how the input is split into reads;
//! - the decoder never claims more input than it was given, and stops at the end of the body;
//! - the reader keeps at most `limit` bytes, counts every body byte it saw, and the kept bytes
//!   are the start of the decoded body;
//! - a well-formed chunked body (built by a simple reference encoder from the input) is always
//!   accepted and decodes to exactly its data, whatever the split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_http::body::{BodyDecoder, BodyError, BodyProgress, BodyReader, BodySink, Framing};

/// Decodes `wire` in reads of `step` bytes into an unbounded sink. Returns the decoded body,
/// whether the body ended, the input used, and the first error.
fn decode(framing: Framing, wire: &[u8], step: usize) -> (Vec<u8>, bool, usize, Option<BodyError>) {
    let mut d = BodyDecoder::new(framing);
    let mut sink = BodySink::new(usize::MAX / 2);
    let mut used = 0;
    for chunk in wire.chunks(step.max(1)) {
        let mut off = 0;
        while off < chunk.len() && !d.is_done() {
            match d.decode(&chunk[off..], &mut sink) {
                Ok(0) => panic!("decode made no progress with input left"),
                Ok(n) => {
                    assert!(n <= chunk.len() - off, "used {n} of {}", chunk.len() - off);
                    off += n;
                }
                Err(e) => return (sink.into_kept(), false, used + off, Some(e)),
            }
        }
        used += off;
        if d.is_done() {
            break;
        }
    }
    assert_eq!(sink.total(), sink.kept().len() as u64);
    let done = d.is_done();
    (sink.into_kept(), done, used, None)
}

/// A chunked encoding of `data` in chunks of the sizes drawn from `sizes`, with optional
/// extensions and trailers, following RFC 9112 strictly.
fn encode_chunked(data: &[u8], sizes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let s = usize::from(sizes.get(i).copied().unwrap_or(7))
            .max(1)
            .min(rest.len());
        if i % 3 == 1 {
            out.extend_from_slice(format!("{s:X};name=\"v\"\r\n").as_bytes());
        } else {
            out.extend_from_slice(format!("{s:x}\r\n").as_bytes());
        }
        out.extend_from_slice(&rest[..s]);
        out.extend_from_slice(b"\r\n");
        rest = &rest[s..];
        i += 1;
    }
    out.extend_from_slice(b"0\r\n");
    if sizes.first().is_some_and(|b| b & 1 == 1) {
        out.extend_from_slice(b"X-Trailer: yes\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let mode = data[0] % 4;
    let step = usize::from(data[1]).max(1);
    let limit = usize::from(u16::from_le_bytes([data[2], data[3]])).max(1);
    let mut rest = &data[4..];
    let framing = match mode {
        0 => {
            if rest.len() < 8 {
                return;
            }
            let mut n = [0u8; 8];
            n.copy_from_slice(&rest[..8]);
            rest = &rest[8..];
            // As the head parser allows: at most i64::MAX.
            Framing::Length(u64::from_le_bytes(n) & (i64::MAX as u64))
        }
        1 | 2 => Framing::Chunked,
        _ => Framing::Close,
    };

    // 1. Split independence.
    let whole = decode(framing, rest, rest.len().max(1));
    let split = decode(framing, rest, step);
    assert_eq!(whole.0, split.0, "body differs with reads of {step}");
    assert_eq!(whole.1, split.1, "end differs with reads of {step}");
    assert_eq!(whole.3, split.3, "error differs with reads of {step}");
    if whole.3.is_none() {
        assert_eq!(whole.2, split.2, "input used differs with reads of {step}");
    }
    assert!(whole.2 <= rest.len());
    if let Framing::Length(n) = framing {
        let expect = usize::try_from(n).unwrap_or(usize::MAX).min(rest.len());
        assert_eq!(whole.0, &rest[..expect]);
    }
    if let Some(e) = &whole.3 {
        let _ = e.to_string();
    }

    // 2. The bounded reader, fed in reads of `step`, then EOF.
    let mut r = BodyReader::new(framing, limit);
    let mut outcome = None;
    for chunk in rest.chunks(step) {
        match r.feed(chunk) {
            Ok(BodyProgress::Complete { truncated }) => {
                outcome = Some(Ok(truncated));
                break;
            }
            Ok(_) => {}
            Err(e) => {
                outcome = Some(Err(e));
                break;
            }
        }
    }
    let outcome = match outcome {
        Some(o) => o,
        None => match r.eof() {
            Ok(BodyProgress::Complete { truncated }) => Ok(truncated),
            Ok(p) => panic!("eof left the reader at {p:?}"),
            Err(e) => Err(e),
        },
    };
    let sink = r.sink();
    assert!(sink.kept().len() <= limit);
    assert!(sink.total() >= sink.kept().len() as u64);
    let prefix = sink.kept().len().min(whole.0.len());
    assert_eq!(
        &sink.kept()[..prefix],
        &whole.0[..prefix],
        "kept bytes are not the body's start"
    );
    if let Ok(true) = outcome {
        // Truncated: the limit was reached.
        assert_eq!(sink.kept().len(), limit);
    }
    if outcome.is_err() {
        // Errors are only reported before the limit is reached (the kubelet stops reading there).
        assert!(!sink.is_full());
    }

    // 3. A well-formed chunked body is accepted and decodes to its data.
    if mode == 2 {
        let (sizes, payload) = rest.split_at(rest.len().min(8));
        let wire = encode_chunked(payload, sizes);
        let mut with_next = wire.clone();
        with_next.extend_from_slice(b"NEXT");
        let got = decode(Framing::Chunked, &with_next, step);
        assert_eq!(
            got.3,
            None,
            "valid chunked body refused: {:?}",
            String::from_utf8_lossy(&wire)
        );
        assert!(got.1, "valid chunked body did not end");
        assert_eq!(got.0, payload);
        assert_eq!(
            got.2,
            wire.len(),
            "the body must end exactly at its last CRLF"
        );
    }
});
