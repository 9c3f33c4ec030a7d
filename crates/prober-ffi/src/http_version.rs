//! The HTTP version of HTTP probes (issue 26): HTTP/2 over HTTPS by ALPN as the kubelet's
//! transport, HTTP/1.1 forced, or h2c with prior knowledge (`httpGet.protocol: HTTP2`).

use prober_core::{HttpSpec, HttpVersion};

use crate::enums::c_enum;
use crate::kind::require_kind;
use crate::ptr::ExclusiveHandle;
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

c_enum! {
    /// HTTP versions of HTTP probes (`prober_spec_set_http_version`).
    pub enum prober_http_version of HttpVersion {
        /// The kubelet's: HTTP/1.1 on `http://`; on `https://` TLS offers ALPN `h2` and `http/1.1`
        /// and the probe speaks whichever the server picks.
        PROBER_HTTP_VERSION_AUTO = 0 => Auto,
        /// HTTP/1.1 only: ALPN offers `http/1.1` alone (the kubelet run with `DISABLE_HTTP2`).
        PROBER_HTTP_VERSION_HTTP1 = 1 => Http1,
        /// HTTP/2 over cleartext with prior knowledge (h2c) on `http://` URLs: the kubelet's
        /// `httpGet.protocol: HTTP2` (KEP-5999).
        PROBER_HTTP_VERSION_H2C = 2 => H2c,
    }
}

/// Sets the HTTP version of an HTTP probe: one of `PROBER_HTTP_VERSION_*` (default
/// `PROBER_HTTP_VERSION_AUTO`). Status, headers, body limit, redirects and expectations are
/// the same on HTTP/1.1 and HTTP/2; one connection carries one request on HTTP/2.
///
/// Errors: `PROBER_E_INVALID_ENUM` for another value, `PROBER_E_WRONG_KIND` for a probe that
/// is not HTTP, `PROBER_E_INVALID` for `PROBER_HTTP_VERSION_H2C` on an `https://` URL.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_http_version(
    spec: *mut prober_spec,
    version: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let Some(v) = prober_http_version::from_code(version) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{version} is not a PROBER_HTTP_VERSION_* value"),
            ));
        };
        require_kind::<HttpSpec>(&mut s.spec, "an HTTP version applies to")?;
        s.spec.set_http_version(v).map_err(|e| spec_status(&e))
    })
}
