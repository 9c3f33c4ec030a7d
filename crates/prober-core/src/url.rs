//! A small, strict parser for the URLs a probe can fetch (`http://` and `https://`), and
//! resolution of `Location` references against them (RFC 3986 section 5.2).
//!
//! Strict on purpose for the URLs a user gives: anything that could smuggle bytes into the
//! request line or the `Host` header (spaces, controls, non-ASCII, `\`) is refused with a
//! clear error instead of being "fixed up".
//!
//! `Location` references are read as Go's `net/url` reads them, because the kubelet follows
//! redirects with Go's client: spaces, non-ASCII bytes and other characters a path may not
//! hold are percent-encoded (as `URL.EscapedPath` encodes them), a bad percent escape in the
//! path is an error, and user information is accepted (and, unlike Go, its credentials are not
//! sent). Hosts and ports keep the text they were written with, because the kubelet compares
//! hosts as text (`localhost` and `LOCALHOST` are two hosts) and sends that text in `Host`;
//! the host used to connect is normalised (lower case, canonical IPv6, no trailing dot).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
/// The two schemes a probe URL may have.
pub enum Scheme {
    /// Plain HTTP (default port 80).
    Http,
    /// HTTP over TLS (default port 443).
    Https,
}

impl Scheme {
    /// The scheme as written in URLs: `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The port used when the URL names none: 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// A parsed absolute `http`/`https` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    scheme: Scheme,
    /// Host name in lower case, or an IP literal without brackets: what is resolved and
    /// connected to.
    host: String,
    /// Host and port as written (without user information): the text of `Host` and of
    /// messages, and what redirects compare.
    authority: String,
    port: u16,
    /// Whether the port was written in the URL (then it is also written in `Host`).
    port_explicit: bool,
    /// Path and query as written (percent-encoding kept), always starting with `/`.
    target: String,
}

