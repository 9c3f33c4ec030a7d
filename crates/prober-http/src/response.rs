//! The response head: status line and headers parsed with `httparse` into a small owned
//! [`ResponseHead`], with the body framing decided by hyper's rules (`role.rs`) and Go's
//! strictness about `Content-Length` and `Transfer-Encoding`:
//!
//! 1. Status 1xx, 204 and 304 have no body (nor has any response to HEAD: the probe decides
//!    that, knowing its method; a probe never sends CONNECT).
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
//! Errors are worded as Go's client words them (the kubelet's events show those words):
//! `net/http: HTTP/1.x transport connection broken: malformed HTTP status code "20"`. Go's
//! line-by-line reading is followed to find which fault it would name first (status code before
//! version, a missing colon, a bad header line), with values quoted as Go's `%q` quotes them.
//!
//! Limits: the head is at most [`MAX_HEAD`] bytes (Go allows 10 MiB: a deliberate bound on the
//! memory of one probe); the number of header lines is bounded only by that size. Interim
//! responses (1xx except 101) are skipped; together they may take at most
//! [`MAX_INTERIM_BYTES`] (Go 1.24 and later bound them by size, not by count).

use std::fmt;

use crate::body::Framing;

/// The longest response head accepted, in bytes.
pub const MAX_HEAD: usize = 64 * 1024;
/// Header lines parsed without allocating; a head with more is parsed again with room for as
/// many lines as it has (it is complete by then, so that happens once).
pub const MAX_HEADERS: usize = 128;

/// What Go's transport puts before an error reading a response.
const BROKEN: &str = "net/http: HTTP/1.x transport connection broken";
/// The most bytes of interim (1xx) response heads skipped before the final one. Go bounds all
/// the heads of one response together by its header size limit; this is ours, and each head
/// is dropped once parsed, so it bounds time, not memory.
pub const MAX_INTERIM_BYTES: usize = 1024 * 1024;

/// The parts of a final response head a probe needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub version: u8,
    /// The status code.
    pub status: u16,
    /// How the body is delimited.
    pub framing: Framing,
    /// The first `Location` value, trimmed; `None` when absent or empty.
    pub location: Option<String>,
    /// Length of this head in bytes: the body starts at this offset.
    pub len: usize,
    /// The connection cannot carry another request after this response: `Connection: close`,
    /// HTTP/1.0 (whose keep-alive extension is not spoken here), or a `101 Switching
    /// Protocols`. Always true from a parser
    /// not made with [`HeadParser::keep_alive`].
    pub close: bool,
}

/// Why a response head was refused. Displays as the detail after `Get "<url>": `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Not an HTTP/1.x response head (garbage, HTTP/0.9, bad syntax): Go's words for the fault.
    Malformed(String),
    /// More than [`MAX_HEAD`] bytes without the end of the head.
    TooLarge,
    /// Content-Length missing a number, or several different ones.
    ContentLength(String),
    /// A transfer coding other than `chunked`.
    TransferEncoding(String),
    /// More than [`MAX_INTERIM_BYTES`] of interim responses.
    TooManyInterim,
    /// The connection ended inside the head (`eof` only: `read` bytes were received).
    Eof {
        /// Bytes of the head received.
        read: usize,
    },
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::Malformed(m) => write!(f, "{BROKEN}: {m}"),
            // Go's words with our limit.
            HeadError::TooLarge => {
                write!(f, "net/http: server response headers exceeded {MAX_HEAD} bytes; aborted")
            }
            HeadError::ContentLength(m) => write!(f, "{BROKEN}: {m}"),
            HeadError::TransferEncoding(v) => {
                write!(
                    f,
                    "{BROKEN}: unsupported transfer encoding: {}",
                    prober_core::go_quote(v.as_bytes())
                )
            }
            HeadError::TooManyInterim => write!(
                f,
                "net/http: too many 1xx informational responses (over {} KiB)",
                MAX_INTERIM_BYTES / 1024
            ),
            // Go's wording: `EOF` when nothing came back at all, `unexpected EOF` once a
            // response had begun (an interim one included).
            HeadError::Eof { read: 0 } => f.write_str("EOF"),
            HeadError::Eof { .. } => write!(f, "{BROKEN}: unexpected EOF"),
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
    Interim {
        /// The interim status (100, 102, 103...).
        status: u16,
        /// Its length in bytes.
        len: usize,
    },
    /// The final response head.
    Complete(ResponseHead),
}

