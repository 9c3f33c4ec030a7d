//! The HTTP/2 client's frame handling driven as the probe drives it, by a hostile server:
//! bytes arrive in reads (`h2::Client::push`) and are handled under a per-turn budget
//! (`h2::Client::process`), as `GrpcProbe` does between two engine turns.
//!
//! Input: byte 0 is the read size (1 to 256), byte 1 the frame budget per turn (1 to 256),
//! byte 2 the byte budget per turn (256 to 65536, in steps of 256); the rest is what the server
//! sends after the client's preface.
//!
//! Checked:
//! - a call that stops at its budget has spent it (frames or bytes), and never handled more
//!   frames than it allowed;
//! - every call that stops at its budget made progress: the calls are bounded by the frames
//!   in the input (a stuck client would yield forever);
//! - the result (response or error) and everything the client sent do not depend on the read
//!   size or the budget: they equal one unbudgeted `receive` of the whole input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_grpc::health;
use prober_h2::client::{Budget, Client, H2Error, Progress, Request, Response, Turn};

fn request() -> Request {
    Request {
        method: "POST".into(),
        scheme: "http".into(),
        authority: "127.0.0.1:50051".into(),
        path: "/grpc.health.v1.Health/Check".into(),
        headers: vec![("content-type".into(), "application/grpc".into())],
        body: health::encode_request(""),
    }
}

/// How the exchange ended: stream 1's end (its response or its error), a connection error, or
/// still open at the end of the input.
type End = Result<Option<Result<Response, H2Error>>, H2Error>;

fn take(c: &mut Client, sent: &mut Vec<u8>) {
    let n = c.pending_output().len();
    sent.extend_from_slice(c.pending_output());
    c.consume_output(n);
}

/// The reference: all of the input in one unbounded call.
fn whole(input: &[u8]) -> (End, Vec<u8>) {
    let mut c = Client::new();
    c.open(request()).expect("a new connection opens stream 1");
    let mut sent = Vec::new();
    let r = c.receive(input);
    take(&mut c, &mut sent);
    match r {
        Ok(Progress::Ended(id)) => {
            assert_eq!(id, 1, "the only stream");
            (Ok(Some(c.finish(1).expect("stream 1 ended"))), sent)
        }
        Ok(Progress::Pending) => (Ok(None), sent),
        Err(e) => (Err(e), sent),
    }
}

/// As the probe: a read, then turns until the client wants more bytes.
fn turns(input: &[u8], read: usize, per_turn: Budget) -> (End, Vec<u8>) {
    let mut c = Client::new();
    c.open(request()).expect("a new connection opens stream 1");
    let mut sent = Vec::new();
    // The preface and SETTINGS, sent before the server says anything.
    take(&mut c, &mut sent);
    let mut calls = 0usize;
    // One call per read that ends wanting more; each call that stops at its budget handled at
    // least one frame (a fresh budget is never spent), of 9 bytes or more.
    let max_calls = input.len() / 9 + input.len() / read + 2;
    for chunk in input.chunks(read) {
        c.push(chunk);
        loop {
            let mut budget = per_turn;
            let r = c.process(&mut budget);
            calls += 1;
            assert!(calls <= max_calls, "{calls} calls for {} bytes", input.len());
            assert!(budget.frames <= per_turn.frames && budget.bytes <= per_turn.bytes);
            take(&mut c, &mut sent);
            match r {
                Ok(Turn::Pending) => break,
                Ok(Turn::Budget) => {
                    assert!(budget.frames == 0 || budget.bytes == 0, "stopped early: {budget:?}");
                }
                Ok(Turn::Ended(_)) => {
                    return (Ok(Some(c.finish(1).expect("stream 1 ended"))), sent);
                }
                Err(e) => return (Err(e), sent),
            }
        }
    }
    (Ok(None), sent)
}

fuzz_target!(|data: &[u8]| {
    let [read, frames, bytes, input @ ..] = data else {
        return;
    };
    let read = usize::from(*read) + 1;
    let per_turn =
        Budget { frames: usize::from(*frames) + 1, bytes: (usize::from(*bytes) + 1) * 256 };
    let reference = whole(input);
    let driven = turns(input, read, per_turn);
    // The preface check's error text shows the first bytes that had arrived: with reads of
    // one byte it shows fewer. Compare that error by kind only.
    match (&reference.0, &driven.0) {
        (Err(H2Error::NotHttp2(_)), Err(H2Error::NotHttp2(_))) => {}
        (a, b) => assert_eq!(a, b, "result depends on reads of {read} and {per_turn:?}"),
    }
    assert_eq!(reference.1, driven.1, "output depends on reads of {read} and {per_turn:?}");
});