/// Why a URL or reference was refused. May grow: match with a wildcard arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// The text is empty.
    Empty,
    /// No `scheme://` at the start.
    MissingScheme,
    /// A scheme other than `http` or `https` (the scheme as given).
    UnsupportedScheme(String),
    /// Nothing between `scheme://` and the path.
    MissingHost,
    /// The host is not a host name or an IP literal (the host as given).
    InvalidHost(String),
    /// The port is not a number from 1 to 65535 (the port as given).
    InvalidPort(String),
    /// `user@` or `user:password@` in a URL the user gave (not supported: credentials would
    /// be sent in the clear to whatever the URL names).
    UserInfo,
    /// A space, control, non-ASCII or other character a URL may not hold.
    InvalidCharacter(char),
    /// A `%` not followed by two hex digits in a reference's path: the reference and the escape.
    InvalidEscape(String, String),
    /// A relative reference whose first path segment holds a colon (`1a:b`, `x%y://z`): Go
    /// refuses it, since it would read as a scheme. The reference as given.
    ColonInFirstSegment(String),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::Empty => f.write_str("URL is empty"),
            UrlError::MissingScheme => {
                f.write_str("URL has no scheme (expected http:// or https://)")
            }
            UrlError::UnsupportedScheme(s) => {
                write!(f, "unsupported URL scheme {s:?} (expected http or https)")
            }
            UrlError::MissingHost => f.write_str("URL has no host"),
            UrlError::InvalidHost(h) => write!(f, "invalid host {h:?} in URL"),
            UrlError::InvalidPort(p) => {
                write!(f, "invalid port {p:?} in URL (expected 1 to 65535)")
            }
            UrlError::UserInfo => f.write_str("user information in URLs is not supported"),
            UrlError::InvalidCharacter(c) => write!(f, "invalid character {c:?} in URL"),
            // Go's wording: `parse "/ok%zz": invalid URL escape "%zz"`.
            UrlError::InvalidEscape(r, e) => write!(f, "parse {r:?}: invalid URL escape {e:?}"),
            UrlError::ColonInFirstSegment(r) => {
                write!(f, "parse {r:?}: first path segment in URL cannot contain colon")
            }
        }
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parses an absolute URL. Fragments are dropped (they are never sent).
    ///
    /// # Errors
    ///
    /// A [`UrlError`] saying what is wrong.
    pub fn parse(input: &str) -> Result<Url, UrlError> {
        if input.is_empty() {
            return Err(UrlError::Empty);
        }
        check_chars(input)?;
        let (scheme_str, rest) = input.split_once("://").ok_or(UrlError::MissingScheme)?;
        let scheme = parse_scheme(scheme_str)?;
        Url::parse_authority_and_rest(scheme, rest)
    }

    /// The URL the kubelet probes for an `httpGet` action (its `formatURL`): `path` is read as
    /// Go's `url.Parse` reads it (so `//x` is an authority the host replaces, and the request
    /// goes to `/`), and when that fails (a bad percent escape) the whole text is taken as the
    /// path and encoded (`/x%zz` is requested as `/x%25zz`). Spaces and non-ASCII in the path
    /// are percent-encoded (`/health check` is requested as `/health%20check`). `host` must be
    /// a host name or an IP literal (IPv6 without brackets).
    ///
    /// # Errors
    ///
    /// [`UrlError::InvalidCharacter`] for a control character in `path`, or another
    /// [`UrlError`] when `host` is not a host.
    pub fn for_http_get(
        scheme: Scheme,
        host: &str,
        port: u16,
        path: &str,
    ) -> Result<Url, UrlError> {
        if let Some(c) = path.chars().find(|c| c.is_ascii_control()) {
            return Err(UrlError::InvalidCharacter(c));
        }
        // An IPv6 zone is written `%25` in a URL.
        let authority = if host.contains(':') {
            format!("[{}]:{port}", host.replacen('%', "%25", 1))
        } else {
            format!("{host}:{port}")
        };
        // url.Parse: a scheme and an authority (`http://other/x`, `//other/x`) are dropped,
        // the probe's scheme and host replace them; the path, query and fragment follow.
        let after_scheme = scheme_of(path)
            .filter(|s| path[s.len()..].starts_with("://"))
            .map(|s| &path[s.len() + 1..]);
        let rest = match after_scheme.unwrap_or(path).strip_prefix("//") {
            Some(after) => &after[after.find(['/', '?', '#']).unwrap_or(after.len())..],
            None => path,
        };
        let target = match escape_reference(rest) {
            Ok(escaped) => {
                let escaped = strip_fragment(&escaped);
                if escaped.is_empty() || escaped.starts_with('?') {
                    format!("/{escaped}")
                } else if escaped.starts_with('/') {
                    escaped.to_string()
                } else {
                    format!("/{escaped}") // Go's URL.String adds the slash before a relative path
                }
            }
            Err(_) => {
                // Not a URL: the text is the path, every byte that needs it encoded.
                let mut out = String::with_capacity(path.len() + 8);
                if !path.starts_with('/') {
                    out.push('/');
                }
                for &b in path.as_bytes() {
                    push_escaped(&mut out, b, |b| !path_byte_unescaped(b));
                }
                out
            }
        };
        Url::parse(&format!("{}://{authority}{target}", scheme.as_str()))
    }

    /// Resolves `reference` (a `Location` value) against `self` as the base, reading it as Go
    /// does (see the module docs).
    ///
    /// # Errors
    ///
    /// A [`UrlError`] for a reference Go would refuse (a bad percent escape in its path, a
    /// control character) or one that leads to a URL a probe cannot fetch (another scheme, no
    /// host).
    pub fn join(&self, reference: &str) -> Result<Url, UrlError> {
        let reference = reference.trim_matches(|c| c == ' ' || c == '\t');
        if reference.is_empty() {
            return Err(UrlError::Empty);
        }
        if let Some(c) = reference.chars().find(|c| c.is_ascii_control()) {
            return Err(UrlError::InvalidCharacter(c));
        }
        // As Go's `url.Parse`: without a scheme, a first path segment with a colon is refused
        // (before any escape in it is looked at).
        let bare = strip_fragment(reference);
        let bare = &bare[..bare.find('?').unwrap_or(bare.len())];
        if !bare.starts_with('/') && scheme_of(bare).is_none() {
            let first = &bare[..bare.find('/').unwrap_or(bare.len())];
            if first.contains(':') {
                return Err(UrlError::ColonInFirstSegment(reference.to_string()));
            }
        }
        let escaped = escape_reference(reference)?;
        let reference = strip_fragment(&escaped);
        if let Some(colon) = reference.find(':') {
            let before = &reference[..colon];
            if scheme_of(reference) == Some(before) {
                let rest = &reference[colon + 1..];
                let scheme = parse_scheme(before)?;
                let rest = rest.strip_prefix("//").ok_or(UrlError::MissingHost)?;
                return Url::parse_authority_and_rest_with(scheme, rest, true);
            }
        }
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse_authority_and_rest_with(self.scheme, rest, true);
        }
        let (path, query) = match reference.find('?') {
            Some(q) => (&reference[..q], Some(&reference[q..])),
            None => (reference, None),
        };
        let base_path = self.path();
        let merged = if path.is_empty() {
            // Same path; a query-only reference replaces the query.
            let q = query.unwrap_or_else(|| self.query_with_mark());
            return Ok(Url { target: format!("{base_path}{q}"), ..self.clone() });
        } else if path.starts_with('/') {
            remove_dot_segments(path)
        } else {
            let dir = &base_path[..=base_path.rfind('/').unwrap_or(0)];
            remove_dot_segments(&format!("{dir}{path}"))
        };
        Ok(Url { target: format!("{merged}{}", query.unwrap_or("")), ..self.clone() })
    }

    fn parse_authority_and_rest(scheme: Scheme, rest: &str) -> Result<Url, UrlError> {
        Url::parse_authority_and_rest_with(scheme, rest, false)
    }

    /// `user_info` says whether `user:password@` may precede the host (it is dropped).
    fn parse_authority_and_rest_with(
        scheme: Scheme,
        rest: &str,
        user_info: bool,
    ) -> Result<Url, UrlError> {
        let rest = strip_fragment(rest);
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = match authority.rsplit_once('@') {
            Some((_, host_port)) if user_info => host_port,
            Some(_) => return Err(UrlError::UserInfo),
            None => authority,
        };
        check_chars(authority)?;
        let (host, port_str) = split_host_port(authority)?;
        let host = parse_host(host)?;
        let (port, port_explicit) = match port_str {
            None => (scheme.default_port(), false),
            Some(p) => (parse_port(p)?, true),
        };
        let target = if tail.starts_with('?') || tail.is_empty() {
            format!("/{tail}")
        } else {
            tail.to_string()
        };
        Ok(Url { scheme, host, authority: authority.to_string(), port, port_explicit, target })
    }

    /// The URL's scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Host name (lower case) or IP literal without brackets (with `%zone` for a zoned IPv6
    /// address): what to resolve and connect to.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host as written, without brackets and port: what the kubelet's redirect check
    /// compares (Go's `URL.Hostname`).
    pub fn host_text(&self) -> &str {
        match self.authority.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(rest),
            None => self.authority.rsplit_once(':').map_or(&self.authority[..], |(h, _)| h),
        }
    }

    /// The host as an IP address, when it is a literal without a zone (`127.0.0.1.`, with its
    /// dot, is a name).
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }

    /// The port to connect to: the one written, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: path and query, e.g. `/healthz?full=1`.
    pub fn request_target(&self) -> &str {
        &self.target
    }

    /// The path of the request target, without the query.
    pub fn path(&self) -> &str {
        match self.target.find('?') {
            Some(q) => &self.target[..q],
            None => &self.target,
        }
    }

    fn query_with_mark(&self) -> &str {
        match self.target.find('?') {
            Some(q) => &self.target[q..],
            None => "",
        }
    }

    /// The value of the `Host` header for this URL: host and port as written in the URL (as
    /// Go's client sends them).
    pub fn host_header(&self) -> String {
        self.authority.clone()
    }

    /// Same scheme, host and port.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.scheme == other.scheme && self.host == other.host && self.port == other.port
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.authority)?;
        f.write_str(&self.target)
    }
}

