//! Server-side request head parsing, by hand: request line, then header lines up to the empty line.
//! Header names and values are kept exactly as received (byte slices into the head), in order.

/// Largest request head accepted (request line + headers + terminator).
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// A parsed request head, borrowing the received bytes.
#[derive(Debug)]
pub(crate) struct Head<'a> {
    /// The request line as received, without the line terminator.
    pub line: &'a [u8],
    pub method: &'a str,
    /// The path part of the request target (for absolute-form targets, without scheme and authority).
    pub path: &'a str,
    pub query: Query,
    /// `(name, value)` in the order received; value without surrounding spaces and tabs.
    pub headers: Vec<(&'a [u8], &'a [u8])>,
}

impl Head<'_> {
    /// The first header with this name (ASCII case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|(_, v)| *v)
    }
}

/// Decoded query parameters, in order, repeated names kept.
#[derive(Debug, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(raw: &str) -> Query {
        let pairs = raw
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) => (percent_decode(k), percent_decode(v)),
                None => (percent_decode(p), String::new()),
            })
            .collect();
        Query(pairs)
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub(crate) fn all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.0.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// RFC 3986 percent-decoding (`+` stays `+`); malformed escapes are kept literally; invalid UTF-8 is
/// replaced with U+FFFD.
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Where the head ends (index just past the empty line), searching from `from` (a resume point:
/// pass the previous buffer length minus 3). Accepts CRLF or bare LF line ends.
pub(crate) fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        if buf[i] == b'\n' {
            match buf.get(i + 1..) {
                Some([b'\n', ..]) => return Some(i + 2),
                Some([b'\r', b'\n', ..]) => return Some(i + 3),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Parses a complete head (as delimited by [`find_head_end`]). The error is a short reason.
pub(crate) fn parse_head(head: &[u8]) -> Result<Head<'_>, &'static str> {
    let mut lines = head.split(|&c| c == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let line = lines.next().ok_or("empty request")?;
    let text = std::str::from_utf8(line).map_err(|_| "request line is not UTF-8")?;
    let mut parts = text.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("malformed request line");
    };
    if method.is_empty() || target.is_empty() || !version.starts_with("HTTP/") {
        return Err("malformed request line");
    }
    let mut headers = Vec::new();
    for l in lines {
        if l.is_empty() {
            continue;
        }
        if l[0] == b' ' || l[0] == b'\t' {
            return Err("obsolete header line folding");
        }
        let colon = l.iter().position(|&c| c == b':').ok_or("header line without colon")?;
        let name = &l[..colon];
        if name.is_empty() || name.iter().any(|c| c.is_ascii_whitespace() || c.is_ascii_control()) {
            return Err("malformed header name");
        }
        headers.push((name, trim_ows(&l[colon + 1..])));
    }
    let (path, query) = split_target(target);
    Ok(Head { line, method, path, query: Query::parse(query), headers })
}

fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// Splits a request target into (path, raw query). Absolute-form targets lose scheme and authority;
/// a fragment, if a client sent one, is dropped.
fn split_target(target: &str) -> (&str, &str) {
    let mut t = target;
    if let Some(rest) = t.strip_prefix("http://").or_else(|| t.strip_prefix("https://")) {
        t = rest.find('/').map_or("/", |i| &rest[i..]);
    }
    let t = t.split_once('#').map_or(t, |(a, _)| a);
    match t.split_once('?') {
        Some((p, q)) => (p, q),
        None => (t, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_end_crlf_and_lf() {
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody", 0), Some(27));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\nHost: a\n\n", 0), Some(24));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\nHost: a\r\n", 0), None);
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r", 0), None);
    }

    #[test]
    fn parses_head_in_order() {
        let raw = b"GET /echo/headers?x=a%20b&x=c+d&y HTTP/1.1\r\nHost: h:1\r\nX-B:  two \r\nx-a:1\r\n\r\n";
        let h = parse_head(raw).unwrap();
        assert_eq!(h.line, b"GET /echo/headers?x=a%20b&x=c+d&y HTTP/1.1");
        assert_eq!(h.method, "GET");
        assert_eq!(h.path, "/echo/headers");
        assert_eq!(h.query.all("x").collect::<Vec<_>>(), ["a b", "c+d"]);
        assert_eq!(h.query.get("y"), Some(""));
        let names: Vec<_> = h.headers.iter().map(|(n, v)| (*n, *v)).collect();
        assert_eq!(names, [(&b"Host"[..], &b"h:1"[..]), (b"X-B", b"two"), (b"x-a", b"1")]);
        assert_eq!(h.header("host"), Some(&b"h:1"[..]));
    }

    #[test]
    fn absolute_form_target() {
        let h = parse_head(b"GET http://example.com:80/ok?a=1#frag HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(h.path, "/ok");
        assert_eq!(h.query.get("a"), Some("1"));
        let h = parse_head(b"GET http://example.com HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(h.path, "/");
    }

    #[test]
    fn rejects_malformed() {
        assert!(parse_head(b"GET /\r\n\r\n").is_err());
        assert!(parse_head(b"GET / HTTP/1.1 extra\r\n\r\n").is_err());
        assert!(parse_head(b"GET / HTTP/1.1\r\nNoColon\r\n\r\n").is_err());
        assert!(parse_head(b"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n").is_err());
        assert!(parse_head(b"GET / HTTP/1.1\r\nBad Name: b\r\n\r\n").is_err());
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%2Fb%3f%"), "a/b?%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("http%3A%2F%2F%5B%3A%3A1"), "http://[::1");
    }
}
