//! The response head: status line and headers parsed with `httparse` into a small owned
//! [`ResponseHead`], with the body framing decided by hyper's rules (`role.rs`) and Go's
//! strictness about `Content-Length` and `Transfer-Encoding`:
//!
//! 1. Status 1xx, 204 and 304 have no body (a probe never sends HEAD or CONNECT).
//! 2. `Transfer-Encoding: chunked` (exactly that one coding, as Go accepts) is a chunked body, and
//!    any `Content-Length` is ignored. Another transfer coding is refused. An HTTP/1.0 response's
//!    `Transfer-Encoding` is ignored, as Go ignores it.
//! 3. Several `Content-Length` values that differ, or one that is not a decimal number: refused.
//! 4. `Content-Length` is a sized body.
//! 5. Otherwise the body runs until the server closes the connection.
//!
//! Leniency follows Go's client, which the kubelet uses: several spaces between the parts of
//! the status line, any `HTTP/d.d` version (`HTTP/1.2` and `HTTP/2.0` as text are read as
//! HTTP/1.1), any three-digit status, spaces before a header's colon, and obsolete folded
//! header lines (joined with a space, as Go joins them).
//!
//! Limits: the head is at most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] header lines. Interim
//! responses (1xx except 101) are skipped; together they may take at most
//! [`MAX_INTERIM_BYTES`] (Go 1.24 and later bound them by size, not by count).

use std::fmt;

use crate::body::Framing;

/// The longest response head accepted, in bytes.
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header lines accepted in one response head.
pub const MAX_HEADERS: usize = 128;
/// The most bytes of interim (1xx) response heads skipped before the final one. Go bounds all
/// the heads of one response together by its header size limit; this is ours, and each head
/// is dropped once parsed, so it bounds time, not memory.
pub const MAX_INTERIM_BYTES: usize = 1024 * 1024;

/// The parts of a final response head a probe needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub version: u8,
    pub status: u16,
    /// How the body is delimited.
    pub framing: Framing,
    /// The first `Location` value, trimmed; `None` when absent or empty.
    pub location: Option<String>,
    /// Length of this head in bytes: the body starts at this offset.
    pub len: usize,
}

/// Why a response head was refused. Displays as the detail after `Get "<url>": `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Not an HTTP/1.x response head (garbage, HTTP/0.9, bad syntax).
    Malformed(String),
    /// More than [`MAX_HEAD`] bytes without the end of the head.
    TooLarge,
    /// More than [`MAX_HEADERS`] header lines.
    TooManyHeaders,
    /// Content-Length missing a number, or several different ones.
    ContentLength(String),
    /// A transfer coding other than `chunked`.
    TransferEncoding(String),
    /// More than [`MAX_INTERIM_BYTES`] of interim responses.
    TooManyInterim,
    /// The connection ended inside the head (`eof` only: `read` bytes were received).
    Eof { read: usize },
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::Malformed(m) => write!(f, "malformed HTTP response: {m}"),
            HeadError::TooLarge => {
                write!(f, "HTTP response head larger than {} KiB", MAX_HEAD / 1024)
            }
            HeadError::TooManyHeaders => {
                write!(f, "malformed HTTP response: more than {MAX_HEADERS} header lines")
            }
            HeadError::ContentLength(m) => write!(f, "malformed HTTP response: {m}"),
            HeadError::TransferEncoding(v) => {
                write!(f, "malformed HTTP response: unsupported transfer encoding: {v:?}")
            }
            HeadError::TooManyInterim => write!(
                f,
                "net/http: too many 1xx informational responses (over {} KiB)",
                MAX_INTERIM_BYTES / 1024
            ),
            // Go's wording: `EOF` when nothing came back, `unexpected EOF` inside a head.
            HeadError::Eof { read: 0 } => f.write_str("EOF"),
            HeadError::Eof { .. } => f.write_str("unexpected EOF"),
        }
    }
}

impl std::error::Error for HeadError {}

/// What [`HeadParser::parse`] found at the start of the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadStatus {
    /// The head is not complete yet: read more (the buffer is within the limit).
    Partial,
    /// An interim 1xx response of `len` bytes: drop them and parse again.
    Interim { status: u16, len: usize },
    /// The final response head.
    Complete(ResponseHead),
}

