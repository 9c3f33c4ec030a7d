//! The scripted routes (listed in the crate docs).

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use crate::conn::{Conn, End, reason, simple};
use crate::request::{Head, percent_decode};

/// Bodies are streamed from this buffer: no allocation whatever their size.
static AAAA: [u8; 64 * 1024] = [b'a'; 64 * 1024];

/// How long `/stall-body` and `/never-answer` keep a connection.
const HOLD: Duration = Duration::from_secs(60);
/// How long `/reset-after` waits for the client to acknowledge the data before resetting.
const ACK_WAIT: Duration = Duration::from_secs(2);
/// Target length of one `/huge-headers` line.
const FILL_LINE: u64 = 1000;

fn text(conn: &Conn, status: u16, body: &str) -> io::Result<End> {
    simple(conn, status, &[], body.as_bytes())
}

/// Writes `n` bytes of `a`.
fn stream_a(w: &mut impl Write, mut n: u64) -> io::Result<()> {
    while n > 0 {
        let k = n.min(AAAA.len() as u64) as usize;
        w.write_all(&AAAA[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// Writes a status line and header lines (without the empty line).
fn head(conn: &Conn, status: u16, headers: &[&str]) -> io::Result<()> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for h in headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    conn.write_all(out.as_bytes())
}

fn status_code(s: &str) -> Option<u16> {
    s.parse::<u16>().ok().filter(|c| (100..=999).contains(c))
}

fn num(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Host header value without its port; brackets of an IPv6 literal are kept.
fn host_without_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    match host.rsplit_once(':') {
        Some((h, _)) if !h.contains(':') => h,
        _ => host,
    }
}

fn same_host(a: &str, b: &str) -> bool {
    let strip = |s: &str| s.trim_start_matches('[').trim_end_matches(']').to_owned();
    strip(a).eq_ignore_ascii_case(&strip(b))
}

fn bad(conn: &Conn, what: &str) -> io::Result<End> {
    text(conn, 400, what)
}

/// Routes one request; returns how the connection must end. The routes are split by kind
/// over three functions: plain answers here, bodies streamed over time in [`respond_streamed`],
/// malformed or raw wire bytes in [`respond_raw`].
pub(crate) fn respond(conn: &mut Conn, req: &Head<'_>) -> io::Result<End> {
    let segs: Vec<&str> = req.path.strip_prefix('/').unwrap_or(req.path).split('/').collect();
    let q = &req.query;
    match segs.as_slice() {
        [""] | ["ok"] => text(conn, 200, "ok"),
        ["status", code] => match status_code(code) {
            Some(c) => {
                let body = q.get("body").map_or_else(|| format!("status {c}"), str::to_owned);
                text(conn, c, &body)
            }
            None => bad(conn, "bad status code"),
        },
        ["health"] => {
            if conn.shared.healthy() {
                text(conn, 200, "ok")
            } else {
                text(conn, 503, "unhealthy")
            }
        }
        ["control", which @ ("healthy" | "unhealthy")] => {
            conn.shared.set_healthy(*which == "healthy");
            text(conn, 200, "ok")
        }
        ["redirect"] => {
            let Some(loc) = q.get("loc") else {
                return bad(conn, "missing loc");
            };
            let code = match q.get("code") {
                None => 302,
                Some(c) => match status_code(c) {
                    Some(c) => c,
                    None => return bad(conn, "bad status code"),
                },
            };
            simple(conn, code, &[("Location", loc)], b"redirecting")
        }
        ["loop"] => simple(conn, 302, &[("Location", "/loop")], b"redirecting"),
        ["redirect-chain", n] => match num(n) {
            Some(0) => text(conn, 200, "chain end"),
            Some(n) => {
                let loc = format!("/redirect-chain/{}", n - 1);
                simple(conn, 302, &[("Location", &loc)], b"redirecting")
            }
            None => bad(conn, "bad number"),
        },
        ["no-location", code] => match status_code(code) {
            Some(c) => text(conn, c, q.get("body").unwrap_or("")),
            None => bad(conn, "bad status code"),
        },
        ["bad-location"] => simple(conn, 302, &[("Location", "http://[::1")], b"redirecting"),
        ["echo", "headers"] => {
            let mut body = Vec::new();
            for (n, v) in &req.headers {
                body.extend_from_slice(n);
                body.extend_from_slice(b": ");
                body.extend_from_slice(v);
                body.push(b'\n');
            }
            simple(conn, 200, &[], &body)
        }
        ["echo", "header-names"] => {
            let mut names: Vec<&[u8]> = req
                .headers
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| !n.eq_ignore_ascii_case(b"host"))
                .collect();
            names.sort_unstable();
            simple(conn, 200, &[], &names.join(&b'\n'))
        }
        ["echo", "header-count"] => {
            let count =
                req.headers.iter().filter(|(n, _)| !n.eq_ignore_ascii_case(b"host")).count();
            text(conn, 200, &count.to_string())
        }
        ["echo", "host"] => simple(conn, 200, &[], req.header("host").unwrap_or(b"")),
        ["echo", "request-line"] => simple(conn, 200, &[], req.line),
        ["echo", "request"] => {
            let Some(body) = conn.read_body(req.header("content-length")) else {
                return bad(conn, "incomplete body");
            };
            let mut out = format!("{} {}\n", req.method, body.len()).into_bytes();
            out.extend_from_slice(&body);
            simple(conn, 200, &[], &out)
        }
        ["host-must-be", want, ..] => {
            let got = String::from_utf8_lossy(req.header("host").unwrap_or(b"")).into_owned();
            if same_host(host_without_port(&got), &percent_decode(want)) {
                text(conn, 200, "ok")
            } else {
                text(conn, 400, "wrong host")
            }
        }
        segs => respond_streamed(conn, req, segs),
    }
}

/// Bodies of a given size, framing, pace or end (`/body`, `/chunked`, `/drip`, ...).
fn respond_streamed(conn: &mut Conn, req: &Head<'_>, segs: &[&str]) -> io::Result<End> {
    let q = &req.query;
    match segs {
        ["body", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &[&format!("Content-Length: {n}"), "Connection: close"])?;
            if !conn.head_only {
                stream_a(&mut conn.stream(), n)?;
            }
            Ok(End::Finish)
        }
        ["chunked", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            let k = match q.get("chunk").map(num) {
                None => 1000,
                Some(Some(k)) if k > 0 => k,
                Some(_) => return bad(conn, "bad chunk size"),
            };
            head(conn, 200, &["Transfer-Encoding: chunked", "Connection: close"])?;
            let mut w = BufWriter::with_capacity(16 * 1024, conn.stream());
            let mut left = n;
            while left > 0 {
                let c = left.min(k);
                write!(w, "{c:x}\r\n")?;
                stream_a(&mut w, c)?;
                w.write_all(b"\r\n")?;
                left -= c;
            }
            w.write_all(b"0\r\n\r\n")?;
            w.flush()?;
            Ok(End::Finish)
        }
        ["close-delimited", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &["Connection: close"])?;
            stream_a(&mut conn.stream(), n)?;
            Ok(End::Finish)
        }
        ["truncated", declared, sent] => {
            let (Some(declared), Some(sent)) = (num(declared), num(sent)) else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &[&format!("Content-Length: {declared}"), "Connection: close"])?;
            stream_a(&mut conn.stream(), sent)?;
            Ok(End::Finish)
        }
        ["reset-after", sent] => {
            let Some((sent, declared)) = num(sent).and_then(|s| Some((s, s.checked_mul(2)?)))
            else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &[&format!("Content-Length: {declared}"), "Connection: close"])?;
            stream_a(&mut conn.stream(), sent)?;
            conn.wait_acked(ACK_WAIT);
            Ok(End::Reset)
        }
        ["slow-headers", ms] => {
            let Some(ms) = num(ms) else {
                return bad(conn, "bad number");
            };
            if !conn.shared.sleep(Duration::from_millis(ms)) {
                return Ok(End::Abort);
            }
            text(conn, 200, "ok")
        }
        ["drip", n, interval] => {
            let (Some(n), Some(interval)) = (num(n), num(interval)) else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &[&format!("Content-Length: {n}"), "Connection: close"])?;
            for _ in 0..n {
                if !conn.shared.sleep(Duration::from_millis(interval)) {
                    return Ok(End::Abort);
                }
                conn.write_all(b"a")?;
            }
            Ok(End::Finish)
        }
        ["stall-body", sent] => {
            let Some((sent, declared)) = num(sent).and_then(|s| Some((s, s.checked_add(1000)?)))
            else {
                return bad(conn, "bad number");
            };
            head(conn, 200, &[&format!("Content-Length: {declared}"), "Connection: close"])?;
            stream_a(&mut conn.stream(), sent)?;
            Ok(End::Hold(HOLD))
        }
        segs => respond_raw(conn, req, segs),
    }
}

