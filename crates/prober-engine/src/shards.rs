//! Engines sharded over threads ([`crate::spawn_sharded`]): which engine of a group a target or
//! a host run belongs to, read from its id alone.
//!
//! Engine `i` of `n` numbers its targets with indexes `i, i + n, i + 2n, ...` (its target
//! arena is strided, `crate::arena`), so a [`TargetId`](crate::TargetId)'s low half modulo `n` is its engine.
//! Host-run ids ([`RunId`]) carry the same: the run slot's index times `n` plus `i`. A single
//! engine is engine 0 of 1, whose ids are the arena keys unchanged.

use crate::arena::Key;
use crate::event::RunId;

/// The most engines one group may have: each may then still hold 2^24 targets (the index
/// space of 2^32 is divided among them).
pub const MAX_THREADS: usize = 256;

/// Which engine of how many this one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shard {
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl Shard {
    /// A lone engine: engine 0 of 1.
    pub(crate) const ALONE: Shard = Shard { index: 0, count: 1 };

    /// The engine, of `count`, that has the target or host run `id` (any number gives one:
    /// an id that no engine issued is then unknown to that engine).
    pub(crate) fn of_id(id: u64, count: usize) -> usize {
        // The low half is the arena index (`Key::to_u64`).
        (id & 0xffff_ffff) as usize % count.max(1)
    }

    /// The id a host sees for the run in `slot`.
    pub(crate) fn run_id(self, slot: Key) -> RunId {
        let index = slot
            .index
            .checked_mul(self.count)
            .and_then(|i| i.checked_add(self.index))
            .expect("a run slot index within 2^32 / MAX_THREADS");
        Key { index, generation: slot.generation }.to_u64()
    }

    /// The slot [`Shard::run_id`] made `run` from; `None` for another engine's run id.
    pub(crate) fn run_slot(self, run: RunId) -> Option<Key> {
        let key = Key::from_u64(run);
        (key.index % self.count == self.index)
            .then_some(Key { index: key.index / self.count, generation: key.generation })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_name_their_engine_and_go_back_to_their_slot() {
        for count in [1u32, 2, 3, 7] {
            for index in 0..count {
                let shard = Shard { index, count };
                let slot = Key { index: 41, generation: 9 };
                let run = shard.run_id(slot);
                assert_eq!(Shard::of_id(run, count as usize), index as usize);
                assert_eq!(shard.run_slot(run), Some(slot));
                if count > 1 {
                    let other = Shard { index: (index + 1) % count, count };
                    assert_eq!(other.run_slot(run), None, "another engine's run");
                }
            }
        }
    }

    #[test]
    fn a_lone_engine_keeps_its_run_ids_as_they_were() {
        let slot = Key { index: 5, generation: 3 };
        assert_eq!(Shard::ALONE.run_id(slot), slot.to_u64());
        assert_eq!(Shard::ALONE.run_slot(slot.to_u64()), Some(slot));
    }
}
