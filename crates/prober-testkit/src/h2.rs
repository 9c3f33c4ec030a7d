//! HTTP/2 peers made of raw frames, for what Go's server never does: a server that floods a
//! client without ever reading (the gRPC suites), and one that pads every DATA frame (the
//! HTTP suites).

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

/// One frame read from `r`: (type, flags, stream, payload); `None` once the peer has gone.
fn read_frame(r: &mut impl Read) -> Option<(u8, u8, u32, Vec<u8>)> {
    let mut head = [0u8; 9];
    r.read_exact(&mut head).ok()?;
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).ok()?;
    Some((head[3], head[4], stream, payload))
}

/// The flow-control windows a server may still send into (RFC 9113 section 6.9), from the
/// client's SETTINGS and WINDOW_UPDATE frames.
struct SendWindows {
    conn: i64,
    stream: i64,
}

impl SendWindows {
    /// Applies one frame of the client's; SETTINGS are acknowledged on `w`.
    fn apply(
        &mut self,
        w: &mut impl Write,
        (kind, flags, stream, payload): (u8, u8, u32, Vec<u8>),
    ) {
        match kind {
            0x4 if flags & 0x1 == 0 => {
                for s in payload.chunks_exact(6) {
                    if u16::from_be_bytes([s[0], s[1]]) == 0x4 {
                        let v = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
                        self.stream += i64::from(v) - 65_535;
                    }
                }
                let _ = w.write_all(&frame(0x4, 0x1, 0, &[]));
            }
            0x8 if payload.len() == 4 => {
                let inc = i64::from(u32::from_be_bytes(payload[..4].try_into().unwrap()));
                if stream == 0 { self.conn += inc } else { self.stream += inc }
            }
            _ => {}
        }
    }
}

/// A compliant h2c server (prior knowledge) that answers its first request with `:status 200`
/// and `body` sent one byte per DATA frame, each padded with `pad` bytes (PADDED: the Pad
/// Length octet and the padding count against the windows, RFC 9113 section 6.1). It sends
/// only as the client's windows allow, waiting for its WINDOW_UPDATEs: a client that does not
/// give the padding back stalls it. Returns how many body bytes went out.
pub fn padding_server(body: Vec<u8>, pad: u8) -> (u16, JoinHandle<usize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let Ok((mut c, _)) = l.accept() else { return 0 };
        let mut r = c.try_clone().unwrap();
        let mut preface = [0u8; 24];
        if r.read_exact(&mut preface).is_err() || c.write_all(&frame(0x4, 0, 0, &[])).is_err() {
            return 0;
        }
        let mut windows = SendWindows { conn: 65_535, stream: 65_535 };
        let stream = loop {
            match read_frame(&mut r) {
                None => return 0,
                Some((0x1, _, id, _)) => break id, // the request (short: no CONTINUATION)
                Some(f) => windows.apply(&mut c, f),
            }
        };
        if c.write_all(&frame(0x1, 0x4, stream, &[0x88])).is_err() {
            return 0; // :status 200 (static index 8)
        }
        let cost = 2 + i64::from(pad);
        for (i, &byte) in body.iter().enumerate() {
            while windows.conn < cost || windows.stream < cost {
                match read_frame(&mut r) {
                    None => return i,
                    Some(f) => windows.apply(&mut c, f),
                }
            }
            let mut payload = vec![pad, byte];
            payload.resize(cost as usize, 0);
            let end = if i + 1 == body.len() { 0x1 } else { 0 };
            if c.write_all(&frame(0x0, 0x8 | end, stream, &payload)).is_err() {
                return i;
            }
            windows.conn -= cost;
            windows.stream -= cost;
        }
        // Until the client closes (what it still sends is of no interest).
        while read_frame(&mut r).is_some() {}
        body.len()
    });
    (port, h)
}