/// Answers that are not well-formed HTTP, or are written byte for byte (`/garbage`,
/// `/bad-chunk`, `/bytes`, `/hostile/...`), and the 404 of every unknown path.
fn respond_raw(conn: &mut Conn, req: &Head<'_>, segs: &[&str]) -> io::Result<End> {
    match segs {
        ["close"] => Ok(End::Finish),
        ["reset"] => Ok(End::Reset),
        ["garbage"] => {
            conn.write_all(b"this is not http\r\n\r\n")?;
            Ok(End::Finish)
        }
        ["http09"] => {
            conn.write_all(b"hello")?;
            Ok(End::Finish)
        }
        ["huge-headers", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            let mut w = BufWriter::with_capacity(16 * 1024, conn.stream());
            w.write_all(b"HTTP/1.1 200 OK\r\n")?;
            let mut left = n;
            let mut i = 0u64;
            while left > 0 {
                let prefix = format!("X-Fill-{i:03}: ");
                let line = left.min(FILL_LINE).max(prefix.len() as u64 + 3);
                w.write_all(prefix.as_bytes())?;
                stream_a(&mut w, line - prefix.len() as u64 - 2)?;
                w.write_all(b"\r\n")?;
                left = left.saturating_sub(line);
                i += 1;
            }
            w.write_all(b"Content-Length: 2\r\nConnection: close\r\n\r\nok")?;
            w.flush()?;
            Ok(End::Finish)
        }
        ["bad-chunk"] => {
            head(conn, 200, &["Transfer-Encoding: chunked", "Connection: close"])?;
            conn.write_all(b"zz\r\n")?;
            Ok(End::Finish)
        }
        ["overflow-chunk"] => {
            head(conn, 200, &["Transfer-Encoding: chunked", "Connection: close"])?;
            conn.write_all(b"ffffffffffffffffffff\r\n")?;
            Ok(End::Finish)
        }
        ["never-answer"] => Ok(End::Hold(HOLD)),
        ["content-length-and-chunked"] => {
            conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\
                  Connection: close\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            )?;
            Ok(End::Finish)
        }
        ["bytes"] => bytes(conn, req),
        ["encoded", coding, n] => match num(n) {
            Some(n) => {
                match crate::encoded::respond(conn.stream(), coding, n, req.query.get("as"))? {
                    true => Ok(End::Finish),
                    false => bad(conn, "bad coding or size"),
                }
            }
            None => bad(conn, "bad number"),
        },
        ["hostile", rest @ ..] => hostile(conn, req, rest),
        _ => text(conn, 404, "not found"),
    }
}