/// Parses response heads, counting interim responses' bytes across calls.
#[derive(Debug, Default)]
pub struct HeadParser {
    interim_bytes: usize,
    /// Read `Connection` for [`ResponseHead::close`] (keep-alive probes only).
    keep_alive: bool,
}

impl HeadParser {
    /// A parser for one response.
    pub fn new() -> HeadParser {
        HeadParser::default()
    }

    /// A parser for a keep-alive probe's response: it reads `Connection` to say whether the
    /// connection can carry another request ([`ResponseHead::close`]). Without it `close` is
    /// always true and the header is not looked for: the kubelet's path does no more work.
    pub fn keep_alive() -> HeadParser {
        HeadParser { keep_alive: true, ..HeadParser::default() }
    }

    /// Parses the head at the start of `buf` (everything received since the end of the
    /// previous head).
    ///
    /// # Errors
    /// A malformed head (Go's texts), a head over [`MAX_HEAD`], bad framing headers, too many
    /// interim responses.
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
        let mut config = httparse::ParserConfig::default();
        config
            .allow_multiple_spaces_in_response_status_delimiters(true)
            .allow_spaces_after_header_name_in_responses(true)
            .allow_obsolete_multiline_headers_in_responses(true);
        // Slots left uninitialised for httparse to fill: zeroing all of them (4 KiB) cost a
        // check on a kept connection more than parsing its few header lines.
        let mut slots = [std::mem::MaybeUninit::<httparse::Header<'_>>::uninit(); MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut []);
        let parsed = config.parse_response_with_uninit_headers(&mut resp, buf, &mut slots);
        if !matches!(parsed, Err(httparse::Error::TooManyHeaders | httparse::Error::HeaderName)) {
            return self.judge(buf, version_override, &resp, parsed);
        }
        // Rare heads, parsed again into initialised slots that a second parse can reuse.
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut many = Vec::new();
        let mut resp = httparse::Response::new(&mut headers);
        let mut parsed = config.parse_response(&mut resp, buf);
        if matches!(parsed, Err(httparse::Error::TooManyHeaders)) {
            // Complete by now (see `worth_parsing`): room for every line it has, once.
            let lines = buf.iter().filter(|&&b| b == b'\n').count().min(MAX_HEAD / 3);
            many.resize(lines, httparse::EMPTY_HEADER);
            resp = httparse::Response::new(&mut many);
            parsed = config.parse_response(&mut resp, buf);
        }
        if matches!(parsed, Err(httparse::Error::HeaderName)) && go_head_error(buf, false).is_none()
        {
            // A name with a space inside (`X Foo: bar`): Go keeps such a line as it is, under
            // a name no probe looks at; so can we.
            config.ignore_invalid_headers_in_responses(true);
            parsed = config.parse_response(&mut resp, buf);
        }
        self.judge(buf, version_override, &resp, parsed)
    }

    /// The head that httparse's `parsed` (of `buf`, into `resp`) says `buf` starts with.
    fn judge(
        &mut self,
        buf: &[u8],
        version_override: Option<u8>,
        resp: &httparse::Response<'_, '_>,
        parsed: httparse::Result<usize>,
    ) -> Result<HeadStatus, HeadError> {
        let len = match parsed {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => {
                return if buf.len() > MAX_HEAD {
                    Err(HeadError::TooLarge)
                } else {
                    Ok(HeadStatus::Partial)
                };
            }
            Err(e) => {
                if let Some(go) = go_head_error(buf, false) {
                    return Err(HeadError::Malformed(go));
                }
                // The fault is in the unfinished last line: Go reads a line to its end (or
                // to EOF) before judging it, and names it then.
                // The same for the last complete line: a following line that starts with white
                // space would continue it.
                let head_ended =
                    buf.windows(2).any(|w| w == b"\n\n") || buf.windows(3).any(|w| w == b"\n\r\n");
                if !head_ended && buf.len() <= MAX_HEAD {
                    return Ok(HeadStatus::Partial);
                }
                return Err(HeadError::Malformed(format!(
                    "malformed HTTP response: {e}: {}",
                    first_line(buf)
                )));
            }
        };
        if len > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        let version = version_override.unwrap_or(resp.version.unwrap_or(1));
        let status = resp.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            self.interim_bytes += len;
            if self.interim_bytes > MAX_INTERIM_BYTES {
                return Err(HeadError::TooManyInterim);
            }
            return Ok(HeadStatus::Interim { status, len });
        }

