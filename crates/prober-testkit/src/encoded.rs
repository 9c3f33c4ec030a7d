//! `/encoded/{coding}/{n}`: a body of `n` bytes of `a` sent with a content coding, for the
//! probes that decode it (blackbox_exporter's `compression`).
//!
//! gzip bodies are members of at most 1 MiB of decoded bytes each, one after another (as Go's
//! reader and the library read them): a member of 1 MiB of `a` is about 1 KiB, so a 1 GiB
//! decoded body (a decompression bomb) costs the server one member's compression and about
//! 1 MiB on the wire. `deflate` and `br` bodies are compressed whole, at most 16 MiB decoded.

use std::io::{self, Write};

use flate2::Compression as Level;
use flate2::write::{DeflateEncoder, GzEncoder};

/// Decoded bytes per gzip member.
const MEMBER: u64 = 1 << 20;
/// The largest `deflate` or `br` body, decoded.
const WHOLE_MAX: u64 = 16 << 20;

/// A body as sent: `unit` `repeat` times, then `last`.
type Encoded = (Vec<u8>, u64, Vec<u8>);

fn gzip(n: u64) -> io::Result<Vec<u8>> {
    let mut e = GzEncoder::new(Vec::new(), Level::best());
    e.write_all(&vec![b'a'; n as usize])?;
    e.finish()
}

/// `n` bytes of `a` in `coding`; `None` for an unknown coding or a size over the bound.
fn encode(coding: &str, n: u64) -> io::Result<Option<Encoded>> {
    Ok(Some(match coding {
        // Whole members, then the rest (none when the members cover the body).
        "gzip" => {
            let rest = if n % MEMBER == 0 && n > 0 { Vec::new() } else { gzip(n % MEMBER)? };
            let unit = if n >= MEMBER { gzip(MEMBER)? } else { Vec::new() };
            (unit, n / MEMBER, rest)
        }
        "deflate" if n <= WHOLE_MAX => {
            let mut e = DeflateEncoder::new(Vec::new(), Level::best());
            e.write_all(&vec![b'a'; n as usize])?;
            (e.finish()?, 1, Vec::new())
        }
        "br" if n <= WHOLE_MAX => {
            let mut out = Vec::new();
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
            w.write_all(&vec![b'a'; n as usize])?;
            drop(w);
            (out, 1, Vec::new())
        }
        _ => return Ok(None),
    }))
}

/// Writes the head and body of `/encoded/{coding}/{n}` to `out`; `encoding`: the
/// `Content-Encoding` value (the coding's name unless `?as=` says otherwise; `?as=` empty sends
/// none). `false`, nothing written, for an unknown coding or a size over the bound.
pub(crate) fn respond(
    mut out: impl Write,
    coding: &str,
    n: u64,
    encoding: Option<&str>,
) -> io::Result<bool> {
    let encoding = encoding.unwrap_or(coding);
    // The encoders want more stack than a connection thread has (128 KiB).
    let made = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn_scoped(scope, || encode(coding, n))
            .map(|t| t.join().unwrap_or_else(|_| Err(io::Error::other("encoder panicked"))))
    })??;
    let Some((unit, repeat, last)) = made else { return Ok(false) };
    let len = unit.len() as u64 * repeat + last.len() as u64;
    let mut head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n");
    if !encoding.is_empty() {
        head.push_str(&format!("Content-Encoding: {encoding}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    let mut w = io::BufWriter::with_capacity(64 * 1024, out);
    for _ in 0..repeat {
        w.write_all(&unit)?;
    }
    w.write_all(&last)?;
    w.flush()?;
    Ok(true)
}
