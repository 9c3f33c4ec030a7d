//! The engine's timer structure: a hierarchical timing wheel with lazy invalidation.
//!
//! Entries are never removed early: the owner of a key remembers the one instant it currently
//! wants, and an entry whose instant no longer matches is skipped when it fires (and dropped by
//! [`Timers::compact`] when too many pile up). Every run adds a worker tick and a probe
//! deadline, so adding must be cheap: here it is O(1) (a bit scan and a push), where the binary
//! heap this replaces cost O(log n) per push and pop (13 % of `sched_10k`'s user-space
//! instructions at 10,000 targets, docs/benchmarks.md).
//!
//! Time is counted in ticks of [`TICK_NS`] (65.5 µs) from the wheel's creation. Six levels of 64
//! slots: level 0 holds entries due within the current 64 ticks, level `l` those within the
//! current 64^(l+1) ticks, each slot `64^l` ticks wide. When time reaches a slot above level 0,
//! its entries move down (each entry at most five times); entries beyond the top level's range
//! (about 52 days) wait in its slots and move again when reached. Entries whose tick has begun
//! wait in a short list and are handed out exactly when `now >= at`, as the heap did, so a
//! timer re-armed for "now" still fires at the next turn.

use std::time::{Duration, Instant};

use crate::arena::Key;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerKey {
    /// The next scheduled run of a worker: its target and its role's index.
    Worker { target: Key, role: u8 },
    /// An in-flight probe's own deadline or internal timer.
    Probe { slot: Key },
}

/// One tick, in nanoseconds (2^16 ns = 65.536 µs).
const TICK_NS: u64 = 1 << 16;
const LEVELS: usize = 6;
const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
/// The most entries of the next level-0 slot [`Timers::next`] looks through for the earliest.
const EXACT_SCAN: usize = 32;
/// Entries a slot's buffer may keep room for while empty (2.5 KiB; all slots: under 1 MiB).
const KEEP_CAPACITY: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Instant,
    key: TimerKey,
    tick: u64,
}

#[derive(Debug)]
pub struct Timers {
    origin: Instant,
    /// Every entry whose tick is at most this has been handed out or waits in `ready`.
    elapsed: u64,
    /// `LEVELS * SLOTS` slots, level-major.
    slots: Vec<Vec<Entry>>,
    /// Per level, which slots hold entries.
    occupied: [u64; LEVELS],
    /// Entries whose tick has begun (at most `elapsed`): handed out by a drain once their
    /// instant has come; a few at a time (one tick is 65.5 µs).
    ready: Vec<Entry>,
    len: usize,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers::new(Instant::now())
    }
}

impl Timers {
    pub fn new(origin: Instant) -> Timers {
        Timers {
            origin,
            elapsed: 0,
            slots: (0..LEVELS * SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; LEVELS],
            ready: Vec::new(),
            len: 0,
        }
    }

    /// The tick that contains `at` (instants before the origin are in tick 0).
    fn tick_of(&self, at: Instant) -> u64 {
        let ns = at.saturating_duration_since(self.origin).as_nanos();
        u64::try_from(ns / u128::from(TICK_NS)).unwrap_or(u64::MAX)
    }

    fn instant_of(&self, tick: u64) -> Instant {
        self.origin + Duration::from_nanos(tick.saturating_mul(TICK_NS))
    }

    pub fn push(&mut self, at: Instant, key: TimerKey) {
        let e = Entry { at, key, tick: self.tick_of(at) };
        self.len += 1;
        self.place(e);
    }

    /// Puts an entry in its slot relative to `elapsed` (or in `ready` if its tick has passed).
    fn place(&mut self, e: Entry) {
        if e.tick <= self.elapsed {
            self.ready.push(e);
            return;
        }
        // The level is where `elapsed` and the tick first differ, in 6-bit digits.
        let differ = (self.elapsed ^ e.tick) | (SLOTS as u64 - 1);
        let level = (((63 - differ.leading_zeros()) / SLOT_BITS) as usize).min(LEVELS - 1);
        let slot = ((e.tick >> (SLOT_BITS * level as u32)) as usize) & (SLOTS - 1);
        self.slots[level * SLOTS + slot].push(e);
        self.occupied[level] |= 1 << slot;
    }

