//! The memory `/probe` checks in flight may hold together: each reserves its module's body
//! limit when it starts and gives it back when it is answered or cancelled.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The body bytes all `/probe` checks in flight may hold together: each reserves its module's
/// limit (`body_size_limit`, 1 MiB by default) when it starts. With the default limit the
/// server's bound on waiting requests (448) is reached first; modules with large limits are
/// held to this total instead, past which a `/probe` is answered 503 at once.
pub const PROBE_OUTPUT_BUDGET: u64 = 512 << 20;

/// Bytes of [`PROBE_OUTPUT_BUDGET`] held by one probe; given back when dropped.
pub(crate) struct Reservation {
    total: Arc<AtomicU64>,
    bytes: u64,
}

impl Reservation {
    pub(crate) fn take(total: &Arc<AtomicU64>, bytes: u64) -> Option<Reservation> {
        total
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|sum| *sum <= PROBE_OUTPUT_BUDGET)
            })
            .ok()?;
        Some(Reservation { total: total.clone(), bytes })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}
