//! A request and its answer as the exporter sees them (any HTTP server carries them), the
//! query as Go reads it, and blackbox_exporter's timeout rule.

use std::borrow::Cow;
use std::time::Duration;

/// A request as the exporter needs it.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The path, without the query (`/probe`).
    pub path: &'a str,
    /// The query, still percent-encoded, without `?`.
    pub query: &'a str,
    /// The request's header fields.
    pub headers: &'a [(String, String)],
}

impl Request<'_> {
    /// The value of the first header field named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Credentials (the scraper's `Authorization`, a password in a target) are not printed.
impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("path", &self.path)
            .field("query", &prober_core::redact_userinfo(self.query))
            .field("headers", &prober_core::RedactedHeaders(self.headers))
            .finish()
    }
}

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

/// blackbox_exporter's `--timeout-offset` default: what is kept of the scrape's timeout for
/// the answer to travel back.
pub const DEFAULT_TIMEOUT_OFFSET: Duration = Duration::from_millis(500);

/// The longest scrape timeout a client's `X-Prometheus-Scrape-Timeout-Seconds` may ask for
/// when the module has no `timeout` (blackbox_exporter's default when the header is absent):
/// with the default offset, probes run at most 119.5 s.
pub const MAX_SCRAPE_TIMEOUT: Duration = Duration::from_secs(120);

/// blackbox_exporter's `getTimeout`: the scrape's timeout (120 s without the header) less
/// `offset`, or the module's when it is smaller (and set); the module's too when the offset
/// leaves nothing. One bound blackbox_exporter does not have: without a module timeout, the
/// scrape's timeout counts for at most [`MAX_SCRAPE_TIMEOUT`], so that a client cannot make a
/// probe (its socket and its buffered body) live for a day; a module's timeout is the
/// operator's choice and is never exceeded.
///
/// # Errors
///
/// The header's text when it is not a number.
pub fn timeout(
    header: Option<&str>,
    module: Option<Duration>,
    offset: Duration,
) -> Result<Duration, String> {
    let mut scrape = match header {
        Some(v) => v
            .trim()
            .parse::<f64>()
            .map_err(|e| format!("strconv.ParseFloat: parsing {v:?}: {e}"))?,
        None => 0.0,
    };
    if scrape == 0.0 || !scrape.is_finite() {
        scrape = 120.0;
    }
    let module_s = module.map_or(0.0, |d| d.as_secs_f64());
    if module_s <= 0.0 {
        scrape = scrape.min(MAX_SCRAPE_TIMEOUT.as_secs_f64());
    }
    let max = scrape - offset.as_secs_f64();
    let seconds = if (module_s < max && module_s > 0.0) || max < 0.0 { module_s } else { max };
    Ok(Duration::try_from_secs_f64(seconds.max(0.001)).unwrap_or(Duration::from_secs(120)))
}

/// `name=value&...` as Go's `url.ParseQuery` reads it (blackbox_exporter's `r.URL.Query()`):
/// percent-decoded, `+` a space. A pair with a bad escape (a `%` not followed by two hex
/// digits: `%zz`, `%+1`, a `%` at the end) or with a `;` is left out, as Go leaves it out
/// (blackbox_exporter ignores the error `ParseQuery` returns with the other pairs).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    query_pairs(q).into_iter().map(|(n, v)| (n.into_owned(), v.into_owned())).collect()
}

/// [`parse_query`] borrowing what needs no decoding, as `/probe` reads its parameters: a
/// copy of every name and value cost a few thousand instructions a request.
pub(crate) fn query_pairs(q: &str) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    q.split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
        .filter_map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            Some((decode(n)?, decode(v)?))
        })
        .collect()
}

/// Go's `url.QueryUnescape`: `None` for a bad escape.
fn decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Some(Cow::Borrowed(s));
    }
    // A hex digit only: no sign, which `u8::from_str_radix` would take (`%+1` is 0x01 to it).
    let hex = |c: Option<&u8>| c.and_then(|&c| char::from(c).to_digit(16));
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let value = hex(b.get(i + 1))? << 4 | hex(b.get(i + 2))?;
                out.push(u8::try_from(value).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn blackbox_timeout_rule() {
        let off = DEFAULT_TIMEOUT_OFFSET;
        let s = |d: Duration| d.as_secs_f64();
        assert_eq!(s(timeout(Some("10"), None, off).unwrap()), 9.5);
        assert_eq!(s(timeout(Some("10"), Some(Duration::from_secs(5)), off).unwrap()), 5.0);
        assert_eq!(s(timeout(Some("3"), Some(Duration::from_secs(5)), off).unwrap()), 2.5);
        assert_eq!(s(timeout(None, None, off).unwrap()), 119.5);
        // The offset leaves nothing: the module's timeout.
        assert_eq!(s(timeout(Some("0.2"), Some(Duration::from_secs(1)), off).unwrap()), 1.0);
        assert!(timeout(Some("ten"), None, off).is_err());
        // A client cannot ask for more than the server's bound, nor more than the module's.
        assert_eq!(s(timeout(Some("86400"), None, off).unwrap()), 119.5);
        assert_eq!(s(timeout(Some("86400"), Some(Duration::from_secs(1)), off).unwrap()), 1.0);
        assert_eq!(s(timeout(Some("600"), Some(Duration::from_secs(300)), off).unwrap()), 300.0);
    }

    #[test]
    fn queries() {
        assert_eq!(
            parse_query("target=http%3A%2F%2Fa%3A1%2Fx&module=http_2xx&debug=true&x=a+b&bad=%zz"),
            [
                ("target".to_string(), "http://a:1/x".to_string()),
                ("module".to_string(), "http_2xx".to_string()),
                ("debug".to_string(), "true".to_string()),
                ("x".to_string(), "a b".to_string()),
            ]
        );
    }

    /// What Go's `url.ParseQuery` refuses is left out, the other pairs kept: a `%` that two
    /// hex digits do not follow (a sign is not one: `%+1`, `%-1`), a `%` at the end, a `;`.
    #[test]
    fn bad_escapes_leave_their_pair_out_as_go_does() {
        let kept = [("a".to_string(), "1".to_string())];
        for bad in ["%+1", "x=%+1", "x=%-1", "%+1=x", "x=%zz", "x=%4", "x=%", "x=1;y=2", "x=%1+"] {
            assert_eq!(parse_query(&format!("{bad}&a=1")), kept, "{bad}");
            assert_eq!(parse_query(&format!("a=1&{bad}")), kept, "{bad}");
        }
        assert_eq!(parse_query("x=%41%2b%2B%7e+"), [("x".to_string(), "A++~ ".to_string())]);
        assert_eq!(parse_query("x=%E2%82%AC"), [("x".to_string(), "\u{20ac}".to_string())]);
    }
}
