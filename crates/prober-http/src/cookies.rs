//! The cookie jar of one run (`HttpSpec::cookies`), as Go's `net/http/cookiejar` keeps one
//! for a client (blackbox_exporter makes one per probe): the cookies a response sets
//! (`Set-Cookie`, on redirects too) are sent on the later hops of the same run whose URL they
//! match. Nothing outlives the run.
//!
//! The rules are RFC 6265's as that jar applies them:
//! - `name=value` (a value in double quotes loses them); a pair without `=` or with an empty
//!   name is ignored;
//! - `Domain`: without it, the cookie goes back to the same host only; with it, to that domain
//!   and its subdomains, provided the response's host is in it (an IP address only to itself).
//!   Without the public suffix list that jar consults, a `Domain` of a single label (`com`) is
//!   refused unless it is the host itself (then host-only);
//! - `Path`: the cookie goes to that path and below; without it (or one not starting with
//!   `/`), to the directory of the request's path;
//! - `Secure`: over `https://` only; `Max-Age` of 0 or less removes the cookie. `Expires` is
//!   not read: within one run a cookie stays until replaced or removed so;
//! - sent as one `Cookie: a=1; b=2`, longest path first, then in the order they were set.
//!
//! Bounds: at most [`MAX_COOKIES`] cookies of at most [`MAX_COOKIE_LEN`] bytes (name and
//! value); more is ignored.

use prober_core::{Scheme, Url};

/// Cookies kept at most in one run's jar.
pub const MAX_COOKIES: usize = 64;
/// The longest cookie kept (name and value), as RFC 6265's minimum a jar must hold.
pub const MAX_COOKIE_LEN: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Cookie {
    name: String,
    value: String,
    /// The host (host-only) or the domain it goes back to.
    domain: String,
    host_only: bool,
    path: String,
    secure: bool,
}

impl Cookie {
    fn same_key(&self, other: &Cookie) -> bool {
        self.name == other.name && self.domain == other.domain && self.path == other.path
    }
}

/// The cookies of one run.
#[derive(Clone, Debug, Default)]
pub struct CookieJar {
    /// In the order they were first set.
    cookies: Vec<Cookie>,
}

impl CookieJar {
    /// Keeps the cookies of the `Set-Cookie` values of a response to a request for `url`.
    pub fn store<'a>(&mut self, url: &Url, set_cookies: impl IntoIterator<Item = &'a str>) {
        let mut set_cookies = set_cookies.into_iter().peekable();
        // Most responses set none: the host is not copied for them.
        if set_cookies.peek().is_none() {
            return;
        }
        let host = url.host().to_ascii_lowercase();
        for line in set_cookies {
            match parse(&host, url.path(), line) {
                Some((c, true)) => self.cookies.retain(|k| !k.same_key(&c)),
                Some((c, false)) => self.set(c),
                None => {}
            }
        }
    }

    /// The stored `Set-Cookie` values among `headers` of a response to `url`.
    pub fn store_fields(&mut self, url: &Url, headers: &[(String, String)]) {
        let values =
            headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie")).map(|(_, v)| &**v);
        self.store(url, values);
    }

    /// Replaces the cookie of the same name, domain and path in place (it keeps its order),
    /// or adds it while there is room.
    fn set(&mut self, c: Cookie) {
        match self.cookies.iter().position(|k| k.same_key(&c)) {
            Some(i) => self.cookies[i] = c,
            None if self.cookies.len() < MAX_COOKIES => self.cookies.push(c),
            None => {}
        }
    }

    /// The `Cookie` header value for a request to `url`, `None` when no cookie matches.
    pub fn header(&self, url: &Url) -> Option<String> {
        let host = url.host().to_ascii_lowercase();
        let path = url.path();
        let https = url.scheme() == Scheme::Https;
        let mut matching: Vec<&Cookie> = self
            .cookies
            .iter()
            .filter(|c| {
                let domain_ok = if c.host_only {
                    host == c.domain
                } else {
                    host == c.domain || has_dot_suffix(&host, &c.domain)
                };
                domain_ok && path_match(path, &c.path) && (https || !c.secure)
            })
            .collect();
        if matching.is_empty() {
            return None;
        }
        // Longest path first; a stable sort keeps the order they were set in otherwise.
        matching.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
        let pairs: Vec<String> =
            matching.iter().map(|c| format!("{}={}", c.name, c.value)).collect();
        Some(pairs.join("; "))
    }
}

/// `headers` with the jar's `Cookie` for `url`: added, or joined to a `Cookie` the user set
/// (`; `), as Go's `Request.AddCookie` does.
pub(crate) fn with_cookies<'a>(
    headers: &'a [(String, String)],
    jar: Option<&CookieJar>,
    url: &Url,
) -> std::borrow::Cow<'a, [(String, String)]> {
    let Some(cookie) = jar.and_then(|j| j.header(url)) else {
        return std::borrow::Cow::Borrowed(headers);
    };
    let mut out = headers.to_vec();
    match out.iter_mut().find(|(n, v)| n.trim().eq_ignore_ascii_case("cookie") && !v.is_empty()) {
        Some((_, v)) => {
            v.push_str("; ");
            v.push_str(&cookie);
        }
        None => out.push(("Cookie".to_string(), cookie)),
    }
    std::borrow::Cow::Owned(out)
}

/// `host` is `domain` with labels in front (`a.example.com` of `example.com`).
fn has_dot_suffix(host: &str, domain: &str) -> bool {
    host.len() > domain.len()
        && host.ends_with(domain)
        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
}

/// RFC 6265 5.1.4's path match.
fn path_match(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request.as_bytes().get(cookie.len()) == Some(&b'/')))
}

