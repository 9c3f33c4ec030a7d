//! HTTP probes through an HTTP proxy (beyond the kubelet; blackbox_exporter's `proxy_url`,
//! `no_proxy`, `proxy_connect_header`). See docs/semantics.md.

use std::ffi::c_char;

use prober_core::{HttpProxy, HttpSpec};

use crate::kind::{kind_mut, require_kind};
use crate::ptr::{ExclusiveHandle, try_str_from_ptr};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

/// The proxy of an HTTP spec, for the setters that need one set first.
fn proxy_of(spec: *mut prober_spec, what: &str) -> Result<HttpProxy, prober_status> {
    let s = prober_spec::try_mut_from_ptr(spec)?;
    let h = kind_mut::<HttpSpec>(&mut s.spec, &format!("{what} applies to"))?;
    match &h.proxy {
        Some(p) => Ok((**p).clone()),
        None => {
            Err(set_error(PROBER_E_INVALID, format!("{what} needs prober_spec_set_proxy first")))
        }
    }
}

/// Sends an HTTP probe's requests through the HTTP proxy at `url`
/// (`http://[user:password@]host[:port]`, or `host:port`; port 80 by default); NULL: straight
/// to the target (the default). `http://` URLs are requested from the proxy in absolute form,
/// `https://` ones through a `CONNECT host:port` tunnel with TLS to the target inside it; the
/// proxy resolves the target's name. User and password are sent as `Proxy-Authorization:
/// Basic` and never printed. A `CONNECT` answered with a status other than 2xx is a Failure
/// with reason `PROBER_REASON_STATUS` naming the proxy and the status; a proxy that cannot be
/// reached is a Failure as a target would be (`proxyconnect tcp: ...`). The allow-list checks
/// the proxy's address as any peer's, and the target's name and port (its address when it is
/// an IP literal) before anything is sent. Every host is proxied, loopback too, unless
/// `prober_spec_set_no_proxy` says otherwise; a Unix socket, when set, wins.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL spec, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe
/// that is not HTTP, `PROBER_E_INVALID` for another scheme (`https://`, `socks5://`), a path or
/// a bad host or port, `PROBER_E_INVALID_HOST` for a host the spec refuses (the message never
/// quotes the password).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `url` must be
/// NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_proxy(
    spec: *mut prober_spec,
    url: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        require_kind::<HttpSpec>(&mut s.spec, "a proxy applies to")?;
        let proxy = match url.is_null() {
            true => None,
            false => {
                let url = try_str_from_ptr(url, "url")?;
                Some(HttpProxy::new(url).map_err(|e| spec_status(&e))?)
            }
        };
        s.spec.set_http_proxy(proxy).map_err(|e| spec_status(&e))
    })
}

/// Sets the hosts an HTTP probe with a proxy reaches without it, read as Go's `NO_PROXY`:
/// comma-separated `*`, IP addresses or networks (`10.0.0.0/8`), domains (`example.com`: it and
/// its subdomains; `.example.com`: subdomains only), optionally with `:port`. With a list,
/// `localhost` and loopback addresses are never proxied (Go's rule).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe that is not
/// HTTP, `PROBER_E_INVALID` without a proxy set or for more than 1024 entries or 64 KiB.
///
/// # Safety
/// As `prober_spec_set_proxy`; `list` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_no_proxy(
    spec: *mut prober_spec,
    list: *const c_char,
) -> prober_status {
    guard_status(|| {
        let mut proxy = proxy_of(spec, "a no-proxy list")?;
        let list = try_str_from_ptr(list, "list")?;
        proxy.set_no_proxy(list).map_err(|e| spec_status(&e))?;
        let s = prober_spec::try_mut_from_ptr(spec)?;
        s.spec.set_http_proxy(Some(proxy)).map_err(|e| spec_status(&e))
    })
}

/// Adds a header to the `CONNECT` request an HTTP probe with a proxy sends for `https://`
/// targets (blackbox_exporter's `proxy_connect_header`); its value is never printed. At most
/// 64.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe that is not
/// HTTP, `PROBER_E_INVALID` without a proxy set or past 64 headers, `PROBER_E_INVALID_HEADER`
/// for a name that is not a token or a value with control characters.
///
/// # Safety
/// As `prober_spec_set_proxy`; `name` and `value` must be NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_proxy_connect_header(
    spec: *mut prober_spec,
    name: *const c_char,
    value: *const c_char,
) -> prober_status {
    guard_status(|| {
        let mut proxy = proxy_of(spec, "a CONNECT header")?;
        let name = try_str_from_ptr(name, "name")?;
        let value = try_str_from_ptr(value, "value")?;
        proxy.add_connect_header(name, value).map_err(|e| spec_status(&e))?;
        let s = prober_spec::try_mut_from_ptr(spec)?;
        s.spec.set_http_proxy(Some(proxy)).map_err(|e| spec_status(&e))
    })
}
