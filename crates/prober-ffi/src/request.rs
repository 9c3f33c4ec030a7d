//! Setters of the request options beyond the kubelet (issue 25; "Beyond the kubelet" in
//! `docs/semantics.md`): the method and body of HTTP probes.
//!
//! Errors: a setter that does not apply to the spec's kind gives `PROBER_E_WRONG_KIND`; a value
//! that is refused `PROBER_E_INVALID`. The text is in `prober_last_error`.

use std::ffi::c_char;

use prober_core::{MAX_BODY_LEN, ProbeKind, validate_method};

use crate::ptr::{ExclusiveHandle, try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

/// The spec of a setter that applies to HTTP probes only, `what` naming the option.
fn http_spec<'a>(spec: *mut prober_spec, what: &str) -> Result<&'a mut prober_spec, prober_status> {
    let s = prober_spec::try_mut_from_ptr(spec)?;
    if !matches!(s.spec.kind, ProbeKind::Http(_)) {
        return Err(set_error(PROBER_E_WRONG_KIND, format!("{what} applies to HTTP probes only")));
    }
    Ok(s)
}

/// Sets the method of an HTTP probe (default `"GET"`): any HTTP token, case kept (`"POST"`,
/// `"HEAD"`, `"PURGE"`); `CONNECT` is refused. `HEAD` reads no body. Redirects follow Go's
/// client: 301, 302 and 303 turn any method but `GET` and `HEAD` into a `GET` without body,
/// 307 and 308 keep the method and the body. Errors name the first request's method as Go
/// does (`Post "http://...": ...`).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe that is not
/// HTTP, `PROBER_E_INVALID` for a method that is not a token.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `method`
/// must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_method(
    spec: *mut prober_spec,
    method: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = http_spec(spec, "an HTTP method")?;
        let method = try_str_from_ptr(method, "method")?;
        validate_method(method).map_err(|e| set_error(PROBER_E_INVALID, e))?;
        s.spec.set_method(method).map_err(|e| spec_status(&e))
    })
}

/// Sets the body of an HTTP probe's request: the `len` bytes at `data` (any bytes, at most
/// 65536), sent with `Content-Length` whatever the method (a user `Content-Length` header is
/// ignored); `len` 0 sends none (then `POST`, `PUT` and `PATCH` say `Content-Length: 0`, as
/// Go's client does). Set a `Content-Type` with `prober_spec_add_header`.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL spec, or NULL `data` with `len` > 0; `PROBER_E_WRONG_KIND` for
/// a probe that is not HTTP; `PROBER_E_INVALID` for more than 65536 bytes.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `data` must
/// be NULL (only with `len` 0) or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_body(
    spec: *mut prober_spec,
    data: *const u8,
    len: usize,
) -> prober_status {
    guard_status(|| {
        let s = http_spec(spec, "a request body")?;
        if len > MAX_BODY_LEN {
            return Err(set_error(
                PROBER_E_INVALID,
                format!("request body is {len} bytes (at most {MAX_BODY_LEN})"),
            ));
        }
        let bytes = try_slice_from_ptr(data, len, "data")?;
        s.spec.set_body(bytes.to_vec()).map_err(|e| spec_status(&e))
    })
}
