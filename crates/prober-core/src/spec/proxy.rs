//! HTTP probes through an HTTP proxy ([`HttpProxy`], [`ProbeSpec::set_http_proxy`](super::ProbeSpec::set_http_proxy)): which
//! proxy a hop goes through (per scheme, less a no-proxy list read as Go's `NO_PROXY`), its
//! credentials (a [`Secret`], sent as `Proxy-Authorization: Basic`) and the headers of the
//! `CONNECT` request that opens a tunnel for `https://`.
//!
//! The wire side is `prober-http`'s: an `http://` URL is requested from the proxy in absolute
//! form (`GET http://host/path HTTP/1.1`), an `https://` one through a `CONNECT host:port`
//! tunnel and TLS inside it, as Go's `http.Transport` does. The target's name is resolved by
//! the proxy, not here.

use std::fmt;
use std::net::IpAddr;

use base64::Engine as _;

use super::{SpecError, validate_header};
use crate::allow::IpNet;
use crate::secret::Secret;
use crate::url::{Scheme, Url};

/// The most entries of a no-proxy list (its text is at most 64 KiB).
pub const MAX_NO_PROXY_ENTRIES: usize = 1024;
/// The most headers of the `CONNECT` request.
pub const MAX_CONNECT_HEADERS: usize = 64;

/// One proxy server: where it listens and its credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyServer {
    host: String,
    port: u16,
    /// `Basic base64(user:password)`, from the proxy URL's user information.
    auth: Option<Secret>,
}

impl ProxyServer {
    /// Reads a proxy URL: `http://[user[:password]@]host[:port][/]`, or `host[:port]` (read as
    /// `http://`, as Go reads `HTTP_PROXY`). The port is 80 when none is given. User and
    /// password are percent-decoded, as Go's `net/url` decodes them.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for another scheme (`https://` and `socks5://` proxies
    /// are not supported), a path, a bad host or port. The message never quotes the user
    /// information.
    pub fn parse(text: &str) -> Result<ProxyServer, SpecError> {
        let bad = |why: &str| SpecError::InvalidRequest(format!("proxy URL: {why}"));
        let text = text.trim();
        let rest = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) if scheme.len() <= 16 => {
                return Err(bad(&format!("scheme {scheme:?} is not supported (http:// only)")));
            }
            Some(_) => return Err(bad("scheme is not supported (http:// only)")),
            None => text,
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains(['/', '?', '#']) {
            return Err(bad("a proxy URL has no path, query or fragment"));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let auth = match userinfo {
            Some(u) => {
                let (user, pass) = u.split_once(':').unwrap_or((u, ""));
                let user = percent_decode(user).ok_or_else(|| bad("bad escape in user"))?;
                let pass = percent_decode(pass).ok_or_else(|| bad("bad escape in password"))?;
                let raw = format!("{user}:{pass}");
                let b64 = base64::engine::general_purpose::STANDARD.encode(raw.as_bytes());
                Some(Secret::new(format!("Basic {b64}")))
            }
            None => None,
        };
        // Read through the URL parser, which checks the host and port as for any target.
        let url = Url::parse(&format!("http://{hostport}/"))
            .map_err(|e| bad(&crate::secret::redact_userinfo(&e.to_string())))?;
        Ok(ProxyServer { host: url.host().to_string(), port: url.port(), auth })
    }

    /// The host to connect to (a name, or an IP literal without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port to connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The `Proxy-Authorization` value (`Basic ...`), when the URL had user information.
    pub fn authorization(&self) -> Option<&Secret> {
        self.auth.as_ref()
    }

    /// `host:port` as it is named in messages (`[::1]:3128` for IPv6); never the credentials.
    pub fn address(&self) -> String {
        match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V6(ip)) => format!("[{ip}]:{}", self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }
}

/// Never shows the credentials.
impl fmt::Debug for ProxyServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyServer")
            .field("address", &self.address())
            .field("auth", &self.auth)
            .finish()
    }
}

