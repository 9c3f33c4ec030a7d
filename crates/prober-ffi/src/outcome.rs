//! Outcomes of one-shot checks, and the blocking `prober_check`.

use std::ffi::{CString, c_char};
use std::sync::OnceLock;
use std::time::Duration;

use prober_core::{Outcome, ProbeResult, Reason, Role};

use crate::enums::c_enum;
use crate::ptr::{BoxedHandle, Out};
use crate::spec::prober_spec;
use crate::status::*;
use crate::{guard, guard_status, nul_terminated, prober_str};

c_enum! {
    /// Probe results (the kubelet's four).
    pub enum prober_result of ProbeResult, default PROBER_RESULT_UNKNOWN {
        /// The target answered as healthy (for example: it accepted the connection, an HTTP 2xx,
        /// exit code 0, gRPC SERVING).
        PROBER_RESULT_SUCCESS = 0 => Success,
        /// Logically a success: an HTTP 3xx that was not followed.
        PROBER_RESULT_WARNING = 1 => Warning,
        /// The target answered as unhealthy, or did not answer in time (the reason says how).
        PROBER_RESULT_FAILURE = 2 => Failure,
        /// The probe could not be run (see the message).
        PROBER_RESULT_UNKNOWN = 3 => Unknown,
    }
}

c_enum! {
    /// Probe roles of a target's workers.
    pub enum prober_role of Role {
        /// Gates the other two: they do not run until it has succeeded once.
        PROBER_ROLE_STARTUP = 0 => Startup,
        /// Whether the target should receive traffic.
        PROBER_ROLE_READINESS = 1 => Readiness,
        /// Whether the target is alive: the kubelet restarts a container whose liveness fails.
        PROBER_ROLE_LIVENESS = 2 => Liveness,
    }
}

c_enum! {
    /// Machine-readable causes of an outcome. Numbers are never reused.
    pub enum prober_reason of Reason, default PROBER_REASON_NONE {
        /// Nothing went wrong (Success), or no more specific reason applies.
        PROBER_REASON_NONE = 0 => None,
        /// The connection was refused (an RST in answer to the SYN).
        PROBER_REASON_REFUSED = 1 => Refused,
        /// The probe's deadline passed (connect, headers, body, or command).
        PROBER_REASON_TIMEOUT = 2 => Timeout,
        /// The peer reset the connection after it was established.
        PROBER_REASON_RESET = 3 => Reset,
        /// Network or host unreachable, or another connect error.
        PROBER_REASON_UNREACHABLE = 4 => Unreachable,
        /// The host name could not be resolved.
        PROBER_REASON_DNS = 5 => Dns,
        /// An HTTP status outside 200..=399, or outside the set given to
        /// `prober_spec_set_expect_status`.
        PROBER_REASON_STATUS = 6 => Status,
        /// A 3xx response that was not followed (Warning).
        PROBER_REASON_REDIRECT = 7 => Redirect,
        /// More than 10 redirects.
        PROBER_REASON_TOO_MANY_REDIRECTS = 8 => TooManyRedirects,
        /// The peer did not speak the protocol correctly (malformed HTTP/1.x or HTTP/2, an
        /// oversized head, bad framing, a Location that is not a URL; a TCP step's line over
        /// 65536 bytes, or a send template its match would expand past 10240 bytes).
        PROBER_REASON_PROTOCOL = 9 => Protocol,
        /// The body ended before its declared end.
        PROBER_REASON_BROKEN_BODY = 10 => BrokenBody,
        /// The command exited with a non-zero status.
        PROBER_REASON_EXIT_CODE = 11 => ExitCode,
        /// The command was ended by a signal it did not get from the library.
        PROBER_REASON_SIGNAL = 12 => Signal,
        /// The command could not be started (no such file, permission denied, ...).
        PROBER_REASON_SPAWN = 13 => Spawn,
        /// The probe needs a feature this build lacks.
        PROBER_REASON_UNSUPPORTED = 14 => Unsupported,
        /// Another I/O error of the local system (running out of something is
        /// `PROBER_REASON_RESOURCE`).
        PROBER_REASON_IO = 15 => Io,
        /// The probe was cancelled before it finished (target removed, engine freed).
        PROBER_REASON_CANCELLED = 16 => Cancelled,
        /// The TLS handshake or certificate verification failed, or TLS files were unusable.
        PROBER_REASON_TLS = 17 => Tls,
        /// A probe's own code failed inside the library (a caught panic); the run is Unknown and
        /// the message holds the panic's text. The engine and every other target go on.
        PROBER_REASON_INTERNAL = 18 => Internal,
        /// The node ran out of descriptors, buffer space, memory, threads or processes; always
        /// Unknown, never counted against the target.
        PROBER_REASON_RESOURCE = 19 => Resource,
        /// The HTTP body (or a TCP reply) did not match the expected regular expression, or a
        /// CEL expression over the HTTP body failed it.
        PROBER_REASON_BODY = 20 => Body,
        /// The destination was refused by the probe's allow-list of addresses (Rust API:
        /// `ProbeSpec::set_address_filter`); nothing was connected to.
        PROBER_REASON_DENIED = 21 => Denied,
        /// The probe's network namespace could not be used (no such path, not a network
        /// namespace, no permission to enter it); always Unknown, the target was never reached.
        PROBER_REASON_NAMESPACE = 22 => Namespace,
    }
}