    /// The earliest occupied slot: (level, slot, the tick at which it starts).
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        // Below the top level every occupied slot lies after that level's current slot
        // (entries are placed by their first differing digit), so the lowest occupied level
        // holds the earliest slot. The top level also holds entries of later rotations, in any
        // slot: a slot after the current one is this rotation's, the others the next one's.
        for level in 0..LEVELS {
            let occupied = self.occupied[level];
            if occupied == 0 {
                continue;
            }
            let shift = SLOT_BITS * level as u32;
            let now_slot = (self.elapsed >> shift) as u32 & (SLOTS as u32 - 1);
            let slot_ticks = 1u64 << shift;
            let span = slot_ticks << SLOT_BITS;
            let level_start = self.elapsed & !(span - 1);
            let after = occupied & u64::MAX.checked_shl(now_slot + 1).unwrap_or(0);
            let (slot, rotation_start) = if after != 0 {
                (after.trailing_zeros(), level_start)
            } else {
                (occupied.trailing_zeros(), level_start.saturating_add(span))
            };
            let start = rotation_start.saturating_add(u64::from(slot) * slot_ticks);
            return Some((level, slot as usize, start));
        }
        None
    }

    /// The instant at which the engine must next look at its timers: the earliest entry's, or
    /// earlier (the start of a slot whose entries move down then, or of a crowded tick).
    /// `None` when empty.
    pub fn next(&self) -> Option<Instant> {
        // Entries of the tick that has begun are exact; all of them come before any slot.
        if let Some(at) = self.ready.iter().map(|e| e.at).min() {
            return Some(at);
        }
        let (level, slot, start) = self.next_slot()?;
        // A level-0 slot is one tick: its earliest entry is exact. Waking at the tick's start
        // instead would cost a second wake-up per timer now that the poll keeps nanoseconds
        // (`wake_timer.rs`); a crowded slot (a burst in one tick) is not scanned every turn.
        if level == 0 && self.slots[slot].len() <= EXACT_SCAN {
            return self.slots[slot].iter().map(|e| e.at).min();
        }
        Some(self.instant_of(start))
    }

    /// Appends every entry due at `now` (`at <= now`) to `out`, in (instant, key) order, and
    /// removes them from the wheel.
    pub fn drain_due(&mut self, now: Instant, out: &mut Vec<(Instant, TimerKey)>) {
        let first = out.len();
        let target = self.tick_of(now);
        while let Some((level, slot, start)) = self.next_slot() {
            if start > target {
                break;
            }
            self.elapsed = start;
            let idx = level * SLOTS + slot;
            let mut moving = std::mem::take(&mut self.slots[idx]);
            self.occupied[level] &= !(1 << slot);
            for e in moving.drain(..) {
                self.place(e);
            }
            // A small buffer goes back to its slot (no allocation when it fills again); a large
            // one is freed: slots that once held a second's worth of runs must not keep that
            // capacity while empty (measured: +22 MiB of RSS at 10,000 targets).
            if moving.capacity() <= KEEP_CAPACITY && self.slots[idx].capacity() == 0 {
                self.slots[idx] = moving;
            }
        }
        self.elapsed = self.elapsed.max(target);
        // `ready` holds the entries of ticks that have begun; within the current tick only
        // those at or before `now` are due.
        let mut i = 0;
        while i < self.ready.len() {
            if self.ready[i].at <= now {
                let e = self.ready.swap_remove(i);
                out.push((e.at, e.key));
            } else {
                i += 1;
            }
        }
        self.len -= out.len() - first;
        out[first..].sort_unstable();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Drops stale entries when the wheel has grown well past the live count.
    pub fn compact(&mut self, live: impl Fn(&Instant, &TimerKey) -> bool) {
        let mut len = 0;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            slot.retain(|e| live(&e.at, &e.key));
            if slot.is_empty() {
                self.occupied[i / SLOTS] &= !(1 << (i % SLOTS));
            }
            len += slot.len();
        }
        self.ready.retain(|e| live(&e.at, &e.key));
        self.len = len + self.ready.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> TimerKey {
        TimerKey::Probe { slot: Key { index: i, generation: 1 } }
    }

    /// xorshift64*: deterministic, no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn entries_come_out_once_in_order_exactly_when_due() {
        let origin = Instant::now();
        for seed in 1..=20u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut t = Timers::new(origin);
            let mut now = origin;
            let mut pending: Vec<(Instant, TimerKey)> = Vec::new();
            let mut out = Vec::new();
            let mut next_key = 0;
            for _ in 0..3000 {
                // Add a few entries at distances from "already due" to days ahead.
                for _ in 0..rng.below(4) {
                    let ahead = match rng.below(10) {
                        0 => Duration::ZERO,
                        1..=5 => Duration::from_micros(rng.below(200_000)),
                        6..=7 => Duration::from_millis(rng.below(120_000)),
                        8 => Duration::from_secs(rng.below(3 * 86_400)),
                        _ => Duration::from_secs(rng.below(200 * 86_400)), // past the top level
                    };
                    let at = now + ahead;
                    t.push(at, key(next_key));
                    pending.push((at, key(next_key)));
                    next_key += 1;
                }
                assert_eq!(t.len(), pending.len());
                // The wheel never asks to be looked at later than its earliest entry.
                if let Some(earliest) = pending.iter().map(|p| p.0).min() {
                    let next = t.next().expect("entries pending");
                    assert!(next <= earliest, "next {next:?} after {earliest:?}");
                } else {
                    assert_eq!(t.next(), None);
                }
                // Move time: small steps mostly, sometimes to the wheel's own next instant,
                // sometimes far.
                now = match rng.below(10) {
                    0 => t.next().map_or(now, |n| n.max(now)),
                    1 => now + Duration::from_secs(rng.below(40 * 86_400)),
                    _ => now + Duration::from_micros(rng.below(5_000)),
                };
                out.clear();
                t.drain_due(now, &mut out);
                for w in out.windows(2) {
                    assert!(w[0] <= w[1], "not in order: {out:?}");
                }
                for o in &out {
                    assert!(o.0 <= now, "handed out early: {o:?} at {now:?}");
                    let i = pending.iter().position(|p| p == o).expect("handed out once");
                    pending.swap_remove(i);
                }
                // Everything due has come out, and the wheel does not ask for a look again
                // before something can be due (no busy loop).
                for p in &pending {
                    assert!(p.0 > now, "{p:?} still pending at {now:?}");
                }
                if let Some(next) = t.next() {
                    assert!(next > now, "next {next:?} not after {now:?} right after a drain");
                }
            }
        }
    }

    #[test]
    fn an_entry_for_now_added_while_draining_waits_for_the_next_drain() {
        let origin = Instant::now();
        let mut t = Timers::new(origin);
        let now = origin + Duration::from_millis(10);
        t.push(now, key(1));
        let mut out = Vec::new();
        t.drain_due(now, &mut out);
        assert_eq!(out, vec![(now, key(1))]);
        t.push(now, key(2)); // a machine re-arming "now" while its timer runs
        assert_eq!(t.next(), Some(now));
        out.clear();
        t.drain_due(now, &mut out);
        assert_eq!(out, vec![(now, key(2))]);
        assert_eq!((t.len(), t.next()), (0, None));
    }

    #[test]
    fn emptied_slots_do_not_keep_large_buffers() {
        // 10,000 runs a second for 30 s, each adding a tick one period (1 s) ahead: the slots
        // that held a second's worth of entries must not keep that room once emptied.
        let origin = Instant::now();
        let mut t = Timers::new(origin);
        let mut out = Vec::new();
        let mut i = 0u32;
        for ms in 0..30_000u64 {
            let now = origin + Duration::from_millis(ms);
            for _ in 0..10 {
                t.push(now + Duration::from_secs(1), key(i));
                i += 1;
            }
            out.clear();
            t.drain_due(now, &mut out);
        }
        let kept: usize = t.slots.iter().map(Vec::capacity).sum();
        let live = t.len();
        assert!(live <= 10_010, "{live}");
        // Room for the live entries (buffers grow by doubling) plus small buffers everywhere.
        assert!(
            kept <= 2 * live + LEVELS * SLOTS * KEEP_CAPACITY,
            "{kept} entries of room for {live}"
        );
    }

    #[test]
    fn the_next_instant_of_a_near_entry_is_its_own() {
        // Not the start of its 65.5 µs tick: waking there would mean a second wake-up.
        let origin = Instant::now();
        let mut t = Timers::new(origin);
        let at = origin + Duration::from_micros(300);
        t.push(at, key(1));
        t.push(at + Duration::from_nanos(1), key(2));
        assert_eq!(t.next(), Some(at));
        // A crowded tick is looked at from its start (earlier, never later).
        let mut t = Timers::new(origin);
        for i in 0..=EXACT_SCAN as u32 {
            t.push(at + Duration::from_nanos(u64::from(i)), key(i));
        }
        let start = t.next().expect("entries pending");
        assert!(start < at && at - start < Duration::from_nanos(TICK_NS), "{start:?} {at:?}");
    }

    #[test]
    fn compact_keeps_only_live_entries() {
        let origin = Instant::now();
        let mut t = Timers::new(origin);
        for i in 0..1000u32 {
            t.push(origin + Duration::from_millis(u64::from(i) * 37), key(i));
        }
        t.compact(|_, k| matches!(k, TimerKey::Probe { slot } if slot.index % 10 == 0));
        assert_eq!(t.len(), 100);
        let mut out = Vec::new();
        t.drain_due(origin + Duration::from_secs(3600), &mut out);
        assert_eq!(out.len(), 100);
        assert!(
            out.iter().all(|(_, k)| matches!(k, TimerKey::Probe { slot } if slot.index % 10 == 0))
        );
        assert_eq!((t.len(), t.next()), (0, None));
    }
}