        // One pass over the lines for the four headers read here (by length first, so most
        // names are passed over without a comparison); framing's values are read again only
        // when present.
        let (mut location, mut chunked_or_coded, mut says_close) = (None, false, false);
        // The Content-Length values seen: the first, and how many (framing reads them all
        // again only when there are several).
        let (mut length, mut lengths) = (None, 0usize);
        for h in resp.headers.iter() {
            let name = h.name.as_bytes();
            match name.len() {
                8 if location.is_none() && name.eq_ignore_ascii_case(b"location") => {
                    let v = String::from_utf8_lossy(h.value);
                    let v = unfold(&v);
                    let v = v.trim_matches(|c| c == ' ' || c == '\t');
                    if !v.is_empty() {
                        location = Some(v.to_string());
                    }
                }
                10 if self.keep_alive && name.eq_ignore_ascii_case(b"connection") => {
                    says_close |= lists_close(h.value);
                }
                14 if name.eq_ignore_ascii_case(b"content-length") => {
                    length = length.or(Some(h.value));
                    lengths += 1;
                }
                17 if name.eq_ignore_ascii_case(b"transfer-encoding") => chunked_or_coded = true,
                _ => {}
            }
        }
        // The values of one header, in order, without collecting them: a run allocates nothing
        // for framing unless the head is malformed.
        let values = |name: &'static str| {
            resp.headers.iter().filter(move |h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value)
        };

        let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
            Framing::Length(0)
        } else if chunked_or_coded && version >= 1 {
            transfer_encoding(values("transfer-encoding"))?
        } else if let (Some(value), 1) = (length, lengths) {
            Framing::Length(content_length(std::iter::once(value))?)
        } else if lengths > 1 {
            Framing::Length(content_length(values("content-length"))?)
        } else {
            Framing::Close
        };
        // A 101 switched the connection to another protocol: it carries no more HTTP.
        let close = !self.keep_alive || version == 0 || status == 101 || says_close;
        Ok(HeadStatus::Complete(ResponseHead { version, status, framing, location, len, close }))
    }

    /// The connection ended with `buf` holding an incomplete head (possibly empty). Go reads
    /// what arrived as lines, the last one unfinished, so a partial line can still be named as
    /// malformed.
    pub fn eof(&self, buf: &[u8]) -> HeadError {
        if let Some(m) = go_head_error(buf, true) {
            return HeadError::Malformed(m);
        }
        HeadError::Eof { read: buf.len() + self.interim_bytes }
    }

    /// Whether parsing `buf`, whose last `new` bytes have just been read, can tell more than
    /// parsing it before they came: always for a head of at most [`PARSE_ALWAYS_UP_TO`] bytes
    /// (so garbage at the start is refused at once) and past [`MAX_HEAD`]; otherwise only when
    /// a line ended in the new bytes, since a head cannot be complete before its last line
    /// ends. Parsing after every read instead is quadratic in the head's size: a peer sending
    /// a 64 KiB head a few bytes at a time makes the parser scan gigabytes. (A malformed line
    /// is then refused when it ends, at the head limit, or at EOF, not in the middle.)
    ///
    /// Past [`PARSE_ALWAYS_UP_TO`] it waits for the blank line that ends a head (or the limit,
    /// or EOF): only then can the head be complete, and a head of thousands of short lines is
    /// parsed once, not once a line.
    pub fn worth_parsing(buf: &[u8], new: usize) -> bool {
        if buf.len() <= PARSE_ALWAYS_UP_TO || buf.len() > MAX_HEAD {
            return true;
        }
        // An end whose last byte is new (it may have begun in the previous read).
        let ends_in_new = |pattern: &[u8]| {
            let from = buf.len().saturating_sub(new + pattern.len() - 1);
            buf[from..].windows(pattern.len()).any(|w| w == pattern)
        };
        ends_in_new(b"\n\n") || ends_in_new(b"\n\r\n")
    }
}

/// Heads up to this many bytes are parsed after every read (see [`HeadParser::worth_parsing`]).
pub const PARSE_ALWAYS_UP_TO: usize = 1024;

