//! The engine's timer structure: a min-heap of (instant, key) with lazy invalidation.
//!
//! Entries are never removed early: the owner of a key remembers the one instant it currently
//! wants, and an entry whose instant no longer matches is skipped when it reaches the top. That
//! keeps rescheduling O(log n) with no search.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerKey {
    /// The next scheduled run of a worker: (target index, target generation, role index).
    Worker { target: u32, generation: u32, role: u8 },
    /// An in-flight probe's own deadline or internal timer: (slot index, slot generation).
    Probe { slot: u32, generation: u32 },
}

#[derive(Debug, Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Instant, TimerKey)>>,
}

impl Timers {
    pub fn push(&mut self, at: Instant, key: TimerKey) {
        self.heap.push(Reverse((at, key)));
    }

    /// The earliest instant in the heap (possibly stale: then the caller wakes a bit early once).
    pub fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Pops the earliest entry that is due at `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, TimerKey)> {
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now => self.heap.pop().map(|Reverse(e)| e),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Drops stale entries when the heap has grown well past the live count.
    pub fn compact(&mut self, live: impl Fn(&Instant, &TimerKey) -> bool) {
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap.into_iter().filter(|Reverse((at, k))| live(at, k)).collect();
    }
}
