//! The engine's event queue, and its policy for a host that drains late or never.
//!
//! Probing never waits for the host, and the queue's memory stays bounded whatever the host
//! does:
//!
//! - [`Event::State`]: at most one undrained event per (target, role). A change while the
//!   previous one is still queued replaces it in place (its value, its outcome): the host that
//!   catches up sees the latest published value of every worker, as grpc-go's health server
//!   keeps only the latest status for a slow watcher. At most three per target.
//! - [`Event::Run`]: at most [`crate::EngineConfig::max_run_events`] queued; past that the
//!   oldest is dropped and counted ([`crate::Engine::dropped_events`]). Runs queued by the
//!   current turn are never dropped: a host that drains after every turn loses none, however
//!   many runs one turn completes, and the queue holds at most the limit plus one turn's runs.
//! - [`Event::Check`]: never coalesced nor dropped; there is one per submit, so the host bounds
//!   them by what it submits.
//! - [`Event::HostRun`]: never coalesced nor dropped, but withdrawn when its run ends before the
//!   host drained it (timed out, cancelled): at most one per worker with a run in flight.
//!
//! Events are drained in the order they were queued (a coalesced state event keeps the place
//! of the change it replaced).

use std::collections::{HashMap, VecDeque};

use prober_core::Role;

use crate::event::{Event, RunId, TargetId};

#[derive(Debug)]
pub(crate) struct EventQueue {
    /// State and check events with their sequence numbers, in order.
    main: VecDeque<(u64, Event)>,
    /// Run events with their sequence numbers, oldest first: kept apart so that dropping the
    /// oldest is O(1).
    runs: VecDeque<(u64, Event)>,
    /// The sequence number of each (target, role)'s undrained state event in `main`.
    states: HashMap<(TargetId, Role), u64>,
    next_seq: u64,
    /// The first sequence number of the current turn: runs from here on are not dropped.
    turn_start: u64,
    /// The next sequence number when the last turn ended: an event numbered from here on was
    /// queued outside a turn (a check that ended within its submit).
    turn_end: u64,
    run_limit: usize,
    dropped: u64,
    /// How many [`Event::HostRun`]s are in `main`: a withdrawal scans only when there are some.
    host_runs: usize,
}

impl EventQueue {
    pub(crate) fn new(run_limit: usize) -> EventQueue {
        EventQueue {
            main: VecDeque::new(),
            runs: VecDeque::new(),
            states: HashMap::new(),
            next_seq: 0,
            turn_start: 0,
            turn_end: 0,
            run_limit,
            dropped: 0,
            host_runs: 0,
        }
    }

    fn seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// A turn of the engine begins: runs queued before it may be dropped.
    pub(crate) fn start_turn(&mut self) {
        self.turn_start = self.next_seq;
    }

    /// A turn of the engine has ended: what it queued, the host drains after it.
    pub(crate) fn end_turn(&mut self) {
        self.turn_end = self.next_seq;
    }

    /// Whether an event was queued since the last turn ended and waits undrained: a host about
    /// to wait must not sleep on it (see `Engine::timeout`).
    pub(crate) fn queued_outside_turn(&self) -> bool {
        self.next_seq > self.turn_end && self.len() > 0
    }

    pub(crate) fn push(&mut self, ev: Event) {
        match ev {
            Event::State { target, role, .. } => {
                let queued = self.states.get(&(target, role)).copied();
                if let Some(Ok(i)) = queued.map(|seq| self.main.binary_search_by_key(&seq, |e| e.0))
                {
                    self.main[i].1 = ev;
                    return;
                }
                let seq = self.seq();
                self.states.insert((target, role), seq);
                self.main.push_back((seq, ev));
            }
            Event::Run { .. } => {
                while self.runs.len() >= self.run_limit {
                    match self.runs.front() {
                        Some((seq, _)) if *seq < self.turn_start => {
                            self.runs.pop_front();
                            self.dropped += 1;
                        }
                        // The rest is from this turn: the host has had no chance to drain it.
                        Some(_) => break,
                        // A limit of 0: no run event is kept.
                        None => {
                            self.dropped += 1;
                            return;
                        }
                    }
                }
                let seq = self.seq();
                self.runs.push_back((seq, ev));
            }
            Event::Check { .. } | Event::HostRun { .. } => {
                self.host_runs += usize::from(matches!(ev, Event::HostRun { .. }));
                let seq = self.seq();
                self.main.push_back((seq, ev));
            }
        }
    }

