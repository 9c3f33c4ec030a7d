//! A small, strict parser for the URLs a probe can fetch (`http://` and `https://`), and
//! resolution of `Location` references against them (RFC 3986 section 5.2).
//!
//! Strict on purpose: anything that could smuggle bytes into the request line or the `Host`
//! header (spaces, controls, non-ASCII, `\`) is refused with a clear error instead of being
//! "fixed up".

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

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
    /// Host name in lower case, or an IP literal without brackets.
    host: String,
    port: u16,
    /// Whether the port was written in the URL (then it is also written in `Host`).
    port_explicit: bool,
    /// Path and query as written (percent-encoding kept), always starting with `/`.
    target: String,
}

/// Why a URL or reference was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlError {
    Empty,
    MissingScheme,
    UnsupportedScheme(String),
    MissingHost,
    InvalidHost(String),
    InvalidPort(String),
    UserInfo,
    InvalidCharacter(char),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::Empty => f.write_str("URL is empty"),
            UrlError::MissingScheme => f.write_str("URL has no scheme (expected http:// or https://)"),
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
        }
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parses an absolute URL. Fragments are dropped (they are never sent).
    pub fn parse(input: &str) -> Result<Url, UrlError> {
        if input.is_empty() {
            return Err(UrlError::Empty);
        }
        check_chars(input)?;
        let (scheme_str, rest) = input.split_once("://").ok_or(UrlError::MissingScheme)?;
        let scheme = parse_scheme(scheme_str)?;
        Url::parse_authority_and_rest(scheme, rest)
    }

    /// Resolves `reference` (a `Location` value) against `self` as the base.
    pub fn join(&self, reference: &str) -> Result<Url, UrlError> {
        let reference = reference.trim_matches(|c| c == ' ' || c == '\t');
        if reference.is_empty() {
            return Err(UrlError::Empty);
        }
        check_chars(reference)?;
        let reference = strip_fragment(reference);
        if let Some(colon) = reference.find(':') {
            let before = &reference[..colon];
            let is_scheme = !before.is_empty()
                && before.starts_with(|c: char| c.is_ascii_alphabetic())
                && before.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !before.contains('/');
            if is_scheme {
                let rest = &reference[colon + 1..];
                let scheme = parse_scheme(before)?;
                let rest = rest.strip_prefix("//").ok_or(UrlError::MissingHost)?;
                return Url::parse_authority_and_rest(scheme, rest);
            }
        }
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse_authority_and_rest(self.scheme, rest);
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
        let rest = strip_fragment(rest);
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err(UrlError::UserInfo);
        }
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
        Ok(Url { scheme, host, port, port_explicit, target })
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Host name (lower case) or IP literal without brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host as an IP address, when it is a literal.
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: path and query, e.g. `/healthz?full=1`.
    pub fn request_target(&self) -> &str {
        &self.target
    }

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

    /// The value of the `Host` header for this URL: host, bracketed if IPv6, with the port when
    /// the URL spelled one out (as Go's client does).
    pub fn host_header(&self) -> String {
        let host = self.host_for_authority();
        if self.port_explicit { format!("{host}:{}", self.port) } else { host }
    }

    fn host_for_authority(&self) -> String {
        if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() }
    }

    /// Same scheme, host and port.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.scheme == other.scheme && self.host == other.host && self.port == other.port
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.host_for_authority())?;
        if self.port_explicit {
            write!(f, ":{}", self.port)?;
        }
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
        return host
            .parse::<Ipv6Addr>()
            .map(|ip| ip.to_string())
            .map_err(|_| UrlError::InvalidHost(host.into()));
    }
    let ok = host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if !ok {
        return Err(UrlError::InvalidHost(host.into()));
    }
    Ok(host.to_ascii_lowercase())
}

fn parse_port(p: &str) -> Result<u16, UrlError> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UrlError::InvalidPort(p.into()));
    }
    match p.parse::<u32>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
        _ => Err(UrlError::InvalidPort(p.into())),
    }
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
        assert_eq!(u.host_header(), "example.com");
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
    fn origins() {
        let a = Url::parse("http://h:80/").unwrap();
        assert!(a.same_origin(&Url::parse("http://h/x").unwrap()));
        assert!(!a.same_origin(&Url::parse("https://h:80/").unwrap()));
        assert!(!a.same_origin(&Url::parse("http://h:81/").unwrap()));
    }
}
