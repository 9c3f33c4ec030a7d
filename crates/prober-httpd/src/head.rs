//! Finding and parsing a request head within the limits, without I/O.

use crate::limits::Limits;
use crate::request::Request;

/// Where the head in a connection's input stands.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// A complete head of this many bytes.
    Head(usize),
    /// Not all there yet, and within the limits.
    More,
    /// Past a limit: answer this status (414 or 431) and close.
    TooLarge(u16),
}

/// How much input a connection buffers at most: a request line and its headers at their
/// limits, and the blank line.
pub fn capacity(limits: &Limits) -> usize {
    limits.max_request_line + 2 + limits.max_header_bytes + 2
}

/// How many bytes of `input` are empty lines before the request line (CRLF or bare LF, which
/// RFC 9112 section 2.2 asks a server to ignore; a stray CR is left for the parser to refuse).
fn blank_prefix(input: &[u8]) -> usize {
    input.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(input.len())
}

/// Where the first empty line after the request line ends in `input`, searching from `from`
/// (at or after the request line's first byte): a line feed followed by LF or CRLF.
fn head_end(input: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(at) = input.get(i..)?.iter().position(|&b| b == b'\n') {
        let lf = i + at;
        match input.get(lf + 1..) {
            Some([b'\n', ..]) => return Some(lf + 2),
            Some([b'\r', b'\n', ..]) => return Some(lf + 3),
            _ => i = lf + 1,
        }
    }
    None
}

/// Looks for the end of the head in `input`. `scanned` is how far earlier calls looked, so
/// that input dribbled a byte at a time is searched once, not once per byte. Empty lines
/// before the request line are skipped (any number of them, within [`capacity`]); input that
/// is only empty lines is [`Found::More`].
pub fn find(input: &[u8], scanned: &mut usize, limits: &Limits) -> Found {
    let start = blank_prefix(input);
    // An end found earlier would have been returned: look again only at the last two bytes
    // searched (an end's line feed may have been the last byte then), never before the
    // request line.
    let from = scanned.saturating_sub(2).max(start);
    let end = head_end(input, from);
    *scanned = input.len();
    let within = end.unwrap_or(input.len());
    // The request line: from its first byte up to its line feed.
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
pub enum Parsed {
    /// A request, and whether the connection is to be closed after its answer.
    Request(Request, bool),
    /// Not a request this server can read: answer this status and close.
    Bad(u16, &'static str),
}

/// The most headers a request may have.
const MAX_HEADERS: usize = 64;

/// Parses a complete head (empty lines before the request line are skipped).
pub fn parse(head: &[u8]) -> Parsed {
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
    let body = match body(&request) {
        Ok(body) => body,
        Err(why) => return Parsed::Bad(400, why),
    };
    let close = if version == 0 { !connection("keep-alive") } else { connection("close") };
    Parsed::Request(request, close || body)
}

/// Whether the request has a body, or why its framing is refused. A body is never read: its
/// bytes would be taken for the next request, so the connection ends with the answer. Framing
/// that a proxy in front of us could read otherwise than we do is refused (RFC 9112 section
/// 6.3), so that no body is ever taken for a request: `Transfer-Encoding` with
/// `Content-Length`, and `Content-Length` values that are not one number. Repeats of the same
/// number (in one field, comma-separated, or in several) are read as that number, as the RFC
/// allows.
fn body(request: &Request) -> Result<bool, &'static str> {
    let mut length: Option<&str> = None;
    let values = request.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("content-length"));
    for value in values.flat_map(|(_, v)| v.split(',')).map(str::trim) {
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err("invalid Content-Length\n");
        }
        // Leading zeros do not make another number.
        let value = value.trim_start_matches('0');
        match length {
            Some(seen) if seen != value => return Err("differing Content-Length values\n"),
            _ => length = Some(value),
        }
    }
    if request.header("transfer-encoding").is_some() {
        if length.is_some() {
            return Err("Transfer-Encoding with Content-Length\n");
        }
        return Ok(true);
    }
    Ok(length.is_some_and(|l| !l.is_empty()))
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
    fn empty_lines_before_the_request_line() {
        for blank in [&b"\n\n\n"[..], b"\r\n\r\n\r\n", b"\n", b"\r\n\n"] {
            assert_eq!(find_all(blank), Found::More, "{blank:?}");
            let mut input = blank.to_vec();
            input.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
            assert_eq!(find_all(&input), Found::Head(input.len()), "{blank:?}");
            // Dribbled a byte at a time: found once whole, never before.
            let mut scanned = 0;
            for n in 0..input.len() {
                assert_eq!(find(&input[..n], &mut scanned, &limits()), Found::More);
            }
            assert_eq!(find(&input, &mut scanned, &limits()), Found::Head(input.len()));
            assert!(matches!(parse(&input), Parsed::Request(..)), "{blank:?}");
        }
        // A stray CR is not an empty line.
        assert!(matches!(parse(b"\rGET / HTTP/1.1\r\n\r\n"), Parsed::Bad(400, _)));
        // The request line's limit is counted from its first byte, the head's from the start.
        let mut long = b"\n".repeat(30);
        long.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(find_all(&long), Found::Head(long.len()));
        assert_eq!(find_all(&b"\n".repeat(capacity(&limits()))), Found::TooLarge(431));
        // The first empty line ends the head, whichever line ends it uses.
        assert_eq!(find_all(b"GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\n\n"), Found::Head(18));
        assert_eq!(find_all(b"GET / HTTP/1.1\n\r\nX"), Found::Head(17));
    }

    #[test]
    fn framing_a_proxy_could_read_otherwise_is_refused() {
        let bad = |head: &[u8]| matches!(parse(head), Parsed::Bad(400, _));
        assert!(bad(b"GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n"));
        assert!(bad(b"GET / HTTP/1.1\r\nContent-Length: 0, 5\r\n\r\n"));
        assert!(bad(b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"));
        assert!(bad(b"GET / HTTP/1.1\r\nContent-Length:\r\n\r\n"));
        assert!(bad(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n"));
        let close = |head: &[u8]| match parse(head) {
            Parsed::Request(_, close) => close,
            Parsed::Bad(s, m) => panic!("{s} {m}"),
        };
        // The same number repeated is that number.
        assert!(!close(b"GET / HTTP/1.1\r\nContent-Length: 0\r\ncontent-length: 00\r\n\r\n"));
        assert!(close(b"GET / HTTP/1.1\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n"));
        assert!(close(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
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
