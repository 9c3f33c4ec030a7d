//! The bytes a probe sends a proxy, and the checks of its answer (sans-I/O; the probe's
//! `tunnel` module drives them over the socket).
//!
//! As Go's `http.Transport` with a proxy: an `http://` URL is requested from the proxy in
//! absolute form (`GET http://host:port/path HTTP/1.1`, the credentials in
//! `Proxy-Authorization`); an `https://` URL through a tunnel the proxy opens on
//! `CONNECT host:port HTTP/1.1` (with the `CONNECT` headers and the credentials), answered by a
//! 2xx head (Go takes 200 only), then TLS with the target inside it. The answer is read with
//! the bounds of every response head ([`crate::response::MAX_HEAD`]), and must end where the
//! head ends: the target speaks TLS only once spoken to, so bytes after the head are the
//! proxy's and refused.

use prober_core::{AddressFilter, HttpProxy, HttpSpec, ProxyServer, Url};

use crate::request::{Message, build_request_with};

/// The proxy a request to `url` goes through under `spec`: none with a Unix socket (the
/// socket is where every request goes) or when the no-proxy list names the host.
pub fn proxy_for<'a>(spec: &'a HttpSpec, url: &Url) -> Option<&'a ProxyServer> {
    if spec.connect.unix_socket.is_some() {
        return None;
    }
    spec.proxy.as_deref().and_then(|p: &HttpProxy| p.for_url(url))
}

/// A request for `url` sent to `proxy` in absolute form: the origin-form request of
/// [`build_request_with`] with `scheme://authority` before its path, and the proxy's
/// credentials in `Proxy-Authorization` after its request line.
#[allow(clippy::too_many_arguments)]
pub fn build_proxied_request(
    proxy: &ProxyServer,
    url: &Url,
    headers: &[(String, String)],
    user_agent: &str,
    host_override: Option<&str>,
    referer: Option<&str>,
    keep_alive: bool,
    msg: Message<'_>,
) -> Vec<u8> {
    let origin =
        build_request_with(url, headers, user_agent, host_override, referer, keep_alive, msg);
    let prefix = format!("{}://{}", url.scheme().as_str(), url.host_header());
    let auth = proxy.authorization().map(|a| format!("Proxy-Authorization: {}\r\n", a.expose()));
    let auth = auth.unwrap_or_default();
    let at_target = msg.method.len() + 1;
    let line_end = origin.windows(2).position(|w| w == b"\r\n").map_or(origin.len(), |i| i + 2);
    let mut out = Vec::with_capacity(origin.len() + prefix.len() + auth.len());
    out.extend_from_slice(&origin[..at_target]);
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(&origin[at_target..line_end]);
    out.extend_from_slice(auth.as_bytes());
    out.extend_from_slice(&origin[line_end..]);
    out
}

/// `host:port` of `url` as a `CONNECT` names it (`[::1]:443` for IPv6), always with the port.
pub fn connect_authority(url: &Url) -> String {
    match url.ip() {
        Some(std::net::IpAddr::V6(ip)) => format!("[{ip}]:{}", url.port()),
        _ => format!("{}:{}", url.host(), url.port()),
    }
}

/// The `CONNECT` request that asks `proxy` for a tunnel to `url`'s host and port.
pub fn build_connect(proxy: &ProxyServer, headers: &HttpProxy, url: &Url) -> Vec<u8> {
    let authority = connect_authority(url);
    let mut out = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
    for (name, value) in &headers.connect_headers {
        push(&mut out, name, value.expose());
    }
    if let Some(auth) = proxy.authorization() {
        push(&mut out, "Proxy-Authorization", auth.expose());
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn push(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Why the allow-list refuses a target reached through a proxy, checked before anything is
/// sent: its name by the host patterns, its port by the port ranges, and, for an IP literal,
/// the address by the networks (a name is resolved by the proxy, so its addresses are not
/// known here). The proxy's own address is checked by the dial as any peer's.
pub fn target_refused(filter: &AddressFilter, url: &Url) -> Option<String> {
    if let Some(ip) = url.ip() {
        let addr = std::net::SocketAddr::new(ip, url.port());
        return filter.check(Some(url.host()), addr).err().map(|e| e.to_string());
    }
    if !filter.port_allowed(url.port()) {
        return Some(format!("port {} is not allowed", url.port()));
    }
    (!filter.host_allowed(url.host())).then(|| format!("host {} is not allowed", url.host()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: &[u8]) -> String {
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn absolute_form_with_credentials() {
        let p = ProxyServer::parse("http://u:pw@127.0.0.1:3128").unwrap();
        let url = Url::parse("http://example.com:8080/a?b").unwrap();
        let r = text(&build_proxied_request(&p, &url, &[], "ua", None, None, false, Message::GET));
        assert!(r.starts_with("GET http://example.com:8080/a?b HTTP/1.1\r\nProxy-Authorization: Basic dTpwdw==\r\nHost: example.com:8080\r\n"), "{r}");
        assert!(r.ends_with("\r\n\r\n"), "{r}");
    }

    #[test]
    fn connect_request() {
        let mut h = HttpProxy::new("http://127.0.0.1:3128").unwrap();
        h.add_connect_header("X-Tenant", "t1").unwrap();
        let p = h.https.clone().unwrap();
        let url = Url::parse("https://[::1]/x").unwrap();
        assert_eq!(
            text(&build_connect(&p, &h, &url)),
            "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nX-Tenant: t1\r\n\r\n"
        );
    }

    #[test]
    fn allow_list_on_the_target() {
        let f = AddressFilter::parse(&["*.example.com"], &["10.0.0.0/8"], &["443"]).unwrap();
        assert_eq!(target_refused(&f, &Url::parse("https://a.example.com/").unwrap()), None);
        assert!(target_refused(&f, &Url::parse("https://b.other.com/").unwrap()).is_some());
        assert!(target_refused(&f, &Url::parse("http://a.example.com/").unwrap()).is_some());
    }
}