/// Most bytes an endless `/hostile/...` route writes before it gives up on its own (a client
/// that keeps reading forever must not keep a server thread forever).
const ENDLESS_CAP: u64 = 4 << 30;

/// Writes `unit` again and again (through a buffer) until the client goes away, the server
/// stops or [`ENDLESS_CAP`] bytes were written.
fn endless(conn: &Conn, unit: &[u8]) -> io::Result<End> {
    let mut w = BufWriter::with_capacity(64 * 1024, conn.stream());
    let mut written = 0u64;
    while written < ENDLESS_CAP && !conn.shared.is_stopped() {
        if w.write_all(unit).is_err() {
            return Ok(End::Abort);
        }
        written += unit.len() as u64;
    }
    let _ = w.flush();
    Ok(End::Abort)
}

/// Writes `bytes` one byte per `interval`, until done, the client goes away or the server stops.
fn trickle(conn: &Conn, bytes: impl Iterator<Item = u8>, interval: Duration) -> io::Result<End> {
    for b in bytes {
        if !conn.shared.sleep(interval) {
            return Ok(End::Abort);
        }
        if conn.write_all(&[b]).is_err() {
            return Ok(End::Abort);
        }
    }
    Ok(End::Finish)
}

/// `/hostile/...`: peers that misbehave on purpose (see the crate docs).
fn hostile(conn: &Conn, req: &Head<'_>, rest: &[&str]) -> io::Result<End> {
    const OK_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n";
    match rest {
        // Accepts the connection, reads the request, then says nothing at all.
        ["silent"] => Ok(End::Hold(HOLD)),
        // A head that never ends, one byte per interval.
        ["trickle-head", ms] => {
            let Some(ms) = num(ms) else {
                return bad(conn, "bad number");
            };
            let bytes = OK_HEAD
                .iter()
                .copied()
                .chain(b"X-Trickle: ".iter().copied())
                .chain(std::iter::repeat(b'a'));
            trickle(conn, bytes, Duration::from_millis(ms))
        }
        // Header lines of `len` bytes each (at least 8), without end.
        ["endless-headers", len] => {
            let Some(len) = num(len).filter(|n| (8..=1 << 20).contains(n)) else {
                return bad(conn, "bad line length");
            };
            conn.write_all(OK_HEAD)?;
            let mut line = b"X-E: ".to_vec();
            line.resize(len as usize - 2, b'e');
            line.extend_from_slice(b"\r\n");
            endless(conn, &line)
        }
        // A chunked body without end: `data` (chunks of 4 KiB), `extensions` (a chunk-size line
        // whose extension never ends), `trailers` (trailer lines without end), `zeros` (a
        // chunk-size line of leading zeros without end).
        ["endless-chunked", kind] => {
            let status = match req.query.get("status").map(status_code) {
                None => 200,
                Some(Some(s)) => s,
                Some(None) => return bad(conn, "bad status code"),
            };
            let unit: Vec<u8> = match *kind {
                "data" => {
                    let mut u = b"1000\r\n".to_vec();
                    u.extend_from_slice(&AAAA[..0x1000]);
                    u.extend_from_slice(b"\r\n");
                    u
                }
                "extensions" | "trailers" | "zeros" => vec![b'0'; 4096],
                _ => return bad(conn, "unknown kind"),
            };
            head(conn, status, &["Transfer-Encoding: chunked", "Connection: close"])?;
            match *kind {
                "extensions" => conn.write_all(b"1;ext=")?,
                "trailers" => conn.write_all(b"0\r\nX-Trailer: ")?,
                _ => {}
            }
            endless(conn, &unit)
        }
        // A chunked body whose first chunk-size line is `hex`, then up to 16 MiB of `a` and FIN
        // (`10000000000000000` is 2^64, `ffffffffffffffff` is 2^64-1).
        ["chunk-size", hex] => {
            if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return bad(conn, "bad chunk size");
            }
            head(conn, 200, &["Transfer-Encoding: chunked", "Connection: close"])?;
            conn.write_all(format!("{hex}\r\n").as_bytes())?;
            if stream_a(&mut conn.stream(), 16 << 20).is_err() {
                return Ok(End::Abort);
            }
            Ok(End::Finish)
        }
        // Two Content-Length headers, `a` then `b`, and max(a, b) bytes of body.
        ["content-length", a, b] => {
            let (Some(na), Some(nb)) = (num(a), num(b)) else {
                return bad(conn, "bad number");
            };
            head(
                conn,
                200,
                &[
                    &format!("Content-Length: {na}"),
                    &format!("Content-Length: {nb}"),
                    "Connection: close",
                ],
            )?;
            stream_a(&mut conn.stream(), na.max(nb))?;
            Ok(End::Finish)
        }
        // A NUL byte in a header value, a header name or the reason phrase.
        ["nul", place] => {
            let resp: &[u8] = match *place {
                "value" => b"HTTP/1.1 200 OK\r\nX-Nul: a\0b\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                "name" => b"HTTP/1.1 200 OK\r\nX-N\0ul: ab\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                "reason" => b"HTTP/1.1 200 O\0K\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                _ => return bad(conn, "unknown place"),
            };
            conn.write_all(resp)?;
            Ok(End::Finish)
        }
        // A status line with a reason phrase of `n` bytes, then a complete small response.
        ["long-status-line", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            let mut w = BufWriter::with_capacity(64 * 1024, conn.stream());
            w.write_all(b"HTTP/1.1 200 ")?;
            stream_a(&mut w, n)?;
            w.write_all(b"\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")?;
            w.flush()?;
            Ok(End::Finish)
        }
        // 302 to the same path on the other loopback name (127.0.0.1 <-> localhost), same port,
        // with `/{n}` counting the hops.
        ["alternate-hosts", n] => {
            let Some(n) = num(n) else {
                return bad(conn, "bad number");
            };
            let host = String::from_utf8_lossy(req.header("host").unwrap_or(b"")).into_owned();
            let name = host_without_port(&host);
            let port = host.rsplit_once(':').map_or("80", |(_, p)| p);
            let other =
                if name.eq_ignore_ascii_case("localhost") { "127.0.0.1" } else { "localhost" };
            let loc = format!("http://{other}:{port}/hostile/alternate-hosts/{}", n + 1);
            simple(conn, 302, &[("Location", &loc)], b"redirecting")
        }
        // Half a response head, then RST.
        ["reset-mid-head"] => {
            conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Le")?;
            conn.wait_acked(ACK_WAIT);
            Ok(End::Reset)
        }
        _ => text(conn, 404, "not found"),
    }
}

