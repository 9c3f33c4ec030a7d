//! The HTTP/2 client's connection state machine (`prober_h2::client::Client`) over its life,
//! as a kept connection lives it: requests opened, cancelled and finished between reads from a
//! hostile server, our PINGs, bodies taken as they come.
//!
//! Input: a sequence of operations, each one byte (its low 3 bits) and its arguments:
//! - 0 `open` (next byte: body length / 4): a request on the next stream;
//! - 1 `server` (next byte: length N, then N bytes): bytes from the server, pushed, then
//!   processed under a per-turn budget until the client wants more;
//! - 2 `cancel` (next byte: which open stream);
//! - 3 `ping`;
//! - 4 `take` (next byte: which stream): its body so far;
//! - 5 `finish` every stream the client reported ended;
//! - 6 `write` (next byte: how much of the pending output the transport takes).
//!
//! Checked:
//! - stream ids are odd and increase; `open` fails only when `can_open` says so;
//! - every stream the client reports ended is finished exactly once, and only ended streams
//!   finish; a reported stream is one we opened and did not cancel;
//! - a connection error sticks: every later `process` and `open` returns it;
//! - `is_idle` means no stream of ours is left; what the client queues stays proportional to
//!   what it was given (requests, pings, the server's bytes).
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use prober_h2::client::{Budget, Client, H2Error, Request, Turn};

fn request(body: usize) -> Request {
    Request {
        method: "POST".into(),
        scheme: "http".into(),
        authority: "127.0.0.1:50051".into(),
        path: "/grpc.health.v1.Health/Check".into(),
        headers: vec![("content-type".into(), "application/grpc".into())],
        body: vec![7; body],
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = Client::new();
    let mut ops = data.iter().copied();
    // Streams opened and not finished or cancelled; streams reported ended, not yet finished.
    let mut open: BTreeSet<u32> = BTreeSet::new();
    let mut ended: BTreeSet<u32> = BTreeSet::new();
    let mut last_id = 0u32;
    let mut failed: Option<H2Error> = None;
    // What the client was given: bound on what it may queue.
    let mut given = 1024usize;
    let mut written = 0usize;
    while let Some(op) = ops.next() {
        match op & 7 {
            0 => {
                let body = usize::from(ops.next().unwrap_or(0)) * 4;
                let could = c.can_open();
                match c.open(request(body)) {
                    Ok(id) => {
                        assert!(could, "opened {id} although can_open said no");
                        assert!(id % 2 == 1 && id > last_id, "stream {id} after {last_id}");
                        last_id = id;
                        open.insert(id);
                        given += 1024 + body + body / 16_384 * 9;
                    }
                    Err(e) => {
                        assert!(!could, "open failed although can_open said yes: {e}");
                        if let Some(f) = &failed {
                            assert_eq!(&e, f, "a connection error sticks");
                        }
                    }
                }
            }
            1 => {
                let n = usize::from(ops.next().unwrap_or(0));
                let bytes: Vec<u8> = ops.by_ref().take(n).collect();
                given += 2 * bytes.len() + 64;
                c.push(&bytes);
                for _ in 0..10_000 {
                    let mut budget = Budget { frames: 16, bytes: 4096 };
                    match c.process(&mut budget) {
                        Ok(Turn::Pending) => break,
                        Ok(Turn::Budget) => {}
                        Ok(Turn::Ended(id)) => {
                            assert!(open.contains(&id), "stream {id} reported but not ours");
                            assert!(ended.insert(id), "stream {id} reported twice");
                        }
                        Err(e) => {
                            if let Some(f) = &failed {
                                assert_eq!(&e, f, "a connection error sticks");
                            }
                            failed = Some(e);
                            break;
                        }
                    }
                }
            }
            2 => {
                let k = usize::from(ops.next().unwrap_or(0));
                if let Some(&id) = open.iter().nth(k % open.len().max(1)) {
                    c.cancel(id);
                    open.remove(&id);
                    ended.remove(&id);
                    assert!(c.finish(id).is_none(), "a cancelled stream is forgotten");
                    given += 13;
                }
            }
            3 => {
                c.ping();
                assert!(c.ping_outstanding());
                given += 17;
            }
            4 => {
                let k = usize::from(ops.next().unwrap_or(0));
                if let Some(&id) = open.iter().nth(k % open.len().max(1)) {
                    let _ = c.take_data(id);
                    given += 13;
                }
            }
            5 => {
                for id in std::mem::take(&mut ended) {
                    assert!(c.finish(id).is_some(), "reported stream {id} does not finish");
                    assert!(c.finish(id).is_none(), "stream {id} finished twice");
                    open.remove(&id);
                }
                for &id in &open {
                    // Not reported: not finishable yet (it may have ended after the last
                    // report only if the client holds its report back, which `process`
                    // gives first).
                    if c.response(id).is_none() {
                        panic!("open stream {id} unknown to the client");
                    }
                }
            }
            _ => {
                let n = usize::from(ops.next().unwrap_or(0)) * 64;
                let n = n.min(c.pending_output().len());
                c.consume_output(n);
                written += n;
            }
        }
        if failed.is_some() {
            let mut budget = Budget::PER_TURN;
            assert_eq!(c.process(&mut budget).err(), failed, "a connection error sticks");
        }
        if c.is_idle() {
            assert!(open.is_empty() && ended.is_empty(), "idle with streams {open:?} {ended:?}");
        }
        assert!(
            written + c.pending_output().len() <= given,
            "{} bytes queued for {given} given",
            written + c.pending_output().len()
        );
    }
});