fn check_chars(s: &str) -> Result<(), UrlError> {
    match s.chars().find(|&c| !c.is_ascii_graphic() || c == '\\') {
        Some(c) => Err(UrlError::InvalidCharacter(c)),
        None => Ok(()),
    }
}

fn strip_fragment(s: &str) -> &str {
    s.split_once('#').map_or(s, |(a, _)| a)
}

fn parse_scheme(s: &str) -> Result<Scheme, UrlError> {
    match s.to_ascii_lowercase().as_str() {
        "http" => Ok(Scheme::Http),
        "https" => Ok(Scheme::Https),
        "" => Err(UrlError::MissingScheme),
        other => Err(UrlError::UnsupportedScheme(other.to_string())),
    }
}

fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), UrlError> {
    if authority.is_empty() {
        return Err(UrlError::MissingHost);
    }
    if let Some(rest) = authority.strip_prefix('[') {
        let close = rest.find(']').ok_or_else(|| UrlError::InvalidHost(authority.into()))?;
        let host = &rest[..close];
        let after = &rest[close + 1..];
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((host, Some(p))),
                None => Err(UrlError::InvalidHost(authority.into())),
            },
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Ok((h, Some(p))),
        None => Ok((authority, None)),
    }
}

fn parse_host(host: &str) -> Result<String, UrlError> {
    if host.is_empty() {
        return Err(UrlError::MissingHost);
    }
    if host.contains(':') {
        // An IPv6 zone (`[fe80::1%25eth0]`, RFC 6874) is kept for the resolver, which turns it
        // into the address's scope.
        let (addr, zone) = match host.split_once("%25") {
            Some((a, z))
                if !z.is_empty()
                    && z.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)) =>
            {
                (a, Some(z))
            }
            Some(_) => return Err(UrlError::InvalidHost(host.into())),
            None => (host, None),
        };
        let ip = addr.parse::<Ipv6Addr>().map_err(|_| UrlError::InvalidHost(host.into()))?;
        return Ok(match zone {
            Some(z) => format!("{ip}%{z}"),
            None => ip.to_string(),
        });
    }
    // One trailing dot (an absolute name) is allowed and kept: the resolver gets the name as
    // written, as Go's does.
    let name = host.strip_suffix('.').unwrap_or(host);
    let ok = name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if !ok {
        return Err(UrlError::InvalidHost(host.into()));
    }
    Ok(host.to_ascii_lowercase())
}

