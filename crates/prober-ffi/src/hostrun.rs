//! Host-run probes in C: the spec, the completion of an announced run, and the counters.
//!
//! A run is announced by a `PROBER_EVENT_HOST_RUN` event (see `prober_event`): `tag` holds the
//! run's id, `target` and `role` the worker, `message` the spec's label. The host performs the
//! run its own way and calls `prober_engine_complete_run` with that id before the probe's
//! timeout; the engine calls nothing back.

use std::ffi::c_char;

use ::prober_engine::Completion;
use prober_core::ProbeSpec;

use crate::engine::{prober_engine, with_engine};
use crate::outcome::prober_result;
use crate::ptr::{BoxedHandle, Out, try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{new_spec, prober_spec};
use crate::status::*;
use crate::{guard_status, set_error};

/// A probe that the host runs: an engine worker schedules each run and announces it with a
/// `PROBER_EVENT_HOST_RUN` event; the host performs it (a CRI `ExecSync`, a call into a VM's
/// agent) and completes it with `prober_engine_complete_run` before the probe's timeout, or the
/// run ends `PROBER_RESULT_FAILURE` with `PROBER_REASON_TIMEOUT`. Thresholds, startup gating and
/// the retries of Unknown results apply as to every kind. `label` (copied; may be empty, at
/// most 4096 bytes) names the probe in announcements and messages. Only a target's probe
/// (`prober_engine_set_probe`) runs it: `prober_engine_submit` refuses it with
/// `PROBER_E_WRONG_KIND` and `prober_check` answers `PROBER_RESULT_UNKNOWN` with
/// `PROBER_REASON_UNSUPPORTED`. On success `*out` owns a new spec (free it with
/// `prober_spec_free`).
///
/// # Safety
/// `label` must be NULL or a NUL-terminated string; `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_host_run(
    label: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        let label = try_str_from_ptr(label, "label")?;
        new_spec(ProbeSpec::host_run(label), out)
    })
}

/// Completes host run `run_id` (the `tag` of its `PROBER_EVENT_HOST_RUN` event) with `result`
/// (a `PROBER_RESULT_*` value) and `output_len` bytes of output at `output` (copied, kept up
/// to the spec's output limit; NULL when `output_len` is 0). The result is recorded by the
/// worker's rules as any run's. Its outcome has no message for Success and Warning,
/// `host run "LABEL" failed` for Failure and `host run "LABEL" could not be performed` for
/// Unknown, reason `PROBER_REASON_NONE`: what went wrong is in the output.
///
/// # Errors
/// `PROBER_E_RUN_ENDED` when the run is no longer in flight (it timed out, was cancelled by the
/// removal, restart or replacement of its probe, or was completed already) and
/// `PROBER_E_UNKNOWN_RUN` when no host run had this id: the completion is ignored and counted
/// (`prober_engine_get_host_run_stats`), and nothing else happens; a host may ignore both.
/// `PROBER_E_INVALID_ENUM` for a result that is not a `PROBER_RESULT_*` value, `PROBER_E_NULL`,
/// `PROBER_E_BUSY`.
///
/// # Safety
/// `e` must be NULL or a live engine; `output` NULL or readable for `output_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_complete_run(
    e: *mut prober_engine,
    run_id: u64,
    result: u32,
    output: *const c_char,
    output_len: usize,
) -> prober_status {
    guard_status(|| {
        let output = try_slice_from_ptr(output.cast::<u8>(), output_len, "output")?;
        let Some(result) = prober_result::from_code(result) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{result} is not a PROBER_RESULT_* value"),
            ));
        };
        with_engine(e, |i| match i.engine.complete_run(run_id, result, output)? {
            Completion::Accepted => Ok(()),
            Completion::Late => Err(set_error(
                PROBER_E_RUN_ENDED,
                format!(
                    "host run {run_id} is no longer in flight (timed out, cancelled or \
                     completed already): its completion is ignored"
                ),
            )),
            _ => Err(set_error(
                PROBER_E_UNKNOWN_RUN,
                format!("no host run has id {run_id}: the completion is ignored"),
            )),
        })
    })
}

/// Counters of host-run probes, filled in by `prober_engine_get_host_run_stats`. Each only
/// grows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct prober_host_run_stats {
    /// Runs announced (`PROBER_EVENT_HOST_RUN`).
    pub announced: u64,
    /// Runs the host completed in time.
    pub completed: u64,
    /// Runs that reached the probe's timeout before the host completed them.
    pub timed_out: u64,
    /// Completions ignored because their run was no longer in flight (`PROBER_E_RUN_ENDED`).
    pub late: u64,
    /// Completions ignored because no host run had their id (`PROBER_E_UNKNOWN_RUN`).
    pub unknown: u64,
    /// Reserved for future counters; zero.
    pub reserved: [u64; 3],
}

/// Fills `*stats` with the engine's counters of host-run probes.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL argument, `PROBER_E_BUSY` while another call is running.
///
/// # Safety
/// `e` must be NULL or a live engine; `stats` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_get_host_run_stats(
    e: *const prober_engine,
    stats: *mut prober_host_run_stats,
) -> prober_status {
    guard_status(|| {
        let eng = prober_engine::try_ref_from_ptr(e)?;
        let stats = Out::try_from_ptr(stats, "stats")?;
        eng.enter(|i| {
            // A group's are its engines' sums.
            let mut sum = prober_host_run_stats::default();
            for s in i.engine.each(|e| e.host_run_stats())? {
                sum.announced += s.announced;
                sum.completed += s.completed;
                sum.timed_out += s.timed_out;
                sum.late += s.late;
                sum.unknown += s.unknown;
            }
            stats.write(sum);
            Ok(())
        })
    })
}
