use super::*;
use crate::frame::FLAG_PADDED;

const DONE: Result<Progress, H2Error> = Ok(Progress::Ended(1));

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
        let len = usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
        let stream = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
        v.push((bytes[3], bytes[4], stream, bytes[9..9 + len].to_vec()));
        bytes = &bytes[9 + len..];
    }
    assert!(bytes.is_empty());
    v
}

/// A client with `r` opened on stream 1.
fn client_with(r: Request) -> Client {
    let mut c = Client::new();
    assert_eq!(c.open(r), Ok(1));
    c
}

fn take_output(c: &mut Client) -> Vec<u8> {
    let out = c.pending_output().to_vec();
    c.consume_output(out.len());
    out
}

/// A client past the server's (empty) SETTINGS, with its output taken.
fn connected(body: Vec<u8>) -> (Client, Vec<Frame>) {
    let mut c = Client::new();
    assert_eq!(c.open(request(body)), Ok(1));
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
    let head =
        block(&[(":status", "200"), ("content-type", "application/grpc"), ("grpc-status", "12")]);
    let p = c.receive(&frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &head));
    assert_eq!(p, DONE);
    let r = c.finish(1).unwrap().unwrap();
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
        let mut c = client_with(request(b"body".to_vec()));
        let mut last = Ok(Progress::Pending);
        for chunk in wire.chunks(split) {
            assert_eq!(last, Ok(Progress::Pending));
            last = c.receive(chunk);
        }
        assert_eq!(last, DONE, "split {split}");
        let out = frames(&take_output(&mut c)[PREFACE.len()..]);
        assert!(out.contains(&(PING, FLAG_ACK, 0, b"12345678".to_vec())), "{out:?}");
        assert!(out.contains(&(DATA, FLAG_END_STREAM, 1, b"body".to_vec())), "{out:?}");
        let r = c.finish(1).unwrap().unwrap();
        assert_eq!(r.data, [0, 0, 0, 0, 2, 8, 1]);
        assert_eq!(r.trailers.as_ref().and_then(|t| header(t, "grpc-status")), Some("0"));
    }
}

#[test]
fn body_respects_windows_and_frame_size() {
    let body = vec![7u8; 70_000];
    // The server lowers the stream window to 10 bytes.
    let mut c = client_with(request(body.clone()));
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
    let mut c = client_with(r);
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
    let mut c = client_with(request(vec![1]));
    assert_eq!(c.receive(b"HTTP/1.1 400 Bad"), Ok(Progress::Pending));
    assert_eq!(
        c.receive(b" Request\r\n"),
        Err(H2Error::NotHttp2("it answered with HTTP/1: \"HTTP/1.1 400 Bad Request\"".into()))
    );
    let mut c = client_with(request(vec![1]));
    let e = c.receive(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x50, 0, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server does not speak HTTP/2: its first bytes are not a SETTINGS frame \
         (15 03 01 00 02 02 50 00 00)"
    );
    // A SETTINGS ACK first is not a server preface.
    let mut c = client_with(request(vec![1]));
    assert!(matches!(c.receive(&frame(SETTINGS, FLAG_ACK, 0, &[])), Err(H2Error::NotHttp2(_))));
    let c = client_with(request(vec![1]));
    assert_eq!(c.eof(), H2Error::Eof { preface: true });
    assert_eq!(c.eof().to_string(), "connection closed before server preface received");
}

#[test]
fn resets_and_goaway() {
    let (mut c, _) = connected(b"x".to_vec());
    assert_eq!(c.receive(&frame(RST_STREAM, 0, 1, &[0, 0, 0, 8])), DONE);
    assert_eq!(c.finish(1), Some(Err(H2Error::Reset(8))));
    assert!(c.is_idle(), "a reset stream leaves the connection usable");
    assert_eq!(
        H2Error::Reset(8).to_string(),
        "stream terminated by RST_STREAM with error code: CANCEL"
    );
    // GOAWAY that leaves our stream out.
    let (mut c, _) = connected(b"x".to_vec());
    assert_eq!(c.receive(&frame(GOAWAY, 0, 0, b"\0\0\0\0\0\0\0\x0bcalm")), DONE);
    let e = c.finish(1).unwrap().unwrap_err();
    assert!(e.unprocessed(1));
    assert!(!c.can_open());
    assert_eq!(c.open(request(vec![])), Err(e.clone()));
    assert_eq!(
        e.to_string(),
        "the server sent GOAWAY (error code ENHANCE_YOUR_CALM, last stream 0, debug data \"calm\")"
    );
    // A graceful GOAWAY covering our stream: the response still completes.
    let (mut c, _) = connected(b"x".to_vec());
    assert_eq!(c.receive(&frame(GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0])), Ok(Progress::Pending));
    let head = block(&[(":status", "200"), ("grpc-status", "0")]);
    assert_eq!(c.receive(&frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &head)), DONE);
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
    assert_eq!(c.receive(&wire), Err(H2Error::Protocol("expected a CONTINUATION frame".into())));
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
    assert_eq!(c.receive(&wire), DONE);
    let r = c.finish(1).unwrap().unwrap();
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
            Ok(Turn::Ended(1)) => break,
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
    assert_eq!(c.receive(&wire), DONE);
    assert_eq!(c.finish(1).unwrap().unwrap().status(), Some(200));
    // One more: refused.
    let (mut c, _) = connected(b"x".to_vec());
    let mut wire = interim.repeat(MAX_INTERIM as usize + 1);
    wire.extend_from_slice(&head);
    let e = c.receive(&wire).unwrap_err();
    assert_eq!(e.to_string(), "http2: too many 1xx informational responses");
}