    /// The oldest event.
    pub(crate) fn pop(&mut self) -> Option<Event> {
        let from_runs = match (self.main.front(), self.runs.front()) {
            (Some((a, _)), Some((b, _))) => b < a,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if from_runs {
            return self.runs.pop_front().map(|(_, ev)| ev);
        }
        let (seq, ev) = self.main.pop_front()?;
        if matches!(ev, Event::HostRun { .. }) {
            self.host_runs -= 1;
        }
        if let Event::State { target, role, .. } = ev {
            if self.states.get(&(target, role)) == Some(&seq) {
                self.states.remove(&(target, role));
            }
        }
        Some(ev)
    }

    pub(crate) fn len(&self) -> usize {
        self.main.len() + self.runs.len()
    }

    /// Forgets the announcement of host run `run`, if it is still queued.
    pub(crate) fn withdraw_host_run(&mut self, run: RunId) {
        if self.host_runs == 0 {
            return;
        }
        let at = self
            .main
            .iter()
            .position(|(_, e)| matches!(e, Event::HostRun { run: r, .. } if *r == run));
        if let Some(i) = at {
            self.main.remove(i);
            self.host_runs -= 1;
        }
    }

    /// Forgets every event about `target`.
    pub(crate) fn remove_target(&mut self, target: TargetId) {
        self.main.retain(|(_, e)| e.target() != Some(target));
        self.host_runs =
            self.main.iter().filter(|(_, e)| matches!(e, Event::HostRun { .. })).count();
        self.runs.retain(|(_, e)| e.target() != Some(target));
        self.states.retain(|(t, _), _| *t != target);
    }

    /// Run events dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use prober_core::{Outcome, ProbeResult};

    use super::*;

    fn state(target: TargetId, role: Role, result: ProbeResult) -> Event {
        Event::State { target, role, result, outcome: None }
    }

    fn run(target: TargetId, n: u64) -> Event {
        let outcome = Box::new(Outcome::success());
        Event::Run { target, role: Role::Readiness, outcome, late_us: n }
    }

    fn drain(q: &mut EventQueue) -> Vec<Event> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn a_state_change_replaces_the_undrained_one_of_its_worker_in_place() {
        let mut q = EventQueue::new(8);
        q.push(state(1, Role::Readiness, ProbeResult::Failure));
        q.push(state(1, Role::Liveness, ProbeResult::Success));
        q.push(state(1, Role::Readiness, ProbeResult::Success));
        q.push(state(2, Role::Readiness, ProbeResult::Failure));
        q.push(state(1, Role::Readiness, ProbeResult::Failure));
        assert_eq!(q.len(), 3);
        assert_eq!(
            drain(&mut q),
            [
                state(1, Role::Readiness, ProbeResult::Failure),
                state(1, Role::Liveness, ProbeResult::Success),
                state(2, Role::Readiness, ProbeResult::Failure),
            ]
        );
        // Drained: the next change is a new event.
        q.push(state(1, Role::Readiness, ProbeResult::Success));
        assert_eq!(drain(&mut q), [state(1, Role::Readiness, ProbeResult::Success)]);
        assert_eq!(q.dropped(), 0);
    }

    #[test]
    fn run_events_past_the_limit_drop_the_oldest_of_earlier_turns_and_count_them() {
        let mut q = EventQueue::new(3);
        q.push(run(1, 0));
        q.push(state(1, Role::Readiness, ProbeResult::Success));
        // One turn makes more runs than the limit: all kept, for a host that drains each turn.
        for n in 1..5 {
            q.push(run(1, n));
        }
        assert_eq!((q.len(), q.dropped()), (6, 0));
        q.start_turn();
        q.push(run(1, 5));
        assert_eq!(q.dropped(), 3);
        q.start_turn();
        q.push(run(1, 6));
        assert_eq!(q.dropped(), 4);
        assert_eq!(
            drain(&mut q),
            [state(1, Role::Readiness, ProbeResult::Success), run(1, 4), run(1, 5), run(1, 6)]
        );
        let mut none = EventQueue::new(0);
        none.push(run(1, 0));
        assert_eq!((none.len(), none.dropped()), (0, 1));
    }

    #[test]
    fn removing_a_target_keeps_the_others_coalescing() {
        let mut q = EventQueue::new(8);
        q.push(state(1, Role::Readiness, ProbeResult::Failure));
        q.push(run(1, 0));
        q.push(state(2, Role::Readiness, ProbeResult::Failure));
        q.remove_target(1);
        q.push(state(2, Role::Readiness, ProbeResult::Success));
        q.push(state(1, Role::Readiness, ProbeResult::Success));
        assert_eq!(
            drain(&mut q),
            [
                state(2, Role::Readiness, ProbeResult::Success),
                state(1, Role::Readiness, ProbeResult::Success)
            ]
        );
    }
}
