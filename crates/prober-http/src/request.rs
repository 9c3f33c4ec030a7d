//! The request bytes, written the way Go's `net/http` client writes the kubelet's probe request
//! (`newProbeRequest` + `Request.write` + the transport's `Connection: close`).
//!
//! Order on the wire: the request line, `Host`, `User-Agent`, then every other header sorted by
//! canonical name (Go's `Header.writeSubset`), each value of a repeated name on its own line.
//!
//! - Names are canonicalised like Go's `textproto.CanonicalMIMEHeaderKey` (`FOO-bAR` ->
//!   `Foo-Bar`), so `HOST` and `host` are the same header.
//! - `Host`: the user's `Host` value (the virtual host) when the caller passes it as
//!   `host_override`, else the URL's host (with the port when the URL spelled one out).
//! - `User-Agent`: the first user value when the user set one (an empty value sends no
//!   `User-Agent` at all), else the spec's default (none if that is empty too).
//! - `Accept: */*` unless the user set `Accept`; a user `Accept` whose first value is empty
//!   removes the header. Other empty user values are sent empty (`Accept-Encoding: `).
//! - `Connection: close`, unless a user `Connection` value already has the `close` token (Go
//!   adds it next to any other user value, and so do we).
//! - `Referer` on redirected requests: the previous URL, unless the user set one or the redirect
//!   goes from `https` to `http` (Go's `refererForURL`).
//! - User `Content-Length`, `Transfer-Encoding` and `Trailer` are dropped, as Go drops them. The
//!   method is the spec's (`GET` by default); a body is sent with `Content-Length: N` right after
//!   `User-Agent`, and `POST`, `PUT` and `PATCH` without a body send `Content-Length: 0` (Go's
//!   `transferWriter.shouldSendContentLength`).
//! - Never `Accept-Encoding` by default (no compression). The request is in origin form, sent
//!   straight to the URL's host, unless the spec names a proxy (`crate::proxy`, absolute form).

use std::collections::BTreeMap;

use prober_core::Url;

use crate::response::lists_close;

/// Go's `textproto.CanonicalMIMEHeaderKey`: the first letter and every letter after a `-` in
/// upper case, the others in lower case. A name with a byte that is not a token character is
/// returned unchanged, as Go does.
pub fn canonical_header_name(name: &str) -> String {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !name.bytes().all(token) {
        return name.to_string();
    }
    let mut upper = true;
    name.bytes()
        .map(|b| {
            let c = if upper { b.to_ascii_uppercase() } else { b.to_ascii_lowercase() };
            upper = b == b'-';
            c as char
        })
        .collect()
}

/// The user's headers as Go's `http.Header` after `headers.Add(name, value)` for each one:
/// canonical names, values of a repeated name in order (the kubelet's `v1HeaderToHTTPHeader`).
pub fn header_map(headers: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        map.entry(canonical_header_name(name)).or_default().push(value.clone());
    }
    map
}

/// The virtual host a user `Host` header asks for (`headers.Get("Host")`: the first value), or
/// `None` when there is none or it is empty.
pub fn host_override(headers: &[(String, String)]) -> Option<String> {
    // The names `header_map` files under `Host` are those equal to it but for case (a name
    // with a byte that is not a token's is kept as written): found without building the map,
    // which every plan (every `/probe` of `prober serve`) paid for once more.
    let (_, first) = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host"))?;
    let v = trim(first);
    (!v.is_empty()).then(|| v.to_string())
}

/// The method and body of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// The method, a token (validated by the spec).
    pub method: &'a str,
    /// The body; empty for none.
    pub body: &'a [u8],
}

impl Message<'_> {
    /// A GET without body: the kubelet's request.
    pub const GET: Message<'static> = Message { method: "GET", body: b"" };

    /// Whether Go's client sends a `Content-Length` for this message.
    fn sends_length(&self) -> bool {
        !self.body.is_empty() || matches!(self.method, "POST" | "PUT" | "PATCH")
    }
}