/// A port of decimal digits; leading zeros are allowed, as Go allows them (`:018011`).
fn parse_port(p: &str) -> Result<u16, UrlError> {
    let digits = p.trim_start_matches('0');
    if p.is_empty() || digits.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UrlError::InvalidPort(p.into()));
    }
    match digits.parse::<u32>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
        _ => Err(UrlError::InvalidPort(p.into())),
    }
}

/// The scheme a reference starts with (`http` of `http://x`), as Go's `getScheme` reads it: a
/// letter, then letters, digits, `+`, `-` or `.`, up to a colon; `None` when another character
/// comes first.
fn scheme_of(reference: &str) -> Option<&str> {
    let colon = reference.find(':')?;
    let before = &reference[..colon];
    let ok = before.starts_with(|c: char| c.is_ascii_alphabetic())
        && before.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    ok.then_some(before)
}

/// A `Location` reference with its path encoded as Go's `URL.EscapedPath` sends it, and the
/// bytes a request line cannot carry (spaces, non-ASCII) encoded in its query. The scheme and
/// authority are left as written (the host is checked when it is parsed).
fn escape_reference(reference: &str) -> Result<std::borrow::Cow<'_, str>, UrlError> {
    // Where the path starts: after `scheme://authority` or `//authority`, else at once.
    let after_scheme = match reference.find("://") {
        Some(i) if !reference[..i].contains(['/', '?', '#']) => Some(i + 3),
        _ => reference.starts_with("//").then_some(2),
    };
    let path_start = match after_scheme {
        Some(a) => a + reference[a..].find(['/', '?', '#']).unwrap_or(reference.len() - a),
        None => 0,
    };
    let rest = &reference[path_start..];
    let path_end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (path, tail) = rest.split_at(path_end);
    let (query, fragment) = match tail.strip_prefix('?') {
        Some(q) => q.split_at(q.find('#').unwrap_or(q.len())),
        None => ("", tail),
    };
    let unescaped =
        unescape_path(path).map_err(|e| UrlError::InvalidEscape(reference.into(), e))?;
    let path_ok = path.bytes().all(valid_encoded_path_byte);
    let query_ok = query.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    if path_ok && query_ok {
        return Ok(std::borrow::Cow::Borrowed(reference));
    }
    let mut out = String::with_capacity(reference.len() + 16);
    out.push_str(&reference[..path_start]);
    if path_ok {
        out.push_str(path);
    } else {
        for b in unescaped {
            push_escaped(&mut out, b, |b| !path_byte_unescaped(b));
        }
    }
    if tail.starts_with('?') {
        out.push('?');
        for &b in query.as_bytes() {
            push_escaped(&mut out, b, |b| !b.is_ascii_graphic() || b == b'\\');
        }
    }
    out.push_str(fragment);
    Ok(std::borrow::Cow::Owned(out))
}