/// Parses response heads, counting interim responses' bytes across calls.
#[derive(Debug, Default)]
pub struct HeadParser {
    interim_bytes: usize,
}

impl HeadParser {
    pub fn new() -> HeadParser {
        HeadParser::default()
    }

    /// Parses the head at the start of `buf` (everything received since the end of the
    /// previous head).
    pub fn parse(&mut self, buf: &[u8]) -> Result<HeadStatus, HeadError> {
        // httparse reads HTTP/1.0 and HTTP/1.1 only; Go reads any `HTTP/d.d`. A head with
        // another version is parsed from a copy that says HTTP/1.1 (or 1.0 below 1.1): rare,
        // so the copy costs nothing on the usual path.
        let rewritten;
        let (buf, version_override) = match other_version(buf) {
            Some(minor) => {
                let mut copy = buf[..buf.len().min(MAX_HEAD + 1)].to_vec();
                copy[5..8].copy_from_slice(if minor == 1 { b"1.1" } else { b"1.0" });
                rewritten = copy;
                (&rewritten[..], Some(minor))
            }
            None => (buf, None),
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let parsed = httparse::ParserConfig::default()
            .allow_multiple_spaces_in_response_status_delimiters(true)
            .allow_spaces_after_header_name_in_responses(true)
            .allow_obsolete_multiline_headers_in_responses(true)
            .parse_response(&mut resp, buf);
        let len = match parsed {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => {
                return if buf.len() > MAX_HEAD {
                    Err(HeadError::TooLarge)
                } else {
                    Ok(HeadStatus::Partial)
                };
            }
            Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
            Err(e @ (httparse::Error::HeaderName | httparse::Error::HeaderValue | httparse::Error::NewLine)) => {
                return Err(HeadError::Malformed(format!("{e}: {}", bad_header_line(buf))));
            }
            Err(e) => return Err(HeadError::Malformed(format!("{e}: {}", first_line(buf)))),
        };
        if len > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        let version = version_override.unwrap_or(resp.version.unwrap_or(1));
        let status = resp.code.unwrap_or(0);
        if status > 999 {
            return Err(HeadError::Malformed(format!("invalid status code {status:03}")));
        }
        if (100..200).contains(&status) && status != 101 {
            self.interim_bytes += len;
            if self.interim_bytes > MAX_INTERIM_BYTES {
                return Err(HeadError::TooManyInterim);
            }
            return Ok(HeadStatus::Interim { status, len });
        }

        let mut location = None;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("location") {
                let v = String::from_utf8_lossy(h.value);
                let v = unfold(&v);
                let v = v.trim_matches(|c| c == ' ' || c == '\t');
                if !v.is_empty() {
                    location = Some(v.to_string());
                    break;
                }
            }
        }
        // The values of one header, in order, without collecting them: a run allocates nothing
        // for framing unless the head is malformed.
        let values = |name: &'static str| {
            resp.headers.iter().filter(move |h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value)
        };

        let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
            Framing::Length(0)
        } else if values("transfer-encoding").next().is_some() && version >= 1 {
            transfer_encoding(values("transfer-encoding"))?
        } else if values("content-length").next().is_some() {
            Framing::Length(content_length(values("content-length"))?)
        } else {
            Framing::Close
        };
        Ok(HeadStatus::Complete(ResponseHead { version, status, framing, location, len }))
    }

    /// The connection ended with `buf` holding an incomplete head (possibly empty).
    pub fn eof(&self, buf: &[u8]) -> HeadError {
        HeadError::Eof { read: buf.len() }
    }

    /// Whether parsing `buf`, whose last `new` bytes have just been read, can tell more than
    /// parsing it before they came: always for a head of at most [`PARSE_ALWAYS_UP_TO`] bytes
    /// (so garbage at the start is refused at once) and past [`MAX_HEAD`]; otherwise only when
    /// a line ended in the new bytes, since a head cannot be complete before its last line
    /// ends. Parsing after every read instead is quadratic in the head's size: a peer sending
    /// a 64 KiB head a few bytes at a time makes the parser scan gigabytes. (A malformed line
    /// is then refused when it ends, at the head limit, or at EOF, not in the middle.)
    pub fn worth_parsing(buf: &[u8], new: usize) -> bool {
        buf.len() <= PARSE_ALWAYS_UP_TO
            || buf.len() > MAX_HEAD
            || buf[buf.len().saturating_sub(new)..].contains(&b'\n')
    }
}