/// A no-proxy list, read as Go's `NO_PROXY` (golang.org/x/net/http/httpproxy): entries
/// separated by commas, each `*` (every host), an IP address or network (`10.0.0.0/8`), or a
/// domain (`example.com` matches it and its subdomains, `.example.com` its subdomains only),
/// an address or domain optionally with `:port`. `localhost` and loopback addresses are never
/// proxied when a list is given, as Go's rules have it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    nets: Vec<IpNet>,
    ips: Vec<(IpAddr, Option<u16>)>,
    /// `.suffix`, port, whether the bare name matches too.
    domains: Vec<(String, Option<u16>, bool)>,
}

impl NoProxy {
    /// Reads a list; malformed entries are skipped, as Go skips them.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for more than [`MAX_NO_PROXY_ENTRIES`] entries or 64 KiB.
    pub fn parse(list: &str) -> Result<NoProxy, SpecError> {
        if list.len() > 64 * 1024 || list.split(',').count() > MAX_NO_PROXY_ENTRIES {
            return Err(SpecError::InvalidRequest(format!(
                "no-proxy list: more than {MAX_NO_PROXY_ENTRIES} entries or 64 KiB"
            )));
        }
        let mut n = NoProxy::default();
        for entry in list.split(',') {
            let entry = entry.trim().to_ascii_lowercase();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                n.all = true;
                continue;
            }
            if entry.contains('/') {
                if let Ok(net) = IpNet::parse(&entry) {
                    n.nets.push(net);
                }
                continue;
            }
            let (host, port) = split_port(&entry);
            if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                n.ips.push((ip, port));
                continue;
            }
            let host = host.strip_prefix('*').unwrap_or(host);
            if host.is_empty() {
                continue;
            }
            let (suffix, bare) = match host.strip_prefix('.') {
                Some(_) => (host.to_string(), false),
                None => (format!(".{host}"), true),
            };
            n.domains.push((suffix, port, bare));
        }
        Ok(n)
    }

    /// Whether a request to `url` goes straight to it.
    pub fn bypasses(&self, url: &Url) -> bool {
        let host = url.host();
        if host == "localhost" || self.all {
            return true;
        }
        let port = url.port();
        let port_ok = |p: &Option<u16>| p.is_none_or(|p| p == port);
        if let Ok(ip) = host.parse::<IpAddr>() {
            if ip.is_loopback() {
                return true;
            }
            if self.nets.iter().any(|n| n.contains(ip))
                || self.ips.iter().any(|(i, p)| *i == ip && port_ok(p))
            {
                return true;
            }
        }
        self.domains.iter().any(|(suffix, p, bare)| {
            (host.ends_with(suffix.as_str()) || (*bare && host == &suffix[1..])) && port_ok(p)
        })
    }
}

/// `host:port` split (`[v6]:port` too); the port `None` when absent or not a number.
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        if let Some((h, after)) = rest.split_once(']') {
            return (h, after.strip_prefix(':').and_then(|p| p.parse().ok()));
        }
    }
    match entry.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match p.parse() {
            Ok(port) => (h, Some(port)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    }
}

/// Userinfo decoded as UTF-8 text (Go's `url.User` rules for escapes).
fn percent_decode(s: &str) -> Option<String> {
    String::from_utf8(crate::url::percent_decode(s.as_bytes())?).ok()
}

/// Which proxy each hop of an HTTP probe goes through ([`HttpSpec::proxy`](crate::HttpSpec)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpProxy {
    /// The proxy of `http://` URLs; `None`: they go straight to the target.
    pub http: Option<ProxyServer>,
    /// The proxy of `https://` URLs (reached by `CONNECT`); `None`: straight to the target.
    pub https: Option<ProxyServer>,
    /// Hosts reached without a proxy (`None`: every host goes through it, `localhost` and
    /// loopback too, as Go's `http.ProxyURL`).
    pub no_proxy: Option<NoProxy>,
    /// Headers of the `CONNECT` request (blackbox_exporter's `proxy_connect_header`); the
    /// values are kept as secrets (they usually carry credentials).
    pub connect_headers: Vec<(String, Secret)>,
}