/// Go's `shouldEscape(c, encodePath) == false`: bytes a path carries as they are.
fn path_byte_unescaped(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b)
}

/// Go's `validEncoded(s, encodePath)` for one byte: a path made only of these is sent as
/// written; one with any other byte is decoded and encoded again.
fn valid_encoded_path_byte(b: u8) -> bool {
    path_byte_unescaped(b) || b"!'()*[]%".contains(&b)
}

fn push_escaped(out: &mut String, b: u8, escape: impl Fn(u8) -> bool) {
    if escape(b) {
        out.push_str(&format!("%{b:02X}"));
    } else {
        out.push(char::from(b));
    }
}

/// `%XX` escapes decoded, the other bytes as they are: the one strict decoder for userinfo,
/// paths and names (Go's `url.PathUnescape` rule for escapes). `None` when an escape is not
/// `%` and two hex digits: a sign is not a digit, though `u8::from_str_radix` takes one
/// (`%+1` would be the byte 0x01).
pub fn percent_decode(s: &[u8]) -> Option<Vec<u8>> {
    let hex = |c: Option<&u8>| c.and_then(|&c| char::from(c).to_digit(16));
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let value = hex(s.get(i + 1))? << 4 | hex(s.get(i + 2))?;
            out.push(u8::try_from(value).ok()?);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The bytes of a percent-encoded path, or the first bad escape (`%zz`, `%4`) as Go quotes it.
fn unescape_path(path: &str) -> Result<Vec<u8>, String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            let Some(hex) = hex else {
                let end = (i + 3).min(bytes.len());
                return Err(String::from_utf8_lossy(&bytes[i..end]).into_owned());
            };
            let text = std::str::from_utf8(hex).unwrap_or("00");
            out.push(u8::from_str_radix(text, 16).unwrap_or(0));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// RFC 3986 section 5.2.4.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colon_in_a_relative_first_segment_is_refused_as_go_refuses_it() {
        let base = Url::parse("http://h/a/b").unwrap();
        for r in ["1a:b/ok", "HpTp%S://x", "_x:y", "x%y:z?q#f"] {
            assert_eq!(base.join(r), Err(UrlError::ColonInFirstSegment(r.into())), "{r}");
        }
        assert_eq!(
            base.join("1a:b").unwrap_err().to_string(),
            r#"parse "1a:b": first path segment in URL cannot contain colon"#
        );
        // A colon after the first slash, or in a scheme, is something else.
        assert_eq!(base.join("./a:b").unwrap().request_target(), "/a/a:b");
        assert_eq!(base.join("/x:y").unwrap().request_target(), "/x:y");
        assert!(matches!(base.join("ftp://h/"), Err(UrlError::UnsupportedScheme(_))));
    }

    #[test]
    fn parses_the_kubelet_forms() {
        // TestFormatURL (H43): the kubelet always writes host:port.
        assert_eq!(Url::parse("http://localhost:93").unwrap().to_string(), "http://localhost:93/");
        assert_eq!(
            Url::parse("https://localhost:93/path").unwrap().to_string(),
            "https://localhost:93/path"
        );
        let u = Url::parse("http://localhost:93?foo").unwrap();
        assert_eq!(u.request_target(), "/?foo");
        let u = Url::parse("https://localhost:93/path?bar").unwrap();
        assert_eq!(u.request_target(), "/path?bar");
        assert_eq!(u.host_header(), "localhost:93");
    }

    #[test]
    fn ipv6_and_defaults() {
        let u = Url::parse("http://[::1]:8080/x").unwrap();
        assert_eq!(u.host(), "::1");
        assert_eq!(u.port(), 8080);
        assert_eq!(u.host_header(), "[::1]:8080");
        assert!(u.ip().is_some());
        let u = Url::parse("HTTPS://Example.COM").unwrap();
        assert_eq!(u.port(), 443);
        assert_eq!(u.host(), "example.com");
        // As written, as Go sends it.
        assert_eq!(u.host_header(), "Example.COM");
        assert_eq!(u.host_text(), "Example.COM");
        let u = Url::parse("http://[0:0:0:0:0:0:0:1]:018011/").unwrap();
        assert_eq!((u.host(), u.host_text(), u.port()), ("::1", "0:0:0:0:0:0:0:1", 18011));
        assert_eq!(u.host_header(), "[0:0:0:0:0:0:0:1]:018011");
        let u = Url::parse("http://localhost./x").unwrap();
        assert_eq!(
            (u.host(), u.host_text(), u.to_string().as_str()),
            ("localhost.", "localhost.", "http://localhost./x")
        );
        let u = Url::parse("http://127.0.0.1./").unwrap();
        assert_eq!((u.host(), u.ip()), ("127.0.0.1.", None), "with its dot, a name");
        let u = Url::parse("http://[fe80::1%25eth0]:8080/").unwrap();
        assert_eq!(
            (u.host(), u.ip(), u.host_header().as_str()),
            ("fe80::1%eth0", None, "[fe80::1%25eth0]:8080")
        );
        assert!(Url::parse("http://[::1%25]/").is_err());
        assert_eq!(u.request_target(), "/");
    }

    #[test]
    fn refuses_bad_input_clearly() {
        assert_eq!(Url::parse(""), Err(UrlError::Empty));
        assert_eq!(Url::parse("localhost:80"), Err(UrlError::MissingScheme));
        assert_eq!(Url::parse("ftp://x/"), Err(UrlError::UnsupportedScheme("ftp".into())));
        assert_eq!(Url::parse("http:///x"), Err(UrlError::MissingHost));
        assert_eq!(Url::parse("http://:80/x"), Err(UrlError::MissingHost));
        assert_eq!(Url::parse("http://h:0/"), Err(UrlError::InvalidPort("0".into())));
        assert_eq!(Url::parse("http://h:65536/"), Err(UrlError::InvalidPort("65536".into())));
        assert_eq!(Url::parse("http://h:-1/"), Err(UrlError::InvalidPort("-1".into())));
        assert_eq!(Url::parse("http://u:p@h/"), Err(UrlError::UserInfo));
        assert_eq!(Url::parse("http://h/a b"), Err(UrlError::InvalidCharacter(' ')));
        assert_eq!(Url::parse("http://h/a\r\nX: y"), Err(UrlError::InvalidCharacter('\r')));
        assert!(matches!(Url::parse("http://[::1/"), Err(UrlError::InvalidHost(_))));
        assert!(matches!(Url::parse("http://bad host/"), Err(UrlError::InvalidCharacter(' '))));
        assert!(matches!(Url::parse("http://a..b/"), Err(UrlError::InvalidHost(_))));
        let msg = Url::parse("gopher://x").unwrap_err().to_string();
        assert!(msg.contains("unsupported URL scheme"), "{msg}");
    }

    #[test]
    fn joins_references() {
        let base = Url::parse("http://127.0.0.1:8080/a/b/c?q=1").unwrap();
        let j = |r: &str| base.join(r).unwrap().to_string();
        assert_eq!(j("/new"), "http://127.0.0.1:8080/new");
        assert_eq!(j("d"), "http://127.0.0.1:8080/a/b/d");
        assert_eq!(j("../d?x"), "http://127.0.0.1:8080/a/d?x");
        assert_eq!(j("?z"), "http://127.0.0.1:8080/a/b/c?z");
        assert_eq!(j("//other:81/p"), "http://other:81/p");
        assert_eq!(j("https://127.0.0.1:9443/s"), "https://127.0.0.1:9443/s");
        assert_eq!(j("/x#frag"), "http://127.0.0.1:8080/x");
        assert_eq!(j("./"), "http://127.0.0.1:8080/a/b/");
        assert!(base.join("http://[::1").is_err());
        assert!(base.join("").is_err());
        assert!(base.join("ftp://x/").is_err());
    }

    #[test]
    fn http_get_urls_as_the_kubelet_builds_them() {
        let u = |path: &str| {
            Url::for_http_get(Scheme::Http, "10.0.0.1", 8080, path)
                .map(|u| u.request_target().to_string())
        };
        assert_eq!(u("/healthz").unwrap(), "/healthz");
        assert_eq!(u("healthz").unwrap(), "/healthz");
        assert_eq!(u("").unwrap(), "/");
        assert_eq!(u("/health check").unwrap(), "/health%20check");
        assert_eq!(u("/caf\u{e9}").unwrap(), "/caf%C3%A9");
        assert_eq!(u("//x").unwrap(), "/");
        assert_eq!(u("//x/y?z").unwrap(), "/y?z");
        assert_eq!(u("/x%zz").unwrap(), "/x%25zz");
        assert_eq!(u("/x%41?q=1#frag").unwrap(), "/x%41?q=1");
        assert_eq!(u("/a?b c").unwrap(), "/a?b%20c");
        assert_eq!(u("/a?b\\c").unwrap(), "/a?b%5Cc");
        assert_eq!(u("http://other:1/x?y").unwrap(), "/x?y");
        let zoned = Url::for_http_get(Scheme::Http, "fe80::1%eth0", 80, "/").unwrap();
        assert_eq!(zoned.host_header(), "[fe80::1%25eth0]:80");
        assert!(u("/a\nb").is_err());
        let v6 = Url::for_http_get(Scheme::Https, "::1", 443, "/").unwrap();
        assert_eq!(v6.to_string(), "https://[::1]:443/");
    }

    #[test]
    fn joins_references_as_go_reads_them() {
        let base = Url::parse("http://127.0.0.1:8080/a/b").unwrap();
        let j = |r: &str| base.join(r).map(|u| u.to_string());
        assert_eq!(j("/a b").unwrap(), "http://127.0.0.1:8080/a%20b");
        assert_eq!(j("/caf\u{e9}").unwrap(), "http://127.0.0.1:8080/caf%C3%A9");
        // Valid escapes and sub-delimiters are kept as written; once a byte must be encoded,
        // the path is decoded and encoded again, as Go's EscapedPath does.
        assert_eq!(j("/x%41!(y)").unwrap(), "http://127.0.0.1:8080/x%41!(y)");
        assert_eq!(j("/x%41!\\").unwrap(), "http://127.0.0.1:8080/xA%21%5C");
        assert_eq!(j("/q?a b").unwrap(), "http://127.0.0.1:8080/q?a%20b");
        assert_eq!(
            j("/q?bad%zz").unwrap(),
            "http://127.0.0.1:8080/q?bad%zz",
            "queries are not checked"
        );
        let e = base.join("/ok%zz").unwrap_err();
        assert_eq!(e.to_string(), r#"parse "/ok%zz": invalid URL escape "%zz""#);
        assert_eq!(
            base.join("/%4").unwrap_err().to_string(),
            r#"parse "/%4": invalid URL escape "%4""#
        );
        assert!(matches!(base.join("/a\x01"), Err(UrlError::InvalidCharacter('\x01'))));
        // User information is accepted and dropped; hosts keep their text.
        let u = base.join("http://u:p@LOCALHOST:8080/ok").unwrap();
        assert_eq!(
            (u.host(), u.host_text(), u.to_string().as_str()),
            ("localhost", "LOCALHOST", "http://LOCALHOST:8080/ok")
        );
        assert!(matches!(base.join("//bad host/"), Err(UrlError::InvalidCharacter(' '))));
        assert_eq!(j("//h:08080/").unwrap(), "http://h:08080/");
    }

    #[test]
    fn origins() {
        let a = Url::parse("http://h:80/").unwrap();
        assert!(a.same_origin(&Url::parse("http://h/x").unwrap()));
        assert!(!a.same_origin(&Url::parse("https://h:80/").unwrap()));
        assert!(!a.same_origin(&Url::parse("http://h:81/").unwrap()));
    }
}
