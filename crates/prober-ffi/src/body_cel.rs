//! CEL expressions over a JSON body (blackbox_exporter's `fail_if_body_json_matches_cel` and
//! `fail_if_body_json_not_matches_cel`); see "Beyond the kubelet" in `docs/semantics.md`.

use std::ffi::c_char;

use prober_core::{BodyCel, CelMode, HttpSpec};

use crate::enums::c_enum;
use crate::kind::require_kind;
use crate::ptr::{ExclusiveHandle, try_str_from_ptr};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

c_enum! {
    /// What a CEL expression over the body asks of it (`prober_spec_set_expect_body_cel`).
    pub enum prober_cel_mode of CelMode {
        /// The run fails when the expression is true (blackbox_exporter's
        /// `fail_if_body_json_matches_cel`).
        PROBER_CEL_FAIL_IF_MATCHES = 0 => FailIfMatches,
        /// The run fails when the expression is false (`fail_if_body_json_not_matches_cel`).
        PROBER_CEL_FAIL_IF_NOT_MATCHES = 1 => FailIfNotMatches,
    }
}

/// Judges an HTTP probe's kept body (at most the output limit, 10240 bytes by default; a body
/// cut at it fails) with the CEL expression `expr`, the body parsed as JSON and named `body`:
/// with `PROBER_CEL_FAIL_IF_MATCHES` the run fails when it is true, with
/// `PROBER_CEL_FAIL_IF_NOT_MATCHES` when it is false; a body that is not JSON, an evaluation
/// error or a result that is not a boolean fails it too (`PROBER_REASON_BODY`, judged after
/// the status and `prober_spec_set_expect_body`). One expression per mode: a second call with
/// the same mode replaces it. `expr` is compiled here, once: at most 4096 bytes. Evaluation is
/// bounded (JSON bodies up to 1 MiB, nested up to 128; 1,000,000 comprehension steps; 16 MiB
/// of concatenation; the probe's deadline): see docs/semantics.md.
///
/// Errors: `PROBER_E_INVALID` for an expression that does not compile (the text gives its line
/// and column), `PROBER_E_INVALID_ENUM` for another `mode`, `PROBER_E_WRONG_KIND` for a probe
/// that is not HTTP.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `expr` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_expect_body_cel(
    spec: *mut prober_spec,
    mode: u32,
    expr: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let text = try_str_from_ptr(expr, "a CEL expression")?;
        let Some(mode) = prober_cel_mode::from_code(mode) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{mode} is not a PROBER_CEL_* value"),
            ));
        };
        require_kind::<HttpSpec>(&mut s.spec, "a CEL expression applies to")?;
        let cel = BodyCel::new(text).map_err(|e| spec_status(&e))?;
        s.spec.set_expect_body_cel(mode, cel).map_err(|e| spec_status(&e))
    })
}
