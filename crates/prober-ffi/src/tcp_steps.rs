//! Multi-step TCP exchanges (blackbox_exporter's `query_response`): one call appends one step.

use std::ffi::c_char;

use prober_core::{Pattern, TcpSpec, TcpStep};

use crate::enums::c_enum;
use crate::ptr::{try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{prober_spec, spec_of_kind, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

c_enum! {
    /// Flags of `prober_spec_add_tcp_step_with_flags`, or-ed together.
    pub enum prober_tcp_step_flags, flags {
        /// `send` is a template of the match: `$1`, `${1}`, `${name}` are replaced with the
        /// groups of the line `expect` matched and `$$` with `$` (blackbox_exporter's `send`).
        /// Needs `expect`.
        PROBER_TCP_STEP_EXPAND = 1,
        /// Shake hands with TLS after this step (STARTTLS); at most one step.
        PROBER_TCP_STEP_STARTTLS = 2,
        /// `send` is a line: a `\n` is written after it, and nothing at all when it is empty
        /// once expanded (blackbox_exporter's `send`).
        PROBER_TCP_STEP_LINE = 4,
    }
}

use prober_tcp_step_flags::PROBER_TCP_STEP_STARTTLS as STARTTLS;
use prober_tcp_step_flags::{PROBER_TCP_STEP_EXPAND as EXPAND, PROBER_TCP_STEP_LINE as LINE};

/// Appends a step to a TCP probe's exchange. In order, the step: with `expect` (not NULL),
/// reads lines of the reply until one matches that regular expression (a line ends at `\n`;
/// it and a `\r` before it are not part of the line; an unterminated last line before the
/// peer closes counts); then writes the `send_len` bytes at `send` as they are (no line end is
/// added; 0: nothing, at most 10240); then, with `starttls`, shakes hands with TLS on the
/// connection (the spec's TLS options, the default unverified ones when none are set), the
/// following steps going through TLS. With `expand`, `send` is a template: `$1`, `${1}`,
/// `${name}` are replaced with the groups of the line `expect` matched and `$$` with `$` (as
/// blackbox_exporter's `send`); without it a `$` is sent as it is. The same as
/// `prober_spec_add_tcp_step_with_flags` with `PROBER_TCP_STEP_EXPAND` and
/// `PROBER_TCP_STEP_STARTTLS`.
///
/// The steps share the probe's timeout. Lines are dropped once scanned; a line is at most
/// 65536 bytes with its end, and the steps read at most 1 MiB in all; the outcome's output is
/// the first 10240 bytes read (whatever the output limit), `output_total` counts them all. A
/// step whose expect sees the peer close (or the 1 MiB) first is a Failure with
/// `PROBER_REASON_BODY` and a message naming it (`step 3 of 9: no line matched
/// "^250-STARTTLS": ...`); a longer line, or a template that would expand past 10240 bytes,
/// is a Failure with `PROBER_REASON_PROTOCOL`, named the same way.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_WRONG_KIND` for a probe that is not TCP,
/// `PROBER_E_INVALID` for a spec with the single send/expect/STARTTLS
/// (`prober_spec_set_tcp_send`, `_tcp_expect`, `_tcp_starttls`: one or the other), an invalid
/// or empty expression, `expand` without `expect`, a second STARTTLS step, more than 64
/// steps or more than 10240 bytes to send. The spec is unchanged on error.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `expect`
/// must be NULL or a NUL-terminated string; `send` must be NULL (only with `send_len` 0) or
/// point to `send_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_tcp_step(
    spec: *mut prober_spec,
    expect: *const c_char,
    send: *const u8,
    send_len: usize,
    expand: bool,
    starttls: bool,
) -> prober_status {
    let flags = if expand { EXPAND as u32 } else { 0 } | if starttls { STARTTLS as u32 } else { 0 };
    // SAFETY: the caller's guarantees are this function's, passed on as they are.
    unsafe { prober_spec_add_tcp_step_with_flags(spec, expect, send, send_len, flags) }
}

/// `prober_spec_add_tcp_step` with its options as `PROBER_TCP_STEP_*` flags or-ed together,
/// which also take `PROBER_TCP_STEP_LINE`: `send` is written with a `\n` after it, and not at
/// all when it is empty once expanded (blackbox_exporter's `send: "${1}"` with an empty group
/// writes nothing).
///
/// # Errors
/// As `prober_spec_add_tcp_step`, and `PROBER_E_INVALID` for an unknown flag.
///
/// # Safety
/// As `prober_spec_add_tcp_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_tcp_step_with_flags(
    spec: *mut prober_spec,
    expect: *const c_char,
    send: *const u8,
    send_len: usize,
    flags: u32,
) -> prober_status {
    guard_status(|| {
        let s = tcp_spec_taking_flags(spec, flags)?;
        let expect = if expect.is_null() {
            None
        } else {
            let text = try_str_from_ptr(expect, "expect")?;
            Some(Pattern::new(text).map_err(|e| spec_status(&e))?)
        };
        let send = try_slice_from_ptr(send, send_len, "send")?.to_vec();
        let step = TcpStep {
            expect,
            send,
            expand: EXPAND.is_in(flags),
            line: LINE.is_in(flags),
            starttls: STARTTLS.is_in(flags),
            ..TcpStep::default()
        };
        s.spec.add_tcp_step(step).map_err(|e| spec_status(&e))
    })
}