/// Heads up to this many bytes are parsed after every read (see [`HeadParser::worth_parsing`]).
pub const PARSE_ALWAYS_UP_TO: usize = 1024;

fn transfer_encoding<'a>(values: impl Iterator<Item = &'a [u8]> + Clone) -> Result<Framing, HeadError> {
    let is_chunked = |v: &[u8]| v.trim_ascii().eq_ignore_ascii_case(b"chunked");
    if values.clone().count() == 1 && values.clone().next().is_some_and(is_chunked) {
        return Ok(Framing::Chunked); // the usual case, decided without building the list
    }
    let joined = values.map(String::from_utf8_lossy).collect::<Vec<_>>().join(", ");
    let tokens: Vec<&str> = joined.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    if tokens.len() == 1 && tokens[0].eq_ignore_ascii_case("chunked") {
        Ok(Framing::Chunked)
    } else {
        Err(HeadError::TransferEncoding(joined))
    }
}

fn content_length<'a>(values: impl Iterator<Item = &'a [u8]> + Clone) -> Result<u64, HeadError> {
    let mut found: Option<u64> = None;
    for raw in values.clone() {
        let text = String::from_utf8_lossy(raw);
        let t = text.trim_matches(|c| c == ' ' || c == '\t');
        let n = if t.is_empty() || t.len() > 19 || !t.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            t.parse::<u64>().ok().filter(|&n| n <= i64::MAX as u64)
        };
        let Some(n) = n else {
            return Err(HeadError::ContentLength(format!("invalid Content-Length {text:?}")));
        };
        match found {
            Some(prev) if prev != n => {
                let all: Vec<String> =
                    values.map(|v| String::from_utf8_lossy(v).into_owned()).collect();
                return Err(HeadError::ContentLength(format!(
                    "conflicting Content-Length headers: {all:?}"
                )));
            }
            _ => found = Some(n),
        }
    }
    Ok(found.unwrap_or(0))
}

/// The minor version (capped at 1) of a status line that starts `HTTP/d.d` with a version other
/// than 1.0 and 1.1, as Go's `ParseHTTPVersion` accepts it; `None` otherwise.
fn other_version(buf: &[u8]) -> Option<u8> {
    match buf.get(..8)? {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            match (major - b'0', minor - b'0') {
                (1, 0 | 1) => None,
                (0, _) => Some(0),
                _ => Some(1), // 1.2 and up, 2.0 and up: at least 1.1, as Go's ProtoAtLeast says
            }
        }
        _ => None,
    }
}

/// A header value with obsolete line folding joined as Go joins it: each line break and the
/// white space around it become one space.
fn unfold(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains('\n') {
        return std::borrow::Cow::Borrowed(v);
    }
    let parts: Vec<&str> = v.split('\n').map(|l| l.trim_matches(|c| c == ' ' || c == '\t' || c == '\r')).collect();
    std::borrow::Cow::Owned(parts.join(" "))
}

/// The first header line that is not `name: value` with a token name and a value free of
/// control characters (after the status line), quoted and cut to 64 bytes, for error messages;
/// the first line when none is found.
fn bad_header_line(buf: &[u8]) -> String {
    let is_token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let is_text = |b: &u8| *b == b'\t' || (*b >= 0x20 && *b != 0x7f);
    let good = |line: &[u8]| match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let name = line[..colon].trim_ascii_end();
            !name.is_empty() && name.iter().all(|&b| is_token(b)) && line[colon + 1..].iter().all(is_text)
        }
        // A folded line continues the previous value.
        None => line.first().is_some_and(|&b| b == b' ' || b == b'\t') && line.iter().all(is_text),
    };
    buf.split(|&b| b == b'\n')
        .skip(1)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .take_while(|l| !l.is_empty())
        .find(|l| !good(l))
        .map_or_else(|| first_line(buf), first_line)
}

