//! The C form of an engine's events: `fill` makes a `prober_event` of a Rust `Event`, for
//! `prober_engine_drain` (here) and for the completions of `prober_engine_submit_with`.

use ::prober_engine::Event;

use crate::engine::{engine_query, prober_engine, prober_event, prober_event_kind};
use crate::outcome::{
    micros, prober_outcome, prober_reason, prober_result, prober_role, timings_of,
};
use crate::ptr::out_slice_from_ptr;
use crate::status::*;
use crate::{guard, prober_str, set_error};

/// Moves up to `cap` queued events, oldest first, into `events[0..n]` and returns `n`. The
/// views in them stay valid until the next drain, step or wait on this engine. 0 for NULL
/// arguments, a poisoned engine, or while another call is running (`PROBER_E_BUSY` in
/// `prober_last_error`; no event is lost).
///
/// Probing never waits for the host, and the queue stays bounded however rarely it drains:
/// while a `PROBER_EVENT_STATE` of a (target, role) is queued, a later change of the same
/// worker replaces it in place (value and outcome), so a host that catches up gets each
/// worker's latest value once; `PROBER_EVENT_RUN` events are dropped oldest-first past 1024
/// queued and counted (`prober_engine_get_stats`), but never those of the current step or
/// wait, so a host that drains after each one loses none; `PROBER_EVENT_CHECK` events, one per
/// submit, are never dropped; a `PROBER_EVENT_HOST_RUN` is never dropped but is withdrawn when
/// its run ends (timed out, cancelled) before it was drained.
///
/// # Safety
/// `e` must be NULL or a live engine; `events` NULL or writable for `cap` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_drain(
    e: *mut prober_engine,
    events: *mut prober_event,
    cap: usize,
) -> usize {
    guard(|| {
        let Some(slots) = out_slice_from_ptr(events, cap) else {
            if !e.is_null() {
                set_error(PROBER_E_NULL, "events is NULL");
            }
            return 0;
        };
        engine_query(e, |i| {
            i.held.clear();
            let mut n = 0;
            'slots: for slot in slots {
                // An event of a kind C has no number for yet is skipped.
                let filled = loop {
                    let Some(ev) = i.engine.next_event() else { break 'slots };
                    if let Some(filled) = fill(ev, &mut i.held) {
                        break filled;
                    }
                };
                slot.write(filled);
                n += 1;
            }
            n
        })
    })
}

/// The C form of `ev`; `None` for a kind of event C has no `prober_event_kind` for (the Rust
/// enum may grow before the C one does), which the drain skips.
pub(crate) fn fill(ev: Event, held: &mut Vec<prober_outcome>) -> Option<prober_event> {
    let mut out = prober_event {
        kind: 0,
        role: 0,
        target: 0,
        tag: 0,
        result: 0,
        reason: 0,
        duration_us: 0,
        message: prober_str::empty(),
        output: prober_str::empty(),
        output_total: 0,
        late_us: 0,
        http_status: 0,
        exit_code: -1,
        has_outcome: false,
        truncated: false,
        has_cert_not_after: false,
        timings: timings_of(None),
        cert_not_after: 0,
        tls_version: 0,
        http_version: 0,
        grpc_status: -1,
        grpc_serving_status: -1,
        reserved: [0; 2],
    };
    let outcome = match ev {
        Event::State { target, role, result, outcome } => {
            out.kind = prober_event_kind::PROBER_EVENT_STATE as u32;
            out.target = target;
            out.role = prober_role::code_of(role);
            out.result = prober_result::code_of(result);
            outcome
        }
        Event::Check { tag, outcome } => {
            out.kind = prober_event_kind::PROBER_EVENT_CHECK as u32;
            out.tag = tag;
            out.result = prober_result::code_of(outcome.result);
            Some(outcome)
        }
        Event::HostRun { run, target, role, label } => {
            out.kind = prober_event_kind::PROBER_EVENT_HOST_RUN as u32;
            out.target = target;
            out.role = prober_role::code_of(role);
            out.tag = run;
            // The label is held as an outcome's message, so its view lives as long as the
            // views of the batch's outcomes do; no outcome is reported.
            let held_label = prober_outcome::new(prober_core::Outcome::new(
                prober_core::ProbeResult::Unknown,
                prober_core::Reason::None,
                label,
            ));
            out.result = prober_result::code_of(prober_core::ProbeResult::Unknown);
            out.message = held_label.message();
            held.push(held_label);
            return Some(out);
        }
        Event::Run { target, role, outcome, late_us } => {
            out.kind = prober_event_kind::PROBER_EVENT_RUN as u32;
            out.target = target;
            out.role = prober_role::code_of(role);
            out.result = prober_result::code_of(outcome.result);
            out.late_us = late_us;
            Some(outcome)
        }
        _ => return None,
    };
    if let Some(o) = outcome {
        let o = prober_outcome::new(*o);
        out.has_outcome = true;
        out.reason = prober_reason::code_of(o.outcome.reason);
        out.duration_us = micros(o.outcome.timings.total);
        out.output_total = o.outcome.output_total;
        out.http_status = o.outcome.http_status.map_or(0, u32::from);
        out.exit_code = o.outcome.exit_code.unwrap_or(-1);
        out.truncated = o.outcome.truncated;
        out.timings = timings_of(Some(&o.outcome.timings));
        if let Some(t) = o.outcome.cert_not_after {
            out.has_cert_not_after = true;
            out.cert_not_after = t;
        }
        out.tls_version = crate::facts::tls_version_code(&o.outcome);
        out.http_version = crate::facts::http_version_code(&o.outcome);
        out.grpc_status = o.outcome.grpc.status_code.map_or(-1, |c| i32::try_from(c).unwrap_or(-1));
        out.grpc_serving_status = o.outcome.grpc.serving_status.unwrap_or(-1);
        // The views point into the outcome's heap buffers, which do not move when `held`
        // grows: they stay valid until `held` is cleared.
        out.message = o.message();
        out.output = o.output();
        held.push(o);
    }
    Some(out)
}