/// Appends a step that reads exactly `expect_bytes_len` bytes of the reply, lines or not
/// (bytes a step before left first), and requires them to be the bytes at `expect_bytes`
/// (blackbox_exporter's `expect_bytes`, for a binary greeting); then writes `send` and, with
/// `PROBER_TCP_STEP_STARTTLS`, shakes hands, as `prober_spec_add_tcp_step_with_flags` does.
/// `flags` take `PROBER_TCP_STEP_LINE` and `PROBER_TCP_STEP_STARTTLS` (`EXPAND` needs an
/// expression: refused). Other bytes fail the probe with `PROBER_REASON_BODY` and a message
/// `step N of M: the bytes read differ from those expected (...)`; the peer closing before they
/// all came, with `PROBER_REASON_BODY` and `... the peer closed the connection after K of the N
/// expected bytes`.
///
/// # Errors
/// As `prober_spec_add_tcp_step_with_flags`, and `PROBER_E_INVALID` for no bytes to expect
/// (`expect_bytes_len` 0) or more than 65536.
///
/// # Safety
/// As `prober_spec_add_tcp_step`; `expect_bytes` must point to `expect_bytes_len` readable
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_tcp_step_expect_bytes(
    spec: *mut prober_spec,
    expect_bytes: *const u8,
    expect_bytes_len: usize,
    send: *const u8,
    send_len: usize,
    flags: u32,
) -> prober_status {
    guard_status(|| {
        let s = tcp_spec_taking_flags(spec, flags)?;
        let want = try_slice_from_ptr(expect_bytes, expect_bytes_len, "expect_bytes")?.to_vec();
        if want.is_empty() {
            return Err(set_error(
                PROBER_E_INVALID,
                "no bytes to expect (prober_spec_add_tcp_step adds a step without)",
            ));
        }
        let send = try_slice_from_ptr(send, send_len, "send")?.to_vec();
        let step = TcpStep {
            expect_bytes: want,
            send,
            expand: EXPAND.is_in(flags),
            line: LINE.is_in(flags),
            starttls: STARTTLS.is_in(flags),
            ..TcpStep::default()
        };
        s.spec.add_tcp_step(step).map_err(|e| spec_status(&e))
    })
}

/// The spec a step is added to, after the checks every step setter makes: a TCP spec, and
/// only the flags this version knows.
fn tcp_spec_taking_flags<'a>(
    spec: *mut prober_spec,
    flags: u32,
) -> Result<&'a mut prober_spec, prober_status> {
    let s = spec_of_kind::<TcpSpec>(spec, "TCP steps apply to")?;
    let unknown = flags & !prober_tcp_step_flags::KNOWN;
    if unknown != 0 {
        return Err(set_error(PROBER_E_INVALID, format!("unknown TCP step flags {unknown:#x}")));
    }
    Ok(s)
}