/// Where the time of one run went, in microseconds; -1 for a phase that did not happen. Each
/// phase is the time from the start of the run to the moment it ended (curl's `-w`
/// convention: `connect_us <= tls_us <= first_byte_us <= total_us`); `resolve_us` is how long
/// the name lookup took.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prober_timings {
    /// How long the host name lookup took (-1 for IP literals, exec probes and runs on a kept
    /// connection).
    pub resolve_us: i64,
    /// From the start of the run to the established connection (-1 for exec probes, and for
    /// an HTTP or gRPC run on a connection kept from an earlier run:
    /// `prober_spec_set_keep_alive`).
    pub connect_us: i64,
    /// From the start of the run to the end of the TLS handshake (-1 without TLS, and on a
    /// kept connection).
    pub tls_us: i64,
    /// From the start of the run to the first byte of the response (HTTP, gRPC), of the
    /// reply (TCP send/expect) or of the output (exec).
    pub first_byte_us: i64,
    /// The whole run.
    pub total_us: i64,
}

/// The full outcome of one run. Opaque; from `prober_check`, freed with `prober_outcome_free`.
#[derive(Debug)]
pub struct prober_outcome {
    pub(crate) outcome: Outcome,
    /// `outcome.message` and `outcome.output`, each followed by a NUL byte.
    message: Vec<u8>,
    message_len: usize,
    output: Vec<u8>,
    output_len: usize,
}

impl BoxedHandle for prober_outcome {
    const NULL_ERROR: &'static str = "outcome is NULL";
}

impl prober_outcome {
    pub(crate) fn new(mut outcome: Outcome) -> prober_outcome {
        let (message, message_len) =
            nul_terminated(std::mem::take(&mut outcome.message).into_bytes());
        let (output, output_len) = nul_terminated(std::mem::take(&mut outcome.output));
        prober_outcome { outcome, message, message_len, output, output_len }
    }

    pub(crate) fn message(&self) -> prober_str {
        prober_str::of(&self.message[..self.message_len])
    }

    pub(crate) fn output(&self) -> prober_str {
        prober_str::of(&self.output[..self.output_len])
    }
}

pub(crate) fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

fn opt_micros(d: Option<Duration>) -> i64 {
    d.map_or(-1, |d| micros(d).min(i64::MAX as u64) as i64)
}

/// The C form of timings; all -1 for `None` (no run).
pub(crate) fn timings_of(t: Option<&prober_core::Timings>) -> prober_timings {
    match t {
        None => prober_timings {
            resolve_us: -1,
            connect_us: -1,
            tls_us: -1,
            first_byte_us: -1,
            total_us: -1,
        },
        Some(t) => prober_timings {
            resolve_us: opt_micros(t.resolve),
            connect_us: opt_micros(t.connect),
            tls_us: opt_micros(t.tls),
            first_byte_us: opt_micros(t.first_byte),
            total_us: opt_micros(Some(t.total)),
        },
    }
}

/// NUL-terminated copies of `names`, made on first use and kept for the life of the process
/// (the names are Rust's, so C and the `prober` command can never print different ones).
fn c_names(
    cell: &'static OnceLock<Vec<CString>>,
    names: impl Iterator<Item = &'static str>,
) -> &'static [CString] {
    cell.get_or_init(|| names.map(|n| CString::new(n).unwrap_or_default()).collect())
}

/// The name of a result as the `prober` command prints it (`"success"`, `"warning"`,
/// `"failure"`, `"unknown"`): static, NUL-terminated, never NULL, never freed. A number this
/// library does not define gives `"invalid result"`.
#[unsafe(no_mangle)]
pub extern "C" fn prober_result_name(result: u32) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    guard(|| {
        let names = c_names(&NAMES, prober_result::ALL.iter().map(|r| r.as_str()));
        names.get(result as usize).map(|n| n.as_ptr())
    })
    .unwrap_or(c"invalid result".as_ptr())
}

