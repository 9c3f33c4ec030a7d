//! Setters of the extensions beyond the kubelet (see "Beyond the kubelet" in
//! `docs/semantics.md`): expected statuses and body expressions of HTTP probes, send/expect
//! of TCP probes, per-state periods and jitter on every period. Kept apart from `spec.rs` so that the kubelet's setters
//! read as they did.
//!
//! Errors: a setter that does not apply to the spec's kind gives `PROBER_E_WRONG_KIND`; a
//! malformed status set or regular expression `PROBER_E_INVALID`; a period out of range
//! `PROBER_E_INVALID_DURATION`; a jitter percentage out of range `PROBER_E_INVALID`. The text
//! is in `prober_last_error`.

use std::ffi::c_char;

use prober_core::{
    ConnectOption, HttpSpec, MAX_JITTER_PERCENT, MAX_SEND_LEN, Pattern, StatusSet, TcpSpec,
};

use crate::kind::require_kind;
use crate::ptr::{ExclusiveHandle, try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{period, prober_spec, set_schedule, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

/// Borrows the spec of an HTTP-only setter and reads its string argument `text`, named `what`.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL spec or string, `PROBER_E_INVALID_UTF8`, and
/// `PROBER_E_WRONG_KIND` when the spec is not an HTTP probe.
fn http_arg<'a>(
    spec: *mut prober_spec,
    text: *const c_char,
    what: &str,
) -> Result<(&'a mut prober_spec, &'a str), prober_status> {
    let s = prober_spec::try_mut_from_ptr(spec)?;
    let text = try_str_from_ptr(text, what)?;
    require_kind::<HttpSpec>(&mut s.spec, &format!("{what} applies to"))?;
    Ok((s, text))
}

/// Makes an HTTP probe's final statuses in `set` Success and every other status a Failure
/// (reason `PROBER_REASON_STATUS`), instead of the kubelet's 2xx-success / 3xx-warning rule.
/// `set` lists codes and inclusive ranges separated by commas, such as `"200-299,418"`
/// (codes 100 to 999). Redirects are still followed per the redirect policy first.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `set` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_expect_status(
    spec: *mut prober_spec,
    set: *const c_char,
) -> prober_status {
    guard_status(|| {
        let (s, text) = http_arg(spec, set, "an expected status set")?;
        let set = StatusSet::parse(text).map_err(|e| spec_status(&e))?;
        s.spec.set_expect_status(set).map_err(|e| spec_status(&e))
    })
}

/// Requires the kept body of an HTTP probe (at most the output limit, 10240 bytes by default)
/// to match the regular expression `regex` (Rust `regex` syntax, unanchored, ASCII classes,
/// at most 4096 bytes, not empty; compiled here, once). A response that passed on its status but whose body does not
/// match is a Failure with `PROBER_REASON_BODY`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `regex` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_expect_body(
    spec: *mut prober_spec,
    regex: *const c_char,
) -> prober_status {
    guard_status(|| {
        let (s, text) = http_arg(spec, regex, "a body regular expression")?;
        let pattern = Pattern::new(text).map_err(|e| spec_status(&e))?;
        s.spec.set_expect_body(pattern).map_err(|e| spec_status(&e))
    })
}

/// Makes a TCP probe write the `len` bytes at `data` once connected (any bytes, NUL included;
/// at most 10240; `len` 0 sends nothing). With `prober_spec_set_tcp_expect` the reply is then
/// read; without it the probe succeeds once the bytes are written.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `data` must
/// be NULL (only with `len` 0) or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tcp_send(
    spec: *mut prober_spec,
    data: *const u8,
    len: usize,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let bytes = try_slice_from_ptr(data, len, "data")?;
        require_kind::<TcpSpec>(&mut s.spec, "data to send applies to")?;
        if len > MAX_SEND_LEN {
            return Err(set_error(
                PROBER_E_INVALID,
                format!("data to send is {len} bytes (at most {MAX_SEND_LEN})"),
            ));
        }
        s.spec.set_send(bytes.to_vec()).map_err(|e| spec_status(&e))
    })
}

/// Makes a TCP probe read the reply after connecting (and sending, see
/// `prober_spec_set_tcp_send`) until it matches the regular expression `regex` (Success), or
/// the peer closes or 10240 bytes arrived without a match (Failure, `PROBER_REASON_BODY`), or
/// the deadline passes (Failure, `PROBER_REASON_TIMEOUT`); the message says what arrived and
/// the reply is the outcome's output. Alone, it waits for a banner. An empty `regex` is
/// refused (`PROBER_E_INVALID`): it would match any reply.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `regex` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tcp_expect(
    spec: *mut prober_spec,
    regex: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let text = try_str_from_ptr(regex, "regex")?;
        require_kind::<TcpSpec>(&mut s.spec, "an expected reply applies to")?;
        let pattern = Pattern::new(text).map_err(|e| spec_status(&e))?;
        s.spec.set_expect_reply(pattern).map_err(|e| spec_status(&e))
    })
}

/// Sets the period while the published value is Failure (HAProxy `downinter`, Envoy
/// `unhealthy_interval`), in milliseconds (1 ms to 7 days; default: the period).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_unhealthy_period_ms(
    spec: *mut prober_spec,
    ms: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID_DURATION, |s| {
        s.unhealthy_period = Some(period("unhealthy period", ms)?);
        Ok(())
    })
}

/// Sets the period while the latest results disagree with the published value and count
/// towards a threshold (HAProxy `fastinter`), in milliseconds (1 ms to 7 days; default: the
/// period of the published state). It takes precedence over the unhealthy period.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_transition_period_ms(
    spec: *mut prober_spec,
    ms: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID_DURATION, |s| {
        s.transition_period = Some(period("transition period", ms)?);
        Ok(())
    })
}

/// Draws every period (normal, unhealthy, transition) from period ± `percent` % (0 to 50;
/// default 0, exact periods), as Envoy's `interval_jitter_percent`. Independent of
/// `prober_spec_set_jitter`, which spreads the first run.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_jitter_percent(
    spec: *mut prober_spec,
    percent: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID, |s| {
        if percent > MAX_JITTER_PERCENT {
            return Err(format!("invalid jitter {percent}% (expected 0 to {MAX_JITTER_PERCENT})"));
        }
        s.jitter_percent = percent;
        Ok(())
    })
}

/// Keeps an HTTP or gRPC probe's connection alive between runs (default off: the kubelet's
/// one connection per run, closed after it). Runs to the same origin (scheme, host, port, TLS
/// options) then reuse an idle connection the engine holds: for HTTP an HTTP/1.1 connection,
/// the request carrying no `Connection: close`; for gRPC the HTTP/2 connection, one stream per
/// check (a GOAWAY, a reset, an idle timeout or a run that times out drops it). Verdicts are
/// the kubelet's. Only an engine keeps connections: `prober_check` makes and closes one per
/// call as without it. See docs/semantics.md.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_keep_alive(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        s.spec
            .options_taking(ConnectOption::KeepAlive, "keep-alive applies to")
            .map_err(|e| set_error(PROBER_E_WRONG_KIND, e))?;
        s.spec.set_keep_alive(on).map_err(|e| spec_status(&e))
    })
}
