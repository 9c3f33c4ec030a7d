//! Setters of the request options beyond the kubelet (issue 25; "Beyond the kubelet" in
//! `docs/semantics.md`): the method and body of HTTP probes, Unix sockets, gRPC metadata,
//! user agent and authority, STARTTLS of TCP probes.
//!
//! Errors: a setter that does not apply to the spec's kind gives `PROBER_E_WRONG_KIND`; a value
//! that is refused `PROBER_E_INVALID`. The text is in `prober_last_error`.

use std::ffi::c_char;

use prober_core::{
    GrpcSpec, HttpSpec, MAX_BODY_LEN, ProbeSpec, TcpSpec, UnixSocket, validate_method,
};

use crate::kind::require_kind;
use crate::ptr::{ExclusiveHandle, Out, try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{new_spec, prober_spec, spec_of_kind, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

/// The spec of a setter that applies to HTTP probes only, `what` naming the option.
fn http_spec<'a>(spec: *mut prober_spec, what: &str) -> Result<&'a mut prober_spec, prober_status> {
    spec_of_kind::<HttpSpec>(spec, &format!("{what} applies to"))
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

/// A Unix socket named in gRPC's way (`unix:PATH`, `unix:///ABSOLUTE`, `unix-abstract:NAME`)
/// or as a plain path (curl's `--unix-socket PATH`).
fn unix_socket(text: *const c_char) -> Result<UnixSocket, prober_status> {
    let text = try_str_from_ptr(text, "socket")?;
    UnixSocket::parse(text).map_err(|e| set_error(PROBER_E_INVALID, e))
}

/// A connect check of a Unix socket: `socket` is a path (`"/run/app.sock"`), or in gRPC's
/// naming `"unix:///run/app.sock"`, `"unix:relative.sock"` or `"unix-abstract:NAME"` (Linux's
/// abstract namespace). The TCP probe's rules apply (connect within the deadline; send/expect
/// with `prober_spec_set_tcp_send` and `_tcp_expect`). A missing socket file is a Failure with
/// `PROBER_REASON_REFUSED`, as nothing listens there. On success `*out` owns a new spec.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID` for an empty path, one with a
/// NUL byte or longer than 107 bytes, or `unix://HOST/...`.
///
/// # Safety
/// `socket` must be NULL or a NUL-terminated string; `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_unix(
    socket: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        new_spec(ProbeSpec::unix(unix_socket(socket)?), out)
    })
}

/// Makes an HTTP, TCP or gRPC probe connect through the Unix socket `socket` (named as for
/// `prober_spec_new_unix`) instead of to its host and port, as curl's `--unix-socket` does.
/// An HTTP probe still sends its URL's host as `Host` (and SNI for `https://`) and follows
/// redirects through the same socket; a gRPC probe sends its host alone as `:authority`
/// (create it with host `"localhost"`, as grpc-go sends for `unix:` targets; its port is then
/// ignored). Keep-alive connections are kept per socket.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID` (as `prober_spec_new_unix`),
/// `PROBER_E_WRONG_KIND` for an exec probe.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `socket`
/// must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_unix_socket(
    spec: *mut prober_spec,
    socket: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let socket = unix_socket(socket)?;
        // The kinds that never connect; the network kinds that do not take a socket are
        // refused by the spec, with `PROBER_E_INVALID`.
        if s.spec.connect_options().is_none() {
            return Err(set_error(
                PROBER_E_WRONG_KIND,
                "a Unix socket applies to HTTP, TCP and gRPC probes only",
            ));
        }
        s.spec.set_unix_socket(socket).map_err(|e| spec_status(&e))
    })
}

/// The spec of a setter that applies to gRPC probes only, `what` naming the option.
fn grpc_spec<'a>(spec: *mut prober_spec, what: &str) -> Result<&'a mut prober_spec, prober_status> {
    spec_of_kind::<GrpcSpec>(spec, &format!("{what} applies to"))
}

/// Adds a metadata pair to a gRPC probe's request (grpc-health-probe's `-rpc-header`),
/// repeated keys in order. Validated as gRPC requires: keys of `0-9 a-z _ - .` (letters sent
/// in lower case, as grpc-go does), not `grpc-*`, `:*`, `content-type`, `te`, `user-agent`
/// (see `prober_spec_set_grpc_user_agent`) or `grpc-timeout`; values printable ASCII, or
/// base64 (padded or not) for keys ending in `-bin`, sent as written.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe that is not
/// gRPC, `PROBER_E_INVALID` for a pair gRPC would refuse.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `key` and
/// `value` must be NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_grpc_metadata(
    spec: *mut prober_spec,
    key: *const c_char,
    value: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = grpc_spec(spec, "gRPC metadata")?;
        let key = try_str_from_ptr(key, "key")?;
        let value = try_str_from_ptr(value, "value")?;
        s.spec.add_grpc_metadata(key, value).map_err(|e| set_error(PROBER_E_INVALID, e))
    })
}

/// Sets the `user-agent` of a gRPC probe (grpc-health-probe's `-user-agent`; default
/// `kube-probe/<version>`, as the kubelet), sent as given.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND`, `PROBER_E_INVALID` for an
/// empty value or one with control characters.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call;
/// `user_agent` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_grpc_user_agent(
    spec: *mut prober_spec,
    user_agent: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = grpc_spec(spec, "a gRPC user agent")?;
        let ua = try_str_from_ptr(user_agent, "user_agent")?;
        s.spec.set_grpc_user_agent(ua).map_err(|e| set_error(PROBER_E_INVALID, e))
    })
}

/// Sets the `:authority` of a gRPC probe (grpc-go's `WithAuthority`), `host[:port]`. Without
/// it the authority is the TLS server name when one is set (as grpc-go and
/// grpc-health-probe's `-tls-server-name`), else `host:port` (the host alone through a Unix
/// socket).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND`, `PROBER_E_INVALID` for a
/// value that is not `host[:port]`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `authority`
/// must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_grpc_authority(
    spec: *mut prober_spec,
    authority: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = grpc_spec(spec, "a gRPC authority")?;
        let authority = try_str_from_ptr(authority, "authority")?;
        s.spec.set_grpc_authority(authority).map_err(|e| set_error(PROBER_E_INVALID, e))
    })
}

/// Turns STARTTLS on or off for a TCP probe (blackbox_exporter's `starttls`): the send/expect
/// exchange (`prober_spec_set_tcp_send`, `_tcp_expect`: the server's go-ahead, such as
/// `"^220 "` after `"STARTTLS\r\n"`) runs in plain text, then TLS shakes hands on the same
/// connection with the spec's TLS options (`prober_spec_set_tls_*`; the default, unverified,
/// when none are set). Success needs the handshake.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_WRONG_KIND` for a probe that is not TCP.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tcp_starttls(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        require_kind::<TcpSpec>(&mut s.spec, "STARTTLS applies to")?;
        s.spec.set_starttls(on).map_err(|e| spec_status(&e))
    })
}
