//! What a gRPC health server sends back, from a hostile server: prober-grpc's sans-I/O HTTP/2
//! client (`h2::Client::receive`), its HPACK decoder (`hpack::Decoder`, Huffman) and the
//! health response decoding (`health::interpret`, `split_messages`, `decode_response`).
//!
//! Byte 0 picks the mode:
//! - 0: the server's byte stream, fed to a client in reads of byte 1's size, the client's
//!   output taken as a socket would. The result and everything the client sent must not depend
//!   on how the stream was split into reads; the client's output stays proportional to its
//!   input (answers to SETTINGS and PING, plus the request).
//! - 1: header blocks (each prefixed by a length byte) through one decoder, its dynamic table
//!   within 4096 octets; every decoded field survives a round trip through `encode_literal`,
//!   and its bytes a round trip through the Huffman code.
//! - 2: a DATA stream split into gRPC messages, each decoded as a HealthCheckResponse, and
//!   `grpc-message` percent-decoding.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use prober_grpc::health;
use prober_h2::client::{Client, Progress, Request, Response};
use prober_h2::hpack;

fn request() -> Request {
    Request {
        method: "POST".into(),
        scheme: "http".into(),
        authority: "127.0.0.1:50051".into(),
        path: "/grpc.health.v1.Health/Check".into(),
        headers: vec![
            ("content-type".into(), "application/grpc".into()),
            ("te".into(), "trailers".into()),
        ],
        body: health::encode_request("svc"),
    }
}

/// Feeds `input` in reads of `step`; returns the end state and all the client's output.
fn exchange(input: &[u8], step: usize) -> (Result<Option<Response>, String>, Vec<u8>) {
    let mut c = Client::new();
    c.open(request()).expect("a new connection opens stream 1");
    let mut sent = Vec::new();
    let take = |c: &mut Client, sent: &mut Vec<u8>| {
        let n = c.pending_output().len();
        sent.extend_from_slice(c.pending_output());
        c.consume_output(n);
    };
    take(&mut c, &mut sent);
    for chunk in input.chunks(step.max(1)) {
        match c.receive(chunk) {
            Ok(Progress::Pending) => take(&mut c, &mut sent),
            Ok(Progress::Ended(_)) => {
                take(&mut c, &mut sent);
                let end = c.finish(1).expect("stream 1 ended").map_err(|e| e.to_string());
                return (end.map(Some), sent);
            }
            Err(e) => {
                // What was queued before the error (the probe closes the connection then, so
                // it is never sent; taking it keeps the comparison split-independent).
                take(&mut c, &mut sent);
                // The dump of the first bytes shows what had arrived when the preface was
                // judged: up to 16 bytes, fewer when the first read was shorter.
                let text = e.to_string();
                let text = match text.split_once(" (") {
                    Some((head, _)) if text.contains("not a SETTINGS frame") => head.to_string(),
                    _ => text,
                };
                return (Err(text), sent);
            }
        }
    }
    let _ = c.eof().to_string();
    (Ok(None), sent)
}

fn h2_mode(data: &[u8]) {
    let Some((&step, input)) = data.split_first() else {
        return;
    };
    let whole = exchange(input, input.len().max(1));
    let split = exchange(input, usize::from(step));
    assert_eq!(whole.0, split.0, "result depends on the read size {step}");
    assert_eq!(whole.1, split.1, "output depends on the read size {step}");
    // Preface, SETTINGS, request HEADERS and DATA are a few hundred bytes; beyond that the
    // client only answers (a SETTINGS ACK of 9 bytes per SETTINGS frame of at least 9, a PING
    // ACK of 17 per PING of 17).
    assert!(
        whole.1.len() <= 1024 + input.len(),
        "{} bytes out for {} in",
        whole.1.len(),
        input.len()
    );
    if let Ok(Some(r)) = &whole.0 {
        let _ = r.status();
        let o = health::outcome(health::interpret(r), Duration::from_secs(1));
        let _ = (o.result, o.message);
    }
}

fn hpack_mode(data: &[u8]) {
    let mut d = hpack::Decoder::new(hpack::DEFAULT_TABLE_SIZE);
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        let n = usize::from(len).min(tail.len());
        let (block, next) = tail.split_at(n);
        rest = next;
        let Ok(fields) = d.decode(block, 8192) else {
            break;
        };
        assert!(d.table_size() <= hpack::DEFAULT_TABLE_SIZE);
        let list: usize = fields.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
        assert!(list <= 8192);
        for (name, value) in &fields {
            let mut enc = Vec::new();
            hpack::encode_literal(&mut enc, name, value);
            let again = hpack::Decoder::new(0).decode(&enc, usize::MAX).expect("own encoding");
            assert_eq!(again, vec![(name.clone(), value.clone())]);
            assert_eq!(hpack::huffman_decode(&huffman(value)).as_ref(), Ok(value));
        }
    }
}

/// Huffman-encodes `bytes` with `huffman_code`, padded with ones.
fn huffman(bytes: &[u8]) -> Vec<u8> {
    let (mut acc, mut bits, mut out) = (0u64, 0u32, Vec::new());
    for &b in bytes {
        let (code, len) = hpack::huffman_code(u16::from(b));
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            out.push((acc >> (bits - 8)) as u8);
            bits -= 8;
            acc &= (1u64 << bits) - 1;
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | ((1u64 << (8 - bits)) - 1)) as u8);
    }
    out
}

fn messages_mode(data: &[u8]) {
    if let Ok(msgs) = health::split_messages(data) {
        let total: usize = msgs.iter().map(|m| m.len() + 5).sum();
        assert_eq!(total, data.len());
        for m in msgs {
            let _ = health::decode_response(m);
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let decoded = health::percent_decode(s);
        let go = go_decode_grpc_message(s.as_bytes());
        assert_eq!(decoded, String::from_utf8_lossy(&go), "percent_decode({s:?})");
    }
}

/// grpc-go's `decodeGrpcMessageUnchecked` (internal/transport/http_util.go), on bytes:
/// `%` and two characters that `strconv.ParseUint(_, 16, 8)` accepts (hex digits only, no
/// sign) become one byte; anything else is copied.
fn go_decode_grpc_message(msg: &[u8]) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::new();
    let mut i = 0;
    while i < msg.len() {
        if msg[i] == b'%' && i + 2 < msg.len() {
            if let (Some(h), Some(l)) = (hex(msg[i + 1]), hex(msg[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(msg[i]);
        i += 1;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => h2_mode(rest),
        1 => hpack_mode(rest),
        _ => messages_mode(rest),
    }
});