impl HttpProxy {
    /// Every URL through the proxy at `url` (see [`ProxyServer::parse`]).
    ///
    /// # Errors
    ///
    /// As [`ProxyServer::parse`].
    pub fn new(url: &str) -> Result<HttpProxy, SpecError> {
        let server = ProxyServer::parse(url)?;
        Ok(HttpProxy { http: Some(server.clone()), https: Some(server), ..HttpProxy::default() })
    }

    /// The proxies of Go's `httpproxy.FromEnvironment` read from these values (those of
    /// `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`, or their lower-case forms): an empty or
    /// absent value is no proxy for that scheme. `None` when neither scheme has one.
    ///
    /// # Errors
    ///
    /// As [`ProxyServer::parse`] and [`NoProxy::parse`].
    pub fn from_values(
        http: Option<&str>,
        https: Option<&str>,
        no_proxy: Option<&str>,
    ) -> Result<Option<HttpProxy>, SpecError> {
        let server = |v: Option<&str>| match v.map(str::trim).filter(|v| !v.is_empty()) {
            Some(v) => ProxyServer::parse(v).map(Some),
            None => Ok(None),
        };
        let (http, https) = (server(http)?, server(https)?);
        if http.is_none() && https.is_none() {
            return Ok(None);
        }
        let no_proxy = Some(NoProxy::parse(no_proxy.unwrap_or(""))?);
        Ok(Some(HttpProxy { http, https, no_proxy, connect_headers: Vec::new() }))
    }

    /// A proxy from the command line's words: its URL, a no-proxy list and `Name: value` lines
    /// for the `CONNECT` request (as curl's `-x`, `--noproxy`, `--proxy-header`).
    ///
    /// # Errors
    ///
    /// As [`HttpProxy::new`], [`HttpProxy::set_no_proxy`] and
    /// [`HttpProxy::add_connect_header`]; a line without `:` names the line's position.
    pub fn from_words(
        url: &str,
        no_proxy: Option<&str>,
        header_lines: &[impl AsRef<str>],
    ) -> Result<HttpProxy, SpecError> {
        let mut p = HttpProxy::new(url)?;
        if let Some(list) = no_proxy {
            p.set_no_proxy(list)?;
        }
        for (i, line) in header_lines.iter().enumerate() {
            let Some((name, value)) = line.as_ref().split_once(':') else {
                let e = format!("proxy header {} is not 'Name: value'", i + 1);
                return Err(SpecError::InvalidRequest(e));
            };
            p.add_connect_header(name.trim(), value.trim())?;
        }
        Ok(p)
    }

    /// Sets the no-proxy list (see [`NoProxy`]).
    ///
    /// # Errors
    ///
    /// As [`NoProxy::parse`].
    pub fn set_no_proxy(&mut self, list: &str) -> Result<(), SpecError> {
        self.no_proxy = Some(NoProxy::parse(list)?);
        Ok(())
    }

    /// Adds a header to the `CONNECT` request.
    ///
    /// # Errors
    ///
    /// As [`validate_header`]; [`SpecError::InvalidRequest`] past [`MAX_CONNECT_HEADERS`].
    pub fn add_connect_header(&mut self, name: &str, value: &str) -> Result<(), SpecError> {
        validate_header(name, value)?;
        if self.connect_headers.len() >= MAX_CONNECT_HEADERS {
            return Err(SpecError::InvalidRequest(format!(
                "more than {MAX_CONNECT_HEADERS} proxy CONNECT headers"
            )));
        }
        self.connect_headers.push((name.to_string(), Secret::new(value)));
        Ok(())
    }