fn transfer_encoding<'a>(
    values: impl Iterator<Item = &'a [u8]> + Clone,
) -> Result<Framing, HeadError> {
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
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    for raw in values.clone() {
        // Go's textproto trims spaces and tabs, then wants 1 to 19 decimal digits (read here
        // from the bytes: no text is made of them).
        let start = raw.iter().position(|b| !ows(b)).unwrap_or(raw.len());
        let end = raw.iter().rposition(|b| !ows(b)).map_or(start, |e| e + 1);
        let t = &raw[start..end];
        let n = if t.is_empty() || t.len() > 19 || !t.iter().all(u8::is_ascii_digit) {
            None
        } else {
            // At most 19 digits: below u64::MAX, no overflow.
            let n = t.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            Some(n).filter(|&n| n <= i64::MAX as u64)
        };
        let Some(n) = n else {
            return Err(HeadError::ContentLength(format!(
                "bad Content-Length {}",
                prober_core::go_quote(raw)
            )));
        };
        match found {
            Some(prev) if prev != n => {
                let all: Vec<String> =
                    values.map(|v| prober_core::go_quote(v.trim_ascii())).collect();
                return Err(HeadError::ContentLength(format!(
                    "http: message cannot contain multiple Content-Length headers; got [{}]",
                    all.join(" ")
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

/// Whether a `Connection` header value lists the `close` token (comma-separated, case-blind,
/// space and tab around a token ignored), as Go's `httpguts.HeaderValuesContainsToken` reads
/// it: the one rule for the requests we send and the responses we read.
pub(crate) fn lists_close(value: &[u8]) -> bool {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    value.split(|&b| b == b',').any(|t| {
        let start = t.iter().position(|b| !ows(b)).unwrap_or(t.len());
        let end = t.iter().rposition(|b| !ows(b)).map_or(start, |e| e + 1);
        t[start..end].eq_ignore_ascii_case(b"close")
    })
}

/// A header value with obsolete line folding joined as Go joins it: each line break and the
/// white space around it become one space.
fn unfold(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains('\n') {
        return std::borrow::Cow::Borrowed(v);
    }
    let parts: Vec<&str> =
        v.split('\n').map(|l| l.trim_matches(|c| c == ' ' || c == '\t' || c == '\r')).collect();
    std::borrow::Cow::Owned(parts.join(" "))
}

/// The fault Go's client would name first in `buf`, a response head that httparse refused or
/// that ended early (`at_eof`: the last, unfinished line is read too), in Go's words; `None`
/// when Go would find none (in the complete lines). Follows `http.ReadResponse` and
/// `textproto.Reader.ReadMIMEHeader`.
fn go_head_error(buf: &[u8], at_eof: bool) -> Option<String> {
    let mut lines = buf.split_inclusive(|&b| b == b'\n').filter(|l| at_eof || l.ends_with(b"\n"));
    let line = |l: &[u8]| {
        let l = l.strip_suffix(b"\n").unwrap_or(l);
        l.strip_suffix(b"\r").unwrap_or(l).to_vec()
    };
    let status = line(lines.next()?);
    let Some(space) = status.iter().position(|&b| b == b' ') else {
        return Some(format!("malformed HTTP response {}", prober_core::go_quote(&status)));
    };
    let (proto, rest) = (&status[..space], &status[space + 1..]);
    let rest = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    let code = &rest[..rest.iter().position(|&b| b == b' ').unwrap_or(rest.len())];
    let code_ok = code.len() == 3
        && match code {
            [b'+', d @ ..] => d.iter().all(u8::is_ascii_digit),
            _ => code.iter().all(u8::is_ascii_digit),
        };
    if !code_ok {
        return Some(format!("malformed HTTP status code {}", prober_core::go_quote(code)));
    }
    let version_ok = match proto {
        b"HTTP/1.0" | b"HTTP/1.1" => true,
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor] => {
            major.is_ascii_digit() && minor.is_ascii_digit()
        }
        _ => false,
    };
    if !version_ok {
        return Some(format!("malformed HTTP version {}", prober_core::go_quote(proto)));
    }
    // Header lines; a line that starts with white space continues the previous one.
    let mut first = true;
    let mut pending: Option<Vec<u8>> = None;
    let check = |kv: &[u8]| -> Option<String> {
        let Some(colon) = kv.iter().position(|&b| b == b':') else {
            return Some(format!(
                "malformed MIME header: missing colon: {}",
                prober_core::go_quote(kv)
            ));
        };
        let name = &kv[..colon];
        let name_ok = !name.is_empty()
            && name.iter().all(|&b| {
                b == b' ' || b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
            });
        let value_ok = kv[colon + 1..].iter().all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f));
        if !name_ok || !value_ok {
            return Some(format!("malformed MIME header line: {}", prober_core::go_quote(kv)));
        }
        None
    };
    let mut ended = at_eof;
    for l in lines {
        let l = line(l);
        if l.is_empty() {
            ended = true;
            break; // the end of the head
        }
        if first && (l[0] == b' ' || l[0] == b'\t') {
            return Some(format!(
                "malformed MIME header initial line: {}",
                prober_core::go_quote(&l)
            ));
        }
        first = false;
        if l[0] == b' ' || l[0] == b'\t' {
            if let Some(p) = pending.as_mut() {
                p.push(b' ');
                p.extend_from_slice(l.trim_ascii());
            }
            continue;
        }
        if let Some(kv) = pending.replace(l) {
            if let Some(e) = check(&kv) {
                return Some(e);
            }
        }
    }
    // The last line is judged once the head has ended (or at EOF): until the next line starts,
    // it may still be continued by one that begins with white space, as Go's reader waits to
    // see.
    if ended { pending.and_then(|kv| check(&kv)) } else { None }
}

/// The first line of what was received, quoted and cut to 64 bytes, for error messages.
fn first_line(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len()).min(64);
    let line = String::from_utf8_lossy(&buf[..end]);
    format!("{:?}", line.trim_end_matches('\r'))
}

/// The header fields of the last response head in `head` (the bytes of a complete head, after
/// any interim responses), names and values as sent, values trimmed: for callers that check
/// headers themselves ([`prober_core::HttpSpec::keep_headers`]). Lines without a colon and
/// obsolete folded continuations are skipped.
pub fn header_fields(head: &[u8]) -> Vec<(String, String)> {
    let own = |(n, v): (&str, &str)| (n.to_string(), v.to_string());
    // A head is ASCII in practice: borrowed as it is, copied only when a byte must be replaced.
    match std::str::from_utf8(head) {
        Ok(text) => final_fields(text).map(own).collect(),
        Err(_) => final_fields(&String::from_utf8_lossy(head)).map(own).collect(),
    }
}

/// The fields of the last head in `text`, borrowed: the last block of non-empty lines (lines
/// end at `\n`, a trailing `\r` dropped), its first line (the status line) skipped.
fn final_fields(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let text = text.trim_end_matches(['\r', '\n']);
    // After the last empty line (interim responses before it): one pass over the bytes.
    let bytes = text.as_bytes();
    let (mut start, mut line) = (0, 0);
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if bytes[line..i].iter().all(|&c| c == b'\r') {
                start = i + 1;
            }
            line = i + 1;
        }
    }
    text[start..]
        .split('\n')
        .skip(1)
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.starts_with([' ', '\t']))
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n, v.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_of_the_final_head() {
        let head = b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 200 OK\r\nServer: nginx\r\nX-A:  b c \r\n\r\n";
        assert_eq!(
            header_fields(head),
            [("Server".to_string(), "nginx".to_string()), ("X-A".to_string(), "b c".to_string())]
        );
    }

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
            r#"net/http: HTTP/1.x transport connection broken: http: message cannot contain multiple Content-Length headers; got ["5" "6"]"#
        );
        for bad in ["abc", "-1", "+5", "", "5, 5", "99999999999999999999", "9223372036854775808"] {
            let e =
                parse(&format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n")).unwrap_err();
            assert!(matches!(e, HeadError::ContentLength(_)), "{bad}: {e:?}");
            assert_eq!(
                e.to_string(),
                format!(
                    "net/http: HTTP/1.x transport connection broken: bad Content-Length \"{bad}\""
                ),
            );
        }
        let e = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"net/http: HTTP/1.x transport connection broken: unsupported transfer encoding: "gzip, chunked""#
        );
        assert!(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n").is_err());
    }

    #[test]
    fn garbage_and_http09() {
        // Go's ReadResponse: the status code is checked before the version.
        let broken = |s: &str| format!("net/http: HTTP/1.x transport connection broken: {s}");
        let e = parse("this is not http\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed HTTP status code "is""#));
        let e = parse("hello\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed HTTP response "hello""#));
        assert_eq!(parse("hello"), Ok(HeadStatus::Partial), "judged when the line ends");
        assert_eq!(
            HeadParser::new().eof(b"hello").to_string(),
            broken(r#"malformed HTTP response "hello""#)
        );
        assert_eq!(
            parse("http/1.1 200 OK\r\n").unwrap_err().to_string(),
            broken(r#"malformed HTTP version "http/1.1""#)
        );
        assert_eq!(
            parse(" HTTP/1.1 200 OK\r\n").unwrap_err().to_string(),
            broken(r#"malformed HTTP status code "HTTP/1.1""#)
        );
        assert_eq!(
            parse("\x00\x01\r\n").unwrap_err().to_string(),
            broken(r#"malformed HTTP response "\x00\x01""#)
        );
        let e = parse("HTTP/1.1 200 OK\r\nJustAName\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed MIME header: missing colon: "JustAName""#));
        let e = parse("HTTP/1.1 200 OK\r\n: bar\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed MIME header line: ": bar""#));
        let e = parse("HTTP/1.1 200 OK\r\n X-Foo: bar\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed MIME header initial line: " X-Foo: bar""#));
        // A space inside a name is kept by Go (under a name nothing looks at): so here.
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nX Foo: bar\r\nContent-Length: 0\r\n\r\n").framing,
            Framing::Length(0)
        );
        // Go reads any HTTP/d.d version; two digits or none are refused.
        assert_eq!(head("HTTP/2.0 200 OK\r\n\r\n").status, 200);
        assert!(matches!(parse("HTTP/1.10 200 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/ 200 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/1.1 2000 OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        assert!(matches!(parse("HTTP/1.1 abc OK\r\n\r\n"), Err(HeadError::Malformed(_))));
        let e = parse("HTTP/1.1 200 OK\r\nX-Ok: 1\r\nBad\x01Name: x\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), broken(r#"malformed MIME header line: "Bad\x01Name: x""#));
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
        // More lines than fit without allocating: parsed again with room for all, as Go reads
        // any number of lines within the size limit.
        let many = format!("{s}X-Last: v\r\nLocation: /x\r\n\r\n");
        let Ok(HeadStatus::Complete(h)) = parse(&many) else { panic!() };
        assert_eq!(h.location.as_deref(), Some("/x"));

        let big = format!("HTTP/1.1 200 OK\r\nX-Fill: {}\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(parse(&big), Err(HeadError::TooLarge));
        assert_eq!(
            HeadError::TooLarge.to_string(),
            "net/http: server response headers exceeded 65536 bytes; aborted"
        );
        let big_complete = format!("{big}\r\n");
        assert_eq!(parse(&big_complete), Err(HeadError::TooLarge));
        let just = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD - 24));
        assert_eq!(just.len(), MAX_HEAD);
        assert!(matches!(parse(&just), Ok(HeadStatus::Complete(_))));
        let over = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD - 23));
        assert_eq!(parse(&over), Err(HeadError::TooLarge));
    }

    #[test]
    fn worth_parsing_only_when_a_head_may_have_ended() {
        let small = b"HTTP/1.1 200 OK\r\nX: a";
        assert!(HeadParser::worth_parsing(small, 1), "small heads: after every read");
        let mut big = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        big.resize(PARSE_ALWAYS_UP_TO + 10, b'a');
        assert!(!HeadParser::worth_parsing(&big, 1));
        assert!(!HeadParser::worth_parsing(&big, big.len()), "a line ended, not the head");
        big.extend_from_slice(b"\r\n");
        assert!(!HeadParser::worth_parsing(&big, 2), "one more header line");
        big.extend_from_slice(b"\r\n");
        assert!(HeadParser::worth_parsing(&big, 2), "the blank line that ends the head");
        assert!(HeadParser::worth_parsing(&big, 1), "its LF alone");
        let mut bare = big[..big.len() - 2].to_vec();
        bare.push(b'\n');
        assert!(HeadParser::worth_parsing(&bare, 1), "a bare LF ends a head too");
        big.push(b'Y');
        assert!(!HeadParser::worth_parsing(&big, 1), "body bytes after a parsed head");
        big.resize(MAX_HEAD + 1, b'a');
        assert!(HeadParser::worth_parsing(&big, 1), "over the limit: say so");
    }

    #[test]
    fn lenient_like_go() {
        assert_eq!(head("HTTP/1.1  200  OK\r\n\r\n").status, 200);
        let h = head("HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nok");
        assert_eq!((h.version, h.status, h.framing), (1, 200, Framing::Length(2)));
        assert_eq!(
            head("HTTP/0.9 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").framing,
            Framing::Close
        );
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nX-Foo : bar\r\nContent-Length: 0\r\n\r\n").framing,
            Framing::Length(0)
        );
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
    fn a_line_a_continuation_completes_is_not_judged_before_the_next_line() {
        // Found by the http_head fuzzer: alone, `Tzan a` has no colon; continued by the next
        // line it is `Tzan a bsfer-Encoding: chunked`. Go's reader waits for the next line's
        // first byte before judging a line; a head split by the network there must not fail.
        let head = "HTTP/1.1 200 OK\r\nTzan a\r\n  bsfer-Encoding: chunked\r\n\r\n";
        let cut = "HTTP/1.1 200 OK\r\nTzan a\r\n".len();
        assert_eq!(parse(&head[..cut]), Ok(HeadStatus::Partial));
        assert!(matches!(parse(head), Ok(HeadStatus::Complete(h)) if h.status == 200));
        // Not continued: refused once the head ends, and at EOF, with Go's words.
        let e = parse("HTTP/1.1 200 OK\r\nTzan a\r\n\r\n").unwrap_err();
        assert!(e.to_string().contains(r#"missing colon: "Tzan a""#), "{e}");
        let e = HeadParser::new().eof(&head.as_bytes()[..cut]);
        assert!(e.to_string().contains(r#"missing colon: "Tzan a""#), "{e}");
    }

    #[test]
    fn close_tokens_are_read_as_go_reads_them() {
        assert!(lists_close(b"close"));
        assert!(lists_close(b"Keep-Alive, \tCLOSE \t"));
        assert!(!lists_close(b"keep-alive"));
        assert!(!lists_close(b"closed, enclose"));
        // Only space and tab surround a token, not other white space.
        assert!(!lists_close("\u{a0}close".as_bytes()));
    }

    #[test]
    fn eof_wording() {
        let mut p = HeadParser::new();
        assert_eq!(p.eof(b"").to_string(), "EOF");
        assert_eq!(
            p.eof(b"HTTP/1.1 200").to_string(),
            "net/http: HTTP/1.x transport connection broken: unexpected EOF"
        );
        // The unfinished last line is read, as Go reads it.
        assert_eq!(
            p.eof(b"HTTP/1.1 2").to_string(),
            r#"net/http: HTTP/1.x transport connection broken: malformed HTTP status code "2""#
        );
        assert_eq!(
            p.eof(b"HTTP/1.1 200 OK\r\nContent-Le").to_string(),
            r#"net/http: HTTP/1.x transport connection broken: malformed MIME header: missing colon: "Content-Le""#
        );
        // Nothing more after an interim response: the response had begun.
        assert!(matches!(
            p.parse(b"HTTP/1.1 100 Continue\r\n\r\n"),
            Ok(HeadStatus::Interim { .. })
        ));
        assert_eq!(
            p.eof(b"").to_string(),
            "net/http: HTTP/1.x transport connection broken: unexpected EOF"
        );
    }

    #[test]
    fn connection_close_is_read_for_keep_alive_only() {
        let close = |parser: &mut HeadParser, head: &str| match parser.parse(head.as_bytes()) {
            Ok(HeadStatus::Complete(h)) => h.close,
            other => panic!("{other:?}"),
        };
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(!close(&mut HeadParser::keep_alive(), ok));
        assert!(close(&mut HeadParser::new(), ok), "the kubelet's path never reuses");
        let said = "HTTP/1.1 200 OK\r\nconnection: Keep-Alive, Close\r\nContent-Length: 0\r\n\r\n";
        assert!(close(&mut HeadParser::keep_alive(), said));
        let old = "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(close(&mut HeadParser::keep_alive(), old));
    }
}