/// The name of a reason as the `prober` command prints it (`"refused"`, `"timeout"`,
/// `"too_many_redirects"`, ...): static, NUL-terminated, never NULL, never freed. A number
/// this library does not define (one from a newer header) gives `"invalid reason"`.
#[unsafe(no_mangle)]
pub extern "C" fn prober_reason_name(reason: u32) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    guard(|| {
        let names = c_names(&NAMES, prober_reason::ALL.iter().map(|r| r.as_str()));
        names.get(reason as usize).map(|n| n.as_ptr())
    })
    .unwrap_or(c"invalid reason".as_ptr())
}

/// Runs `spec` once, blocking the calling thread for at most its timeout, and on success stores
/// the outcome in `*out` (free it with `prober_outcome_free`). A probe that fails is still
/// `PROBER_OK`: the failure is in the outcome. Any thread may call this concurrently with
/// other calls that do not share the spec.
///
/// # Safety
/// `spec` must be NULL or a live spec; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_check(
    spec: *const prober_spec,
    out: *mut *mut prober_outcome,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_ref_from_ptr(spec)?;
        let out = Out::try_from_ptr(out, "out")?;
        let outcome = ::prober_engine::check(&s.spec);
        out.write(prober_outcome::new(outcome).to_boxed_mut_ptr());
        Ok(())
    })
}

/// Frees an outcome. NULL is accepted and ignored.
///
/// # Safety
/// `o` must be NULL or an outcome from this library not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_free(o: *mut prober_outcome) {
    guard(|| prober_outcome::free_boxed_ptr(o))
}

/// The result (`PROBER_RESULT_*`); `PROBER_RESULT_UNKNOWN` for NULL.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_result(o: *const prober_outcome) -> u32 {
    guard(|| prober_outcome::ref_from_ptr(o).map(|o| prober_result::code_of(o.outcome.result)))
        .unwrap_or(prober_result::PROBER_RESULT_UNKNOWN as u32)
}

/// The reason (`PROBER_REASON_*`); `PROBER_REASON_NONE` for NULL.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_reason(o: *const prober_outcome) -> u32 {
    guard(|| {
        prober_outcome::ref_from_ptr(o).map_or(0, |o| prober_reason::code_of(o.outcome.reason))
    })
}

/// The message, in the kubelet's wording; valid while the outcome lives. Empty for NULL.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_message(o: *const prober_outcome) -> prober_str {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(prober_str::empty(), |o| o.message()))
}

/// The captured output (HTTP body or command output, at most the output limit); valid while
/// the outcome lives. May contain NUL bytes: use `len`. Empty for NULL.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_output(o: *const prober_outcome) -> prober_str {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(prober_str::empty(), |o| o.output()))
}

/// True when more output was seen than kept.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_truncated(o: *const prober_outcome) -> bool {
    guard(|| prober_outcome::ref_from_ptr(o).is_some_and(|o| o.outcome.truncated))
}

/// Output bytes seen in all, kept or not.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_output_total(o: *const prober_outcome) -> u64 {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(0, |o| o.outcome.output_total))
}

/// The whole run's duration in microseconds.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_duration_us(o: *const prober_outcome) -> u64 {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(0, |o| micros(o.outcome.timings.total)))
}

/// The final HTTP status, or 0 when there was none.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_http_status(o: *const prober_outcome) -> u32 {
    guard(|| {
        prober_outcome::ref_from_ptr(o).and_then(|o| o.outcome.http_status).map_or(0, u32::from)
    })
}

/// The command's exit code, or -1 when it did not exit normally (or was not a command).
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_exit_code(o: *const prober_outcome) -> i32 {
    guard(|| prober_outcome::ref_from_ptr(o).and_then(|o| o.outcome.exit_code).unwrap_or(-1))
}

/// Copies the timings into `*out`.
///
/// # Safety
/// `o` must be NULL or a live outcome; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_timings(
    o: *const prober_outcome,
    out: *mut prober_timings,
) -> prober_status {
    guard_status(|| {
        let o = prober_outcome::try_ref_from_ptr(o)?;
        Out::try_from_ptr(out, "out")?.write(timings_of(Some(&o.outcome.timings)));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_indexed_by_number() {
        for (i, r) in prober_reason::ALL.iter().enumerate() {
            assert_eq!(prober_reason::code_of(*r) as usize, i);
            assert_eq!(prober_reason::from_code(i as u32), Some(*r));
        }
        for (i, r) in prober_result::ALL.iter().enumerate() {
            assert_eq!(prober_result::code_of(*r) as usize, i);
            assert_eq!(prober_result::from_code(i as u32), Some(*r));
        }
    }
}