    /// The proxy a request to `url` goes through, if any.
    pub fn for_url(&self, url: &Url) -> Option<&ProxyServer> {
        let server = match url.scheme() {
            Scheme::Http => self.http.as_ref(),
            Scheme::Https => self.https.as_ref(),
        }?;
        match &self.no_proxy {
            Some(n) if n.bypasses(url) => None,
            _ => Some(server),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn proxy_urls() {
        let p = ProxyServer::parse("http://al%40ice:p%3Ass@proxy.example:3128/").unwrap();
        assert_eq!((p.host(), p.port()), ("proxy.example", 3128));
        // base64("al@ice:p:ss")
        assert_eq!(p.authorization().unwrap().expose(), "Basic YWxAaWNlOnA6c3M=");
        assert!(!format!("{p:?}").contains("YWx"), "{p:?}");
        assert_eq!(ProxyServer::parse("127.0.0.1").unwrap().address(), "127.0.0.1:80");
        assert_eq!(ProxyServer::parse("[::1]:8080").unwrap().address(), "[::1]:8080");
        for bad in ["https://p:1", "socks5://p:1", "http://p:1/x", "http://p:0", "http://u:pw@"] {
            let e = ProxyServer::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("pw"), "{e}");
        }
        // A sign is not a hex digit: `%+1` is a bad escape, not the byte 0x01.
        for bad in ["http://u%+1:pw@p:1", "http://u:p%-1@p:1", "http://u:p%4@p:1"] {
            assert!(ProxyServer::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_proxy_as_go() {
        let n = NoProxy::parse("example.com, .sub.org, 10.0.0.0/8, 192.168.1.1:8080, *.star.net")
            .unwrap();
        assert!(n.bypasses(&url("http://example.com/")));
        assert!(n.bypasses(&url("http://a.example.com/")));
        assert!(!n.bypasses(&url("http://notexample.com/")));
        assert!(!n.bypasses(&url("http://sub.org/")));
        assert!(n.bypasses(&url("http://x.sub.org/")));
        assert!(n.bypasses(&url("http://10.1.2.3/")));
        assert!(n.bypasses(&url("http://192.168.1.1:8080/")));
        assert!(!n.bypasses(&url("http://192.168.1.1/")));
        assert!(!n.bypasses(&url("http://star.net/")));
        assert!(n.bypasses(&url("http://a.star.net/")));
        // Loopback and localhost, whatever the list.
        assert!(n.bypasses(&url("http://127.0.0.1:9/")));
        assert!(n.bypasses(&url("http://[::1]:9/")));
        assert!(n.bypasses(&url("http://localhost/")));
        assert!(NoProxy::parse("*").unwrap().bypasses(&url("https://any.where/")));
    }

    #[test]
    fn proxy_per_scheme() {
        let p = HttpProxy::from_values(Some("p1:1"), None, None).unwrap().unwrap();
        assert!(p.for_url(&url("http://example.com/")).is_some());
        assert!(p.for_url(&url("https://example.com/")).is_none());
        // Go's environment proxy never serves a loopback target.
        assert!(p.for_url(&url("http://127.0.0.1/")).is_none());
        assert_eq!(HttpProxy::from_values(Some(""), None, Some("x")).unwrap(), None);
        // A proxy URL without a no-proxy list serves loopback too (Go's http.ProxyURL).
        let all = HttpProxy::new("http://127.0.0.1:3128").unwrap();
        assert!(all.for_url(&url("http://127.0.0.1:9/")).is_some());
        let words = HttpProxy::from_words("p:1", Some("a.b"), &["X-A: b c", "X-B:"]).unwrap();
        assert_eq!(words.connect_headers[0].1.expose(), "b c");
        assert!(words.no_proxy.is_some() && words.connect_headers.len() == 2);
        assert!(HttpProxy::from_words("p:1", None, &["nocolon"]).is_err());
    }
}