/// Builds the bytes of one GET request for `url`.
///
/// `host_override` is the virtual host to send instead of the URL's (see [`host_override`]; on
/// a redirected request only when the redirect carried it over). `referer` is the previous URL
/// on a redirected request. User `Host` entries in `headers` are otherwise ignored.
pub fn build_request(
    url: &Url,
    headers: &[(String, String)],
    user_agent: &str,
    host_override: Option<&str>,
    referer: Option<&str>,
) -> Vec<u8> {
    build_request_with(url, headers, user_agent, host_override, referer, false, Message::GET)
}

/// Whether the user's headers ask the server to close the connection (`Connection: close`):
/// then keep-alive has no effect.
pub fn user_wants_close(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(n, v)| n.trim().eq_ignore_ascii_case("connection") && lists_close(v.as_bytes()))
}

/// [`build_request`] with the method and body of `msg`, and with `keep_alive` without the
/// `Connection: close` the kubelet's client sends (a `Connection` header of the user's is still
/// sent as given).
pub fn build_request_with(
    url: &Url,
    headers: &[(String, String)],
    user_agent: &str,
    host_override: Option<&str>,
    referer: Option<&str>,
    keep_alive: bool,
    msg: Message<'_>,
) -> Vec<u8> {
    let Prepared { host, ua, mut map } = prepare(url, headers, user_agent, host_override, referer);
    let wants_close =
        map.get("Connection").is_some_and(|vs| vs.iter().any(|v| lists_close(v.as_bytes())));
    if !wants_close && !keep_alive {
        map.entry("Connection".into()).or_default().push("close".into());
    }

    let mut out = Vec::with_capacity(256 + msg.body.len());
    out.extend_from_slice(msg.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(url.request_target().as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(b"\r\n");
    if !ua.is_empty() {
        push_header(&mut out, "User-Agent", &ua);
    }
    if msg.sends_length() {
        push_header(&mut out, "Content-Length", &msg.body.len().to_string());
    }
    for (name, values) in &map {
        for v in values {
            push_header(&mut out, name, trim(v));
        }
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(msg.body);
    out
}

/// The same request for HTTP/2 (Go's `httpcommon.EncodeHeaders`): `:authority` is what
/// `Host` would be, then `:method`, `:path`, `:scheme`, then the fields HTTP/1.1 would carry
/// with lower-case names, less the connection-specific ones HTTP/2 forbids (`Connection`,
/// `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`: Go drops them too, so
/// neither side sends `Connection: close`), and `content-length` where HTTP/1.1 sends it.
pub fn build_h2_request(
    url: &Url,
    headers: &[(String, String)],
    user_agent: &str,
    host_override: Option<&str>,
    referer: Option<&str>,
    msg: Message<'_>,
) -> prober_h2::client::Request {
    let Prepared { host, ua, map } = prepare(url, headers, user_agent, host_override, referer);
    let mut fields = Vec::with_capacity(map.len() + 2);
    if !ua.is_empty() {
        fields.push(("user-agent".to_string(), ua));
    }
    for (name, values) in &map {
        if ["Connection", "Keep-Alive", "Proxy-Connection", "Upgrade"].contains(&name.as_str()) {
            continue;
        }
        for v in values {
            fields.push((name.to_ascii_lowercase(), trim(v).to_string()));
        }
    }
    if msg.sends_length() {
        fields.push(("content-length".into(), msg.body.len().to_string()));
    }
    prober_h2::client::Request {
        method: msg.method.to_string(),
        scheme: url.scheme().as_str().to_string(),
        authority: host,
        path: url.request_target().to_string(),
        headers: fields,
        body: msg.body.to_vec(),
    }
}

/// What the HTTP/1.1 and HTTP/2 forms of a request share: the virtual host, the user agent
/// (empty: none) and the other header fields by canonical name.
struct Prepared {
    host: String,
    ua: String,
    map: BTreeMap<String, Vec<String>>,
}

fn prepare(
    url: &Url,
    headers: &[(String, String)],
    user_agent: &str,
    host_override: Option<&str>,
    referer: Option<&str>,
) -> Prepared {
    let mut map = header_map(headers);

    let host = match host_override {
        Some(h) => h.to_string(),
        None => url.host_header(),
    };
    let ua = match map.get("User-Agent") {
        Some(values) => values.first().map(|v| trim(v).to_string()).unwrap_or_default(),
        None => trim(user_agent).to_string(),
    };
    for excluded in ["Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer"] {
        map.remove(excluded);
    }
    match map.get("Accept") {
        None => {
            map.insert("Accept".into(), vec!["*/*".into()]);
        }
        Some(values) if values.first().is_none_or(|v| v.is_empty()) => {
            map.remove("Accept");
        }
        Some(_) => {}
    }
    if let Some(r) = referer {
        match map.get_mut("Referer") {
            // Go's `Header.Set("Referer", explicit)`: the user's first value, alone.
            Some(values) if values.first().is_some_and(|v| !v.is_empty()) => values.truncate(1),
            _ => {
                map.insert("Referer".into(), vec![r.to_string()]);
            }
        }
    }
    Prepared { host, ua, map }
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Go's `textproto.TrimString`: ASCII white space off both ends.
fn trim(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn req(url: &str, headers: &[(&str, &str)]) -> String {
        let url = Url::parse(url).unwrap();
        let headers = h(headers);
        let host = host_override(&headers);
        String::from_utf8(build_request(&url, &headers, "kube-probe/1.37", host.as_deref(), None))
            .unwrap()
    }

    #[test]
    fn canonical_names_like_go() {
        assert_eq!(canonical_header_name("FOO-bAR"), "Foo-Bar");
        assert_eq!(canonical_header_name("HOST"), "Host");
        assert_eq!(canonical_header_name("user-agent"), "User-Agent");
        assert_eq!(canonical_header_name("x-muffins-or-cupcakes"), "X-Muffins-Or-Cupcakes");
        assert_eq!(canonical_header_name("a--b"), "A--B");
        assert_eq!(canonical_header_name("x_y"), "X_y");
        assert_eq!(canonical_header_name("bad name"), "bad name");
    }

    /// H44: `Test_v1HeaderToHTTPHeader`.
    #[test]
    fn h44_header_map_is_canonical() {
        let m = header_map(&h(&[
            ("Connection", "Keep-Alive"),
            ("Content-Type", "text/html"),
            ("Accept-Ranges", "bytes"),
        ]));
        let expect: BTreeMap<String, Vec<String>> = [
            ("Connection", "Keep-Alive"),
            ("Content-Type", "text/html"),
            ("Accept-Ranges", "bytes"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
        .collect();
        assert_eq!(m, expect);
        let m = header_map(&h(&[("HOST", "example.com"), ("FOO-bAR", "value")]));
        assert_eq!(m.get("Host"), Some(&vec!["example.com".to_string()]));
        assert_eq!(m.get("Foo-Bar"), Some(&vec!["value".to_string()]));
        assert_eq!(m.len(), 2);
        assert!(header_map(&[]).is_empty());
        let m = header_map(&h(&[("x-a", "1"), ("X-A", "2")]));
        assert_eq!(m.get("X-A"), Some(&vec!["1".to_string(), "2".to_string()]));
    }

    #[test]
    fn default_request_is_exact() {
        assert_eq!(
            req("http://127.0.0.1:8080/healthz?x=1", &[]),
            "GET /healthz?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: kube-probe/1.37\r\n\
             Accept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            req("http://[::1]/", &[]),
            "GET / HTTP/1.1\r\nHost: [::1]\r\nUser-Agent: kube-probe/1.37\r\n\
             Accept: */*\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn user_headers_replace_remove_and_sort() {
        assert_eq!(
            req(
                "http://h:1/",
                &[
                    ("x-b", "2"),
                    ("accept", "text/html"),
                    ("USER-AGENT", "foo/1.0"),
                    ("X-A", "1"),
                    ("x-b", "3")
                ]
            ),
            "GET / HTTP/1.1\r\nHost: h:1\r\nUser-Agent: foo/1.0\r\nAccept: text/html\r\n\
             Connection: close\r\nX-A: 1\r\nX-B: 2\r\nX-B: 3\r\n\r\n"
        );
        // Empty User-Agent and Accept remove them; other empty values are sent empty.
        assert_eq!(
            req("http://h:1/", &[("User-Agent", ""), ("Accept", ""), ("Accept-Encoding", "")]),
            "GET / HTTP/1.1\r\nHost: h:1\r\nAccept-Encoding: \r\nConnection: close\r\n\r\n"
        );
        // Host override, Content-Length dropped, values trimmed.
        assert_eq!(
            req(
                "http://h:1/",
                &[("HOST", " muffins.cupcakes.org "), ("Content-Length", "5"), ("X", " v ")]
            ),
            "GET / HTTP/1.1\r\nHost: muffins.cupcakes.org\r\nUser-Agent: kube-probe/1.37\r\n\
             Accept: */*\r\nConnection: close\r\nX: v\r\n\r\n"
        );
        // An empty Host header is no override.
        assert!(req("http://h:1/", &[("Host", "")]).contains("Host: h:1\r\n"));
    }

    #[test]
    fn connection_header() {
        assert!(
            req("http://h/", &[("connection", "Close")]).ends_with("Connection: Close\r\n\r\n")
        );
        assert!(
            req("http://h/", &[("Connection", "keep-alive")])
                .ends_with("Connection: keep-alive\r\nConnection: close\r\n\r\n")
        );
    }

    #[test]
    fn empty_default_user_agent_sends_none() {
        let url = Url::parse("http://h/").unwrap();
        let r = String::from_utf8(build_request(&url, &[], "", None, None)).unwrap();
        assert_eq!(r, "GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nConnection: close\r\n\r\n");
    }

    #[test]
    fn keep_alive_requests_do_not_ask_to_close() {
        let url = Url::parse("http://h/").unwrap();
        let r = String::from_utf8(build_request(&url, &[], "ua", None, None)).unwrap();
        let kept =
            String::from_utf8(build_request_with(&url, &[], "ua", None, None, true, Message::GET))
                .unwrap();
        assert!(r.contains("Connection: close\r\n"), "{r}");
        assert_eq!(kept, r.replace("Connection: close\r\n", ""));
        assert!(user_wants_close(&[("connection".into(), "Keep-Alive, Close".into())]));
        assert!(!user_wants_close(&[("Connection".into(), "keep-alive".into())]));
    }

    #[test]
    fn methods_and_bodies_like_go() {
        let url = Url::parse("http://h/x").unwrap();
        let build = |method, body: &[u8], headers: &[(&str, &str)]| {
            let msg = Message { method, body };
            String::from_utf8(build_request_with(&url, &h(headers), "ua", None, None, false, msg))
                .unwrap()
        };
        assert_eq!(
            build("POST", b"{\"a\":1}", &[("Content-Type", "application/json")]),
            "POST /x HTTP/1.1\r\nHost: h\r\nUser-Agent: ua\r\nContent-Length: 7\r\n\
             Accept: */*\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n{\"a\":1}"
        );
        // POST, PUT and PATCH say Content-Length: 0 without a body; others say nothing.
        assert!(build("PUT", b"", &[]).contains("Content-Length: 0\r\n"));
        assert!(!build("DELETE", b"", &[]).contains("Content-Length"));
        assert!(!build("HEAD", b"", &[]).contains("Content-Length"));
        // Any method with a body has its length; a user Content-Length is dropped.
        let r = build("GET", b"abc", &[("Content-Length", "99")]);
        assert!(r.starts_with("GET /x HTTP/1.1\r\n") && r.ends_with("\r\n\r\nabc"), "{r}");
        assert_eq!(r.matches("Content-Length").count(), 1, "{r}");
        assert!(r.contains("Content-Length: 3\r\n"), "{r}");
    }

    #[test]
    fn referer_on_redirects() {
        let url = Url::parse("http://h/b").unwrap();
        let r =
            String::from_utf8(build_request(&url, &[], "ua", None, Some("http://h/a"))).unwrap();
        assert!(r.ends_with("Connection: close\r\nReferer: http://h/a\r\n\r\n"), "{r}");
        let mine = h(&[("referer", "mine")]);
        let r =
            String::from_utf8(build_request(&url, &mine, "ua", None, Some("http://h/a"))).unwrap();
        assert!(r.contains("Referer: mine\r\n") && !r.contains("http://h/a"), "{r}");
        let r = String::from_utf8(build_request(&url, &mine, "ua", None, None)).unwrap();
        assert!(r.contains("Referer: mine\r\n"), "{r}");
    }
}