/// Several requests over one connection: stream ids, HPACK state across responses, windows
/// given back, and each stream's end reported once.
#[test]
fn streams_one_after_another_on_one_connection() {
    let (mut c, _) = connected(b"x".to_vec());
    // The server's dynamic table gets an entry in the first response, used by the second.
    let mut head = vec![0x40, 4];
    head.extend_from_slice(b"x-id");
    head.extend_from_slice(&[1, b'7']);
    head.extend(block(&[(":status", "200")]));
    let mut wire = frame(HEADERS, FLAG_END_HEADERS, 1, &head);
    wire.extend(frame(DATA, 0, 1, &[9; 16_384]));
    wire.extend(frame(DATA, FLAG_END_STREAM, 1, &[9; 7_232]));
    // A PING that follows the end of stream 1 stays buffered until the next call.
    wire.extend(frame(PING, 0, 0, b"abcdefgh"));
    assert_eq!(c.receive(&wire), DONE);
    let r = c.finish(1).unwrap().unwrap();
    assert_eq!(
        (r.status(), header(&r.headers, "x-id"), r.data.len()),
        (Some(200), Some("7"), 23_616)
    );
    assert!(c.is_idle());
    assert_eq!(c.finish(1), None, "reported once");
    let id = c.open(request(vec![])).unwrap();
    assert_eq!(id, 3);
    let sent = frames(&take_output(&mut c));
    // No DATA for an empty body: the HEADERS end the stream.
    assert_eq!((sent[0].0, sent[0].1, sent[0].2), (HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 3));
    let mut head = block(&[(":status", "204")]);
    head.push(0xbe); // x-id from the first response
    let mut wire = frame(HEADERS, FLAG_END_HEADERS, 3, &head);
    // 30,000 more bytes on the connection: past half its window, so it is given back.
    wire.extend(frame(DATA, FLAG_END_STREAM, 3, &[1; 16_000]));
    assert_eq!(c.receive(&wire), Ok(Progress::Ended(3)));
    let sent = frames(&take_output(&mut c));
    assert!(sent.contains(&(PING, FLAG_ACK, 0, b"abcdefgh".to_vec())), "{sent:?}");
    assert!(sent.contains(&(WINDOW_UPDATE, 0, 0, 39_616u32.to_be_bytes().to_vec())), "{sent:?}");
    let r = c.finish(3).unwrap().unwrap();
    assert_eq!((r.status(), header(&r.headers, "x-id")), (Some(204), Some("7")));
}

/// Two streams at once; a GOAWAY ends the one the server did not process and lets the other
/// finish; a reset stream and a cancelled one leave the connection usable.
#[test]
fn concurrent_streams_goaway_reset_and_cancel() {
    let (mut c, _) = connected(b"x".to_vec());
    assert_eq!(c.open(request(b"y".to_vec())), Ok(3));
    assert_eq!(c.open_streams(), 2);
    take_output(&mut c);
    // GOAWAY(last 1): stream 3 is refused, stream 1 goes on.
    assert_eq!(c.receive(&frame(GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0])), Ok(Progress::Ended(3)));
    let e = c.finish(3).unwrap().unwrap_err();
    assert!(e.unprocessed(3), "{e:?}");
    assert!(!c.can_open());
    let done = frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, &block(&[(":status", "200")]));
    assert_eq!(c.receive(&done), DONE);
    assert_eq!(c.finish(1).unwrap().unwrap().status(), Some(200));

    let (mut c, _) = connected(b"x".to_vec());
    assert_eq!(c.open(request(b"y".to_vec())), Ok(3));
    take_output(&mut c);
    c.cancel(1);
    assert_eq!(frames(&take_output(&mut c)), [(RST_STREAM, 0, 1, vec![0, 0, 0, 8])]);
    // What still comes for stream 1 is ignored (its header block still decoded).
    let mut wire = frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "200")]));
    wire.extend(frame(DATA, FLAG_END_STREAM, 1, b"late"));
    wire.extend(frame(RST_STREAM, 0, 3, &[0, 0, 0, 2]));
    assert_eq!(c.receive(&wire), Ok(Progress::Ended(3)));
    assert_eq!(c.finish(3), Some(Err(H2Error::Reset(2))));
    assert!(c.is_idle());
    assert_eq!(c.open(request(vec![])), Ok(5));
}