/// RFC 6265 5.1.4's default path: the request path up to its last `/` (excluded), or `/`.
fn default_path(request: &str) -> String {
    match request.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => request[..i].to_string(),
    }
}

/// One `Set-Cookie` value of a response to `host` and `path`: the cookie, and whether it
/// removes the one it names (`Max-Age` of 0 or less); `None` for one that is refused.
fn parse(host: &str, path: &str, line: &str) -> Option<(Cookie, bool)> {
    let mut parts = line.split(';');
    let (name, value) = parts.next()?.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
    let token =
        |s: &str| s.bytes().all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
    let octets = |s: &str| s.bytes().all(|b| b.is_ascii_graphic() && !b"\",;\\".contains(&b));
    if name.is_empty()
        || !token(name)
        || !octets(value)
        || name.len() + value.len() > MAX_COOKIE_LEN
    {
        return None;
    }
    let (mut domain_attr, mut path_attr, mut secure, mut max_age) = (None, None, false, None);
    for attr in parts {
        let (k, v) = attr.split_once('=').unwrap_or((attr, ""));
        let (k, v) = (k.trim(), v.trim());
        if k.eq_ignore_ascii_case("domain") {
            domain_attr = Some(v.to_ascii_lowercase());
        } else if k.eq_ignore_ascii_case("path") {
            path_attr = Some(v.to_string());
        } else if k.eq_ignore_ascii_case("secure") {
            secure = true;
        } else if k.eq_ignore_ascii_case("max-age") {
            max_age = v.parse::<i64>().ok().or(max_age);
        }
    }
    let (domain, host_only) = domain_and_type(host, domain_attr.as_deref())?;
    let path = match path_attr {
        Some(p) if p.starts_with('/') => p,
        _ => default_path(path),
    };
    let cookie = Cookie {
        name: name.to_string(),
        value: value.to_string(),
        domain,
        host_only,
        path,
        secure,
    };
    Some((cookie, max_age.is_some_and(|a| a <= 0)))
}

/// Go's `domainAndType`: where a cookie goes back to, and whether to that host only.
fn domain_and_type(host: &str, domain: Option<&str>) -> Option<(String, bool)> {
    let Some(domain) = domain.filter(|d| !d.is_empty()) else {
        return Some((host.to_string(), true));
    };
    if host.parse::<std::net::IpAddr>().is_ok() {
        return (host == domain).then(|| (host.to_string(), true));
    }
    let domain = domain.strip_prefix('.').unwrap_or(domain);
    if domain.is_empty() || domain.starts_with('.') || domain.ends_with('.') {
        return None;
    }
    if !domain.contains('.') {
        // A single label may be a public suffix: the host itself only.
        return (host == domain).then(|| (host.to_string(), true));
    }
    (host == domain || has_dot_suffix(host, domain)).then(|| (domain.to_string(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn domain_path_secure_and_order() {
        let mut j = CookieJar::default();
        let login = url("http://www.example.com/login/form");
        j.store(
            &login,
            [
                "a=1",
                "b=\"2\"; Path=/; HttpOnly",
                "c=3; Domain=.example.com; Path=/app",
                "d=4; Secure; Path=/",
                "e=5; Domain=com",
                "f=6; Domain=other.org",
                "=7",
                "g",
            ],
        );
        // `a` has the default path /login; `b` and `d` path /, `c` /app for the domain.
        assert_eq!(j.header(&url("http://www.example.com/login/x")).as_deref(), Some("a=1; b=2"));
        assert_eq!(j.header(&url("http://api.example.com/app/x")).as_deref(), Some("c=3"));
        assert_eq!(j.header(&url("http://api.example.com/apple")), None);
        assert_eq!(j.header(&url("https://www.example.com/app")).as_deref(), Some("c=3; b=2; d=4"));
        assert_eq!(j.header(&url("http://example.org/")), None);
        // Replaced in place; removed by Max-Age=0.
        j.store(&login, ["b=two; Path=/", "a=gone; Max-Age=0"]);
        assert_eq!(j.header(&url("http://www.example.com/login/x")).as_deref(), Some("b=two"));
    }

    #[test]
    fn ip_hosts_take_host_only_cookies() {
        let mut j = CookieJar::default();
        let u = url("http://127.0.0.1:8080/");
        j.store(&u, ["s=1", "t=2; Domain=127.0.0.1", "u=3; Domain=0.0.1"]);
        assert_eq!(j.header(&url("http://127.0.0.1:9090/x")).as_deref(), Some("s=1; t=2"));
        assert_eq!(j.header(&url("http://127.0.0.2/")), None);
    }

    #[test]
    fn bounded() {
        let mut j = CookieJar::default();
        let u = url("http://h/");
        let long = format!("big={}", "x".repeat(MAX_COOKIE_LEN));
        j.store(&u, [long.as_str()]);
        assert_eq!(j.header(&u), None);
        let many: Vec<String> = (0..MAX_COOKIES + 10).map(|i| format!("c{i}=v")).collect();
        j.store(&u, many.iter().map(String::as_str));
        assert_eq!(j.header(&u).unwrap().matches('=').count(), MAX_COOKIES);
    }

    #[test]
    fn joined_to_the_users_cookie_header() {
        let mut j = CookieJar::default();
        let u = url("http://h/");
        j.store(&u, ["s=1"]);
        let user = vec![("cookie".to_string(), "mine=0".to_string())];
        assert_eq!(&*with_cookies(&user, Some(&j), &u), [("cookie".into(), "mine=0; s=1".into())]);
        assert_eq!(&*with_cookies(&[], Some(&j), &u), [("Cookie".into(), "s=1".into())]);
        assert_eq!(&*with_cookies(&user, None, &u), &user[..]);
    }
}
