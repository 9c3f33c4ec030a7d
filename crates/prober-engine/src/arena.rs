//! A generational arena: values in a `Vec` by index, each index with a generation so that a
//! key kept after its value was removed (a timer, a poll token, a resolver answer or a host's
//! target id outliving what it named) is recognised as stale instead of reaching the value
//! that reused the index.
//!
//! The engine keeps two of these: in-flight probe runs and targets. Removing frees the index
//! for reuse (last freed, first reused); the memory of the `Vec`s is kept, so that a steady
//! state of runs starting and ending allocates nothing.
//!
//! An arena may number its indexes with a stride ([`Arena::strided`]): the `n`-th entry has
//! index `n * stride + offset`. Engines sharded over threads number their targets so, one
//! offset each, so that a target id says which engine has it (`crate::shards`).

/// Names one value of an [`Arena`]: its index and the generation the index had when the value
/// was inserted. Generations start at 1 and skip 0 when they wrap, so a key is never all
/// zeros and [`Key::to_u64`] is never 0 (hosts use 0 as "no target").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    /// The value's index in the arena (its position there, unless the arena is strided).
    pub index: u32,
    /// How many values the index has held, this one included (modulo 2^32, never 0).
    pub generation: u32,
}

impl Key {
    /// The key as one number: generation in the high half, index in the low half. Target ids
    /// and resolver tickets are this number.
    pub fn to_u64(self) -> u64 {
        u64::from(self.generation) << 32 | u64::from(self.index)
    }

    /// The key [`Key::to_u64`] made `n` from. Any number decodes; one that no live value has
    /// (0 among them: no generation is 0) is simply not found.
    pub fn from_u64(n: u64) -> Key {
        Key { index: (n & 0xffff_ffff) as u32, generation: (n >> 32) as u32 }
    }
}

#[derive(Debug)]
struct Entry<T> {
    /// The generation of the value in `value`, or of the last one if it is empty.
    generation: u32,
    value: Option<T>,
}

/// Values of type `T` by [`Key`]; see the module documentation.
#[derive(Debug)]
pub(crate) struct Arena<T> {
    entries: Vec<Entry<T>>,
    /// Positions in `entries` whose entry is empty, reused last freed first.
    free: Vec<u32>,
    len: usize,
    /// The `n`-th entry's index is `n * stride + offset` (1 and 0 unless [`Arena::strided`]).
    stride: u32,
    offset: u32,
}

impl<T> Default for Arena<T> {
    fn default() -> Arena<T> {
        Arena::strided(1, 0)
    }
}

impl<T> Arena<T> {
    /// An empty arena whose `n`-th entry has index `n * stride + offset`; `offset < stride`.
    pub fn strided(stride: u32, offset: u32) -> Arena<T> {
        assert!(offset < stride, "arena offset {offset} not below its stride {stride}");
        Arena { entries: Vec::new(), free: Vec::new(), len: 0, stride, offset }
    }

    /// The position in `entries` of `index`, if it is one of this arena's indexes.
    fn position(&self, index: u32) -> Option<usize> {
        if self.stride == 1 {
            return Some(index as usize);
        }
        let from_offset = index.checked_sub(self.offset)?;
        (from_offset % self.stride == 0).then_some((from_offset / self.stride) as usize)
    }

    /// The index of the entry at `position`.
    fn index_at(&self, position: usize) -> u32 {
        u32::try_from(position)
            .ok()
            .and_then(|p| p.checked_mul(self.stride))
            .and_then(|i| i.checked_add(self.offset))
            .expect("more than 2^32 arena indexes")
    }

    /// Stores `value` and returns its key: a freed index with its generation advanced, or a
    /// new index at generation 1.
    pub fn insert(&mut self, value: T) -> Key {
        self.len += 1;
        if let Some(position) = self.free.pop() {
            let index = self.index_at(position as usize);
            let e = &mut self.entries[position as usize];
            e.generation = e.generation.checked_add(1).unwrap_or(1);
            e.value = Some(value);
            Key { index, generation: e.generation }
        } else {
            let index = self.index_at(self.entries.len());
            self.entries.push(Entry { generation: 1, value: Some(value) });
            Key { index, generation: 1 }
        }
    }