/// `/bytes?status=200&reason=R&body=TEXT&header=LINE...`: the general response builder.
fn bytes(conn: &Conn, req: &Head<'_>) -> io::Result<End> {
    let q = &req.query;
    let status = match q.get("status") {
        None => 200,
        Some(s) => match status_code(s) {
            Some(s) => s,
            None => return bad(conn, "bad status code"),
        },
    };
    let body = q.get("body").unwrap_or("");
    let mut out = format!("HTTP/1.1 {status} {}\r\n", q.get("reason").unwrap_or(reason(status)));
    let (mut framed, mut has_connection) = (false, false);
    for h in q.all("header") {
        let name = h.split_once(':').map_or(h, |(n, _)| n).trim();
        framed |= name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding");
        has_connection |= name.eq_ignore_ascii_case("connection");
        out.push_str(h);
        out.push_str("\r\n");
    }
    if !framed {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    if !has_connection {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    out.push_str(body);
    conn.write_all(out.as_bytes())?;
    Ok(End::Finish)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_stripping() {
        assert_eq!(host_without_port("example.com:8080"), "example.com");
        assert_eq!(host_without_port("example.com"), "example.com");
        assert_eq!(host_without_port("[::1]:80"), "[::1]");
        assert_eq!(host_without_port("::1"), "::1");
        assert!(same_host("[::1]", "::1"));
        assert!(same_host("Example.COM", "example.com"));
        assert!(!same_host("a.example", "b.example"));
    }

    #[test]
    fn reasons() {
        assert_eq!(reason(503), "Service Unavailable");
        assert_eq!(reason(299), "Status");
    }
}