/// The first line of what was received, quoted and cut to 64 bytes, for error messages.
fn first_line(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len()).min(64);
    let line = String::from_utf8_lossy(&buf[..end]);
    format!("{:?}", line.trim_end_matches('\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<HeadStatus, HeadError> {
        HeadParser::new().parse(s.as_bytes())
    }

    fn head(s: &str) -> ResponseHead {
        match parse(s) {
            Ok(HeadStatus::Complete(h)) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn simple_heads() {
        let s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
        let h = head(s);
        assert_eq!(h.status, 200);
        assert_eq!(h.framing, Framing::Length(5));
        assert_eq!(&s[h.len..], "hello");
        assert_eq!(h.location, None);
        let h = head("HTTP/1.0 302\r\nLocation:  /new \r\n\r\n");
        assert_eq!((h.version, h.status), (0, 302));
        assert_eq!(h.location.as_deref(), Some("/new"));
        assert_eq!(h.framing, Framing::Close);
        assert_eq!(head("HTTP/1.1 301 M\r\nLocation: \r\n\r\n").location, None);
        assert_eq!(
            head("HTTP/1.1 301 M\r\nlocation: /a\r\nLocation: /b\r\n\r\n").location.as_deref(),
            Some("/a")
        );
    }

    #[test]
    fn partial_until_complete() {
        let full = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        for i in 0..full.len() - 2 {
            assert_eq!(parse(&full[..i]), Ok(HeadStatus::Partial), "{i}");
        }
    }

    #[test]
    fn framing_rules() {
        assert_eq!(
            head("HTTP/1.1 204 No\r\nContent-Length: 5\r\n\r\n").framing,
            Framing::Length(0)
        );
        assert_eq!(head("HTTP/1.1 304 No\r\n\r\n").framing, Framing::Length(0));
        assert_eq!(head("HTTP/1.1 101 Up\r\n\r\n").framing, Framing::Length(0));
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(h.framing, Framing::Chunked);
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked \r\n\r\n").framing,
            Framing::Chunked
        );
        // HTTP/1.0: Transfer-Encoding ignored.
        assert_eq!(
            head("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").framing,
            Framing::Close
        );
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 7\r\ncontent-length:  7\r\n\r\n").framing,
            Framing::Length(7)
        );
        assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n").framing, Framing::Close);
    }

    #[test]
    fn bad_framing_is_refused() {
        let e =
            parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"malformed HTTP response: conflicting Content-Length headers: ["5", "6"]"#
        );
        for bad in ["abc", "-1", "+5", "", "5, 5", "99999999999999999999", "9223372036854775808"] {
            let e =
                parse(&format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n")).unwrap_err();
            assert!(matches!(e, HeadError::ContentLength(_)), "{bad}: {e:?}");
            assert!(
                e.to_string().starts_with("malformed HTTP response: invalid Content-Length"),
                "{e}"
            );
        }
        let e = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"malformed HTTP response: unsupported transfer encoding: "gzip, chunked""#
        );
        assert!(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n").is_err());
    }

    #[test]
    fn garbage_and_http09() {
        let e = parse("this is not http\r\n\r\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"malformed HTTP response: invalid HTTP version: "this is not http""#
        );
        let e = parse("hello").unwrap_err();
        assert_eq!(e.to_string(), r#"malformed HTTP response: invalid HTTP version: "hello""#);
        // Go reads any HTTP/d.d version; two digits or none are refused.
        assert_eq!(head("HTTP/2.0 200 OK\r\n\r\n").status, 200);
        assert!(matches!(parse("HTTP/1.10 200 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/ 200 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/1.1 2000 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/1.1 abc OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        let e = parse("HTTP/1.1 200 OK\r\nX-Ok: 1\r\nBad\x01Name: x\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), r#"malformed HTTP response: invalid header name: "Bad\u{1}Name: x""#);
        // Any three digits are a status, as in Go: 099 is a final response (a failure).
        assert_eq!(head("HTTP/1.1 099 Low\r\n\r\n").status, 99);
    }

    #[test]
    fn limits() {
        let mut s = String::from("HTTP/1.1 200 OK\r\n");
        for i in 0..MAX_HEADERS {
            s.push_str(&format!("X-{i}: v\r\n"));
        }
        let ok = format!("{s}\r\n");
        assert!(matches!(parse(&ok), Ok(HeadStatus::Complete(_))));
        let over = format!("{s}X-Last: v\r\n\r\n");
        assert_eq!(parse(&over), Err(HeadError::TooManyHeaders));

        let big = format!("HTTP/1.1 200 OK\r\nX-Fill: {}\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(parse(&big), Err(HeadError::TooLarge));
        assert_eq!(HeadError::TooLarge.to_string(), "HTTP response head larger than 64 KiB");
        let big_complete = format!("{big}\r\n");
        assert_eq!(parse(&big_complete), Err(HeadError::TooLarge));
        let just = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD - 24));
        assert_eq!(just.len(), MAX_HEAD);
        assert!(matches!(parse(&just), Ok(HeadStatus::Complete(_))));
        let over = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD - 23));
        assert_eq!(parse(&over), Err(HeadError::TooLarge));
    }

    #[test]
    fn worth_parsing_only_when_a_line_may_have_ended() {
        let small = b"HTTP/1.1 200 OK\r\nX: a";
        assert!(HeadParser::worth_parsing(small, 1), "small heads: after every read");
        let mut big = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        big.resize(PARSE_ALWAYS_UP_TO + 10, b'a');
        assert!(!HeadParser::worth_parsing(&big, 1));
        assert!(!HeadParser::worth_parsing(&big, 5), "no line ended in the new bytes");
        assert!(HeadParser::worth_parsing(&big, big.len()), "the status line's LF is new");
        big.extend_from_slice(b"\r\n");
        assert!(HeadParser::worth_parsing(&big, 1), "LF just read");
        assert!(HeadParser::worth_parsing(&big, 2));
        big.push(b'Y');
        assert!(!HeadParser::worth_parsing(&big, 1));
        assert!(HeadParser::worth_parsing(&big, 2));
        big.resize(MAX_HEAD + 1, b'a');
        assert!(HeadParser::worth_parsing(&big, 1), "over the limit: say so");
        // A complete head always ends with an LF just read, so skipping never misses one.
        let full = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_string() + &"x".repeat(2000);
        let head_len = full.find("\r\n\r\n").unwrap() + 4;
        assert!(HeadParser::worth_parsing(&full.as_bytes()[..head_len], 1));
    }

    #[test]
    fn lenient_like_go() {
        assert_eq!(head("HTTP/1.1  200  OK\r\n\r\n").status, 200);
        let h = head("HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nok");
        assert_eq!((h.version, h.status, h.framing), (1, 200, Framing::Length(2)));
        assert_eq!(head("HTTP/0.9 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").framing, Framing::Close);
        assert_eq!(head("HTTP/1.1 200 OK\r\nX-Foo : bar\r\nContent-Length: 0\r\n\r\n").framing, Framing::Length(0));
        let h = head("HTTP/1.1 302 Found\r\nX-Long: a\r\n b\r\nLocation: /a\r\n\t/b\r\n\r\n");
        assert_eq!(h.location.as_deref(), Some("/a /b"));
    }

    #[test]
    fn interim_responses_are_skipped_up_to_a_size() {
        let mut p = HeadParser::new();
        let s = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let Ok(HeadStatus::Interim { status: 100, len }) = p.parse(s.as_bytes()) else { panic!() };
        let Ok(HeadStatus::Complete(h)) = p.parse(&s.as_bytes()[len..]) else { panic!() };
        assert_eq!(h.status, 200);
        // More than five (Go before 1.24 stopped there): skipped, until their bytes add up.
        let hint = b"HTTP/1.1 103 Early Hints\r\n\r\n";
        let mut p = HeadParser::new();
        for _ in 0..MAX_INTERIM_BYTES / hint.len() {
            assert!(matches!(p.parse(hint), Ok(HeadStatus::Interim { .. })));
        }
        assert_eq!(p.parse(hint), Err(HeadError::TooManyInterim));
    }

    #[test]
    fn eof_wording() {
        let p = HeadParser::new();
        assert_eq!(p.eof(b"").to_string(), "EOF");
        assert_eq!(p.eof(b"HTTP/1.1 200").to_string(), "unexpected EOF");
    }
}