    /// The value `key` names, if it is still there.
    pub fn get(&self, key: Key) -> Option<&T> {
        match self.entries.get(self.position(key.index)?) {
            Some(Entry { generation, value: Some(v) }) if *generation == key.generation => Some(v),
            _ => None,
        }
    }

    /// The value `key` names, if it is still there, to change.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        let position = self.position(key.index)?;
        match self.entries.get_mut(position) {
            Some(Entry { generation, value: Some(v) }) if *generation == key.generation => Some(v),
            _ => None,
        }
    }

    /// The key of the value at `index`, if there is one: for callers that kept only part of
    /// the generation (poll tokens keep its low bits) and compare the rest themselves.
    pub fn key_at(&self, index: u32) -> Option<Key> {
        match self.entries.get(self.position(index)?) {
            Some(Entry { generation, value: Some(_) }) => {
                Some(Key { index, generation: *generation })
            }
            _ => None,
        }
    }

    /// Whether `key` was ever handed out by [`Arena::insert`] (live or removed since): its
    /// index exists and its generation is not past the index's current one. A generation that
    /// wrapped around makes old keys look new again, after 2^32 values in one index.
    pub fn issued(&self, key: Key) -> bool {
        self.position(key.index)
            .and_then(|p| self.entries.get(p))
            .is_some_and(|e| key.generation != 0 && key.generation <= e.generation)
    }

    /// Takes out the value `key` names, if it is still there, and frees its index.
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let position = self.position(key.index)?;
        let e = self.entries.get_mut(position)?;
        if e.generation != key.generation {
            return None;
        }
        let value = e.value.take()?;
        // Positions fit in u32: `index_at` refused any past 2^32.
        self.free.push(position as u32);
        self.len -= 1;
        Some(value)
    }

    /// How many values the arena holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every value with its key.
    pub fn iter(&self) -> impl Iterator<Item = (Key, &T)> + '_ {
        self.entries.iter().enumerate().filter_map(|(i, e)| {
            Some((Key { index: self.index_at(i), generation: e.generation }, e.value.as_ref()?))
        })
    }

    /// Takes out every value with its key, freeing every index (those the iterator reached).
    pub fn drain(&mut self) -> impl Iterator<Item = (Key, T)> + '_ {
        let (free, len) = (&mut self.free, &mut self.len);
        let (stride, offset) = (self.stride, self.offset);
        self.entries.iter_mut().enumerate().filter_map(move |(i, e)| {
            let value = e.value.take()?;
            let position = i as u32;
            free.push(position);
            *len -= 1;
            // In range: `index_at` made this position's index when it was inserted.
            let index = position * stride + offset;
            Some((Key { index, generation: e.generation }, value))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_value_is_gone_and_its_key_stays_stale_after_reuse() {
        let mut a = Arena::default();
        let k1 = a.insert("first");
        assert_eq!(a.get(k1), Some(&"first"));
        assert_eq!(a.remove(k1), Some("first"));
        assert_eq!(a.get(k1), None);
        assert_eq!(a.remove(k1), None, "a second remove finds nothing");
        assert_eq!(a.len(), 0);

        // The freed index is reused, under a new generation: the old key does not reach it.
        let k2 = a.insert("second");
        assert_eq!(k2.index, k1.index);
        assert_ne!(k2.generation, k1.generation);
        assert_eq!(a.get(k1), None);
        assert_eq!(a.get_mut(k1), None);
        assert_eq!(a.remove(k1), None);
        assert_eq!(a.get(k2), Some(&"second"));
        assert_eq!(a.key_at(k2.index), Some(k2));
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn indexes_are_reused_last_freed_first_and_new_ones_appended() {
        let mut a = Arena::default();
        let keys: Vec<Key> = (0..4).map(|i| a.insert(i)).collect();
        assert_eq!(keys.iter().map(|k| k.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(keys.iter().all(|k| k.generation == 1));
        a.remove(keys[1]);
        a.remove(keys[3]);
        assert_eq!(a.key_at(1), None);
        assert_eq!(a.insert(10).index, 3);
        assert_eq!(a.insert(11).index, 1);
        assert_eq!(a.insert(12).index, 4);
        *a.get_mut(keys[0]).unwrap() += 100;
        assert_eq!(a.get(keys[0]), Some(&100));
        assert_eq!(a.len(), 5);
    }

    #[test]
    fn generations_wrap_past_zero_so_no_key_encodes_as_zero() {
        let mut a = Arena::default();
        let k = a.insert(());
        a.remove(k);
        // Jump to the end of the generations rather than reusing the index 2^32 times.
        a.entries[0].generation = u32::MAX;
        let last = a.insert(());
        assert_eq!(last.generation, 1, "u32::MAX + 1 wraps to 1");
        assert_ne!(last.to_u64(), 0);
        a.remove(last);
        assert_eq!(a.insert(()).generation, 2);
        assert_eq!(Key::from_u64(0), Key { index: 0, generation: 0 });
        assert_eq!(a.get(Key::from_u64(0)), None, "0 names nothing");
    }

    #[test]
    fn keys_round_trip_through_u64_with_the_generation_high() {
        let k = Key { index: 7, generation: 3 };
        assert_eq!(k.to_u64(), 3 << 32 | 7);
        assert_eq!(Key::from_u64(k.to_u64()), k);
        let k = Key { index: u32::MAX, generation: u32::MAX };
        assert_eq!(Key::from_u64(k.to_u64()), k);
    }

    #[test]
    fn a_strided_arena_numbers_its_indexes_from_its_offset_and_knows_no_other() {
        let mut a = Arena::strided(3, 2);
        let keys: Vec<Key> = (0..4).map(|i| a.insert(i)).collect();
        assert_eq!(keys.iter().map(|k| k.index).collect::<Vec<_>>(), [2, 5, 8, 11]);
        assert_eq!(a.get(keys[2]), Some(&2));
        // Another offset's index (another shard's target) names nothing here.
        for index in [0, 1, 3, 4, 6] {
            assert_eq!(a.get(Key { index, generation: 1 }), None, "index {index}");
            assert!(!a.issued(Key { index, generation: 1 }));
        }
        assert_eq!(a.remove(keys[1]), Some(1));
        let reused = a.insert(10);
        assert_eq!((reused.index, reused.generation), (5, 2));
        assert_eq!(a.key_at(5), Some(reused));
        let seen: Vec<(u32, i32)> = a.iter().map(|(k, v)| (k.index, *v)).collect();
        assert_eq!(seen, [(2, 0), (5, 10), (8, 2), (11, 3)]);
        let drained: Vec<Key> = a.drain().map(|(k, _)| k).collect();
        assert_eq!(drained.iter().map(|k| k.index).collect::<Vec<_>>(), [2, 5, 8, 11]);
        assert_eq!(a.insert(20).index % 3, 2);
    }

    #[test]
    fn drain_takes_every_value_and_frees_every_index() {
        let mut a = Arena::default();
        let k0 = a.insert('a');
        let k1 = a.insert('b');
        let k2 = a.insert('c');
        a.remove(k1);
        let drained: Vec<(Key, char)> = a.drain().collect();
        assert_eq!(drained, [(k0, 'a'), (k2, 'c')]);
        assert_eq!(a.len(), 0);
        assert_eq!(a.get(k0), None);
        let k = a.insert('d');
        assert!(k.index <= 2 && k != k0 && k != k2);
    }
}
