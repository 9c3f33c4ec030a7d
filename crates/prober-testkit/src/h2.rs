//! Hostile HTTP/2 peers for the gRPC suites: raw frames, and a server that floods a client
//! with them without ever reading.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// One HTTP/2 frame: the 9-byte header (length, type, flags, stream) and its payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A server that sends its SETTINGS, then `unit` again and again as fast as it can, never
/// reading, until the client goes away or `stop` is set.
pub fn flooding_server(unit: Vec<u8>) -> (u16, Arc<AtomicBool>, JoinHandle<u64>) {
    flooding_server_after(Vec::new(), unit)
}

/// As [`flooding_server`], with `prefix` sent once after the SETTINGS.
pub fn flooding_server_after(
    prefix: Vec<u8>,
    unit: Vec<u8>,
) -> (u16, Arc<AtomicBool>, JoinHandle<u64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut preface = [0u8; 24];
        let _ = c.read_exact(&mut preface);
        let mut first = frame(0x4, 0, 0, &[]);
        first.extend_from_slice(&prefix);
        if c.write_all(&first).is_err() {
            return 0;
        }
        let mut batch = Vec::new();
        while batch.len() < 64 * 1024 {
            batch.extend_from_slice(&unit);
        }
        let mut sent = first.len() as u64;
        while !s.load(Ordering::Relaxed) && c.write_all(&batch).is_ok() {
            sent += batch.len() as u64;
        }
        sent
    });
    (port, stop, h)
}
