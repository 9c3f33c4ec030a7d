//! The DNS and ICMP facts of a drained event's run (issue 36): `prober_event` has no room for
//! them (its reserved space is 16 bytes), so they are read from the outcome the engine holds
//! behind the event until the next drain, step or wait, the one the event's views point into.

use crate::dns::{dns_facts_of, prober_dns_facts};
use crate::engine::{engine_query, prober_engine, prober_event};
use crate::icmp::{icmp_facts_of, prober_icmp_facts};
use crate::outcome::prober_outcome;
use crate::ptr::{Out, try_slice_from_ptr};

/// What `facts` finds in the outcome held behind `ev` (the one whose message buffer the
/// event's `message` view points into), written to `out`; false when there is none, for NULL
/// arguments, and when the engine refused the call.
fn event_facts<T: Copy>(
    e: *mut prober_engine,
    ev: *const prober_event,
    out: *mut T,
    facts: impl FnOnce(&prober_outcome) -> Option<T>,
) -> bool {
    let Ok([ev]) = try_slice_from_ptr(ev, 1, "event") else { return false };
    if !ev.has_outcome {
        return false;
    }
    let Some(out) = Out::from_ptr(out) else { return false };
    let found = engine_query(e, |i| {
        let held = i.held.iter().find(|o| std::ptr::eq(o.message().ptr, ev.message.ptr))?;
        // Only a reference leaves this closure when `T` does: copied out here, under the flag.
        facts(held)
    });
    match found {
        Some(f) => {
            out.write(f);
            true
        }
        None => false,
    }
}

/// The DNS facts of the run behind `ev`, an event of the last `prober_engine_drain` on `e`
/// (valid until the next drain, step or wait), into `*out`: true when the run was a DNS
/// probe's, false otherwise (and for NULL arguments, an event without an outcome, a call that
/// overlaps another on the engine). As `prober_outcome_dns` for `prober_check`'s outcome.
///
/// # Safety
/// `e` must be NULL or a live engine; `ev` NULL or an event filled by the last drain of `e`;
/// `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_event_dns(
    e: *mut prober_engine,
    ev: *const prober_event,
    out: *mut prober_dns_facts,
) -> bool {
    crate::guard(|| event_facts(e, ev, out, |o| dns_facts_of(&o.outcome)))
}

/// The ICMP facts of the run behind `ev` (see `prober_engine_event_dns`) into `*out`: true
/// when the run was an ICMP probe's. As `prober_outcome_icmp` for `prober_check`'s outcome.
///
/// # Safety
/// `e` must be NULL or a live engine; `ev` NULL or an event filled by the last drain of `e`;
/// `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_event_icmp(
    e: *mut prober_engine,
    ev: *const prober_event,
    out: *mut prober_icmp_facts,
) -> bool {
    crate::guard(|| event_facts(e, ev, out, |o| icmp_facts_of(&o.outcome)))
}
