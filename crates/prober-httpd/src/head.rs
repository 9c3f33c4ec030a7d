//! Finding and parsing a request head within the limits, without I/O.

use crate::{Limits, Request};

/// Where the head in a connection's input stands.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// A complete head of this many bytes.
    Head(usize),
    /// Not all there yet, and within the limits.
    More,
    /// Past a limit: answer this status (414 or 431) and close.
    TooLarge(u16),
}

/// How much input a connection buffers at most: a request line and its headers at their
/// limits, and the blank line.
pub(crate) fn capacity(limits: &Limits) -> usize {
    limits.max_request_line + 2 + limits.max_header_bytes + 2
}

/// Looks for the end of the head in `input`. `scanned` is how far earlier calls looked, so
/// that input dribbled a byte at a time is searched once, not once per byte.
pub(crate) fn find(input: &[u8], scanned: &mut usize, limits: &Limits) -> Found {
    let from = scanned.saturating_sub(3);
    let end =
        input[from..].windows(2).position(|w| w == b"\n\n").map(|i| from + i + 2).or_else(|| {
            input[from..].windows(4).position(|w| w == b"\r\n\r\n").map(|i| from + i + 4)
        });
    *scanned = input.len();
    let within = end.unwrap_or(input.len());
    // The request line: up to its line feed (leading empty lines are allowed by RFC 9112).
    let start = input.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(input.len());
    let line_end = input[start..within].iter().position(|&b| b == b'\n').map(|i| start + i);
    let line_len = line_end.unwrap_or(within) - start;
    if line_len > limits.max_request_line + 1 {
        return Found::TooLarge(414);
    }
    if let Some(line_end) = line_end {
        if within - line_end > limits.max_header_bytes + 3 {
            return Found::TooLarge(431);
        }
    }
    match end {
        Some(end) => Found::Head(end),
        None if input.len() >= capacity(limits) => Found::TooLarge(431),
        None => Found::More,
    }
}

/// What a complete head asks for.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// A request, and whether the connection is to be closed after its answer.
    Request(Request, bool),
    /// Not a request this server can read: answer this status and close.
    Bad(u16, &'static str),
}

/// The most headers a request may have.
const MAX_HEADERS: usize = 64;

/// Parses a complete head.
pub(crate) fn parse(head: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Parsed::Bad(400, "incomplete request\n"),
        Err(httparse::Error::TooManyHeaders) => {
            return Parsed::Bad(431, "too many header fields\n");
        }
        Err(_) => return Parsed::Bad(400, "malformed request\n"),
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Bad(400, "malformed request\n");
    };
    let mut out = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let Ok(value) = std::str::from_utf8(h.value) else {
            return Parsed::Bad(400, "a header value is not UTF-8\n");
        };
        out.push((h.name.to_string(), value.to_string()));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers: out,
    };
    let connection = |token: &str| {
        request.headers.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("connection")
                && v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    };
    // A body is never read: its bytes would be taken for the next request, so the
    // connection ends with this answer.
    let body = request.header("transfer-encoding").is_some()
        || request.header("content-length").is_some_and(|v| v.trim() != "0");
    let close = if version == 0 { !connection("keep-alive") } else { connection("close") };
    Parsed::Request(request, close || body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { max_request_line: 20, max_header_bytes: 30, ..Limits::default() }
    }

    fn find_all(input: &[u8]) -> Found {
        find(input, &mut 0, &limits())
    }

    #[test]
    fn heads_and_limits() {
        assert_eq!(find_all(b"GET / HTTP/1.1\r\nA: b\r\n\r\nrest"), Found::Head(24));
        assert_eq!(find_all(b"GET / HTTP/1.1\n\n"), Found::Head(16));
        assert_eq!(find_all(b"GET / HTTP/1.1\r\nA: b\r\n"), Found::More);
        assert_eq!(find_all(b"GET /aaaaaaaaaaaaaaaaaaaaaaaaa"), Found::TooLarge(414));
        assert_eq!(
            find_all(b"GET /aaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n"),
            Found::TooLarge(414)
        );
        let many = b"GET / HTTP/1.1\r\nA: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        assert_eq!(find_all(many), Found::TooLarge(431));
        // Dribbled: the head's end is found across calls.
        let whole = b"GET / HTTP/1.1\r\nA: b\r\n\r\n";
        let mut scanned = 0;
        for n in 1..whole.len() {
            assert_eq!(find(&whole[..n], &mut scanned, &limits()), Found::More, "{n}");
        }
        assert_eq!(find(whole, &mut scanned, &limits()), Found::Head(whole.len()));
    }

    #[test]
    fn keep_alive_and_bodies() {
        let close = |head: &[u8]| match parse(head) {
            Parsed::Request(_, close) => close,
            Parsed::Bad(s, m) => panic!("{s} {m}"),
        };
        assert!(!close(b"GET / HTTP/1.1\r\n\r\n"));
        assert!(close(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
        assert!(close(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(!close(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(close(b"GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\n"));
        assert!(!close(b"GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"));
        match parse(b"GET /metrics?a=b HTTP/1.1\r\nAccept: x\r\n\r\n") {
            Parsed::Request(r, _) => {
                assert_eq!((r.path.as_str(), r.query.as_str()), ("/metrics", "a=b"));
                assert_eq!(r.header("ACCEPT"), Some("x"));
            }
            Parsed::Bad(s, m) => panic!("{s} {m}"),
        }
        assert!(matches!(parse(b"GET /\r\n\r\n"), Parsed::Bad(400, _)));
    }
}