/// The server's concurrent-stream limit, our PING and its ACK, and a connection error that
/// sticks.
#[test]
fn limits_pings_and_sticky_errors() {
    let mut c = Client::new();
    c.receive(&frame(SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 1])).unwrap();
    assert_eq!(c.open(request(vec![])), Ok(1));
    assert!(!c.can_open(), "one stream at a time");
    assert!(c.open(request(vec![])).is_err());
    take_output(&mut c);
    c.ping();
    assert!(c.ping_outstanding());
    let sent = frames(&take_output(&mut c));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].0, sent[0].1), (PING, 0));
    c.receive(&frame(PING, FLAG_ACK, 0, b"otherack")).unwrap();
    assert!(c.ping_outstanding(), "an ACK of another payload");
    c.receive(&frame(PING, FLAG_ACK, 0, &sent[0].3)).unwrap();
    assert!(!c.ping_outstanding());
    let e = c.receive(&frame(DATA, 0, 0, b"x")).unwrap_err();
    assert_eq!(e, H2Error::Protocol("DATA on stream 0".into()));
    assert_eq!(c.receive(&frame(PING, 0, 0, b"12345678")), Err(e.clone()));
    assert_eq!(c.open(request(vec![])), Err(e));
}

/// A stream's window is given back as its owner takes the body.
#[test]
fn stream_window_follows_what_is_taken() {
    let (mut c, _) = connected(b"x".to_vec());
    c.receive(&frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "200")]))).unwrap();
    c.receive(&frame(DATA, 0, 1, &[0; 16_384])).unwrap();
    c.receive(&frame(DATA, 0, 1, &[0; 16_384])).unwrap();
    let sent = frames(&take_output(&mut c));
    assert_eq!(sent, [(WINDOW_UPDATE, 0, 0, 32_768u32.to_be_bytes().to_vec())]);
    assert_eq!(c.take_data(1).len(), 32_768);
    let sent = frames(&take_output(&mut c));
    assert_eq!(sent, [(WINDOW_UPDATE, 0, 1, 32_768u32.to_be_bytes().to_vec())]);
    // Now the stream may receive 65,535 more bytes than it has been given back.
    for _ in 0..3 {
        c.receive(&frame(DATA, 0, 1, &[0; 16_384])).unwrap();
    }
    assert_eq!(c.response(1).unwrap().data.len(), 49_152);
}

/// Padding (the Pad Length octet and the padding) counts against both windows and is never
/// held, so it is given back at once (RFC 9113 section 6.1): a server that pads every DATA
/// frame goes on past the first 65,535 bytes of frames.
#[test]
fn padding_is_given_back_to_both_windows() {
    let (mut c, _) = connected(b"x".to_vec());
    c.receive(&frame(HEADERS, FLAG_END_HEADERS, 1, &block(&[(":status", "200")]))).unwrap();
    // One body byte and 255 bytes of padding per frame: 257 bytes of payload each.
    let padded = |byte: u8| [&[255u8, byte][..], &[0; 255]].concat();
    let (mut received, mut granted_conn, mut granted_stream) = (0i64, 0i64, 0i64);
    let mut body = Vec::new();
    for i in 0..3000u32 {
        let payload = padded(b'a' + (i % 26) as u8);
        let flags = if i == 2999 { FLAG_PADDED | FLAG_END_STREAM } else { FLAG_PADDED };
        let want = if i == 2999 { DONE } else { Ok(Progress::Pending) };
        assert_eq!(c.receive(&frame(DATA, flags, 1, &payload)), want, "frame {i}");
        received += payload.len() as i64;
        body.extend(c.take_data(1));
        for (kind, _, stream, inc) in frames(&take_output(&mut c)) {
            assert_eq!(kind, WINDOW_UPDATE);
            let inc = i64::from(u32::from_be_bytes(inc.try_into().unwrap()));
            *if stream == 0 { &mut granted_conn } else { &mut granted_stream } += inc;
        }
        // What the server may still send: never less than one more frame before the last.
        for granted in [granted_conn, granted_stream] {
            assert!(granted <= received, "frame {i}: more given back than received");
            assert!(
                i == 2999 || INITIAL_WINDOW + granted - received >= 257,
                "frame {i}: {received} bytes received, {granted} given back"
            );
        }
    }
    let sent: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    assert_eq!(body, sent);
}
