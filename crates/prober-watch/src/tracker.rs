//! The event-to-state step of a watch: each engine event updates its target's state, the
//! metrics, the health table and the hooks, and says whether it is worth a line of output.
//! What a line looks like is the host's (the `prober` command formats and prints them).

use std::collections::HashMap;
use std::io;
use std::time::Duration;

use prober::{Event, Outcome, ProbeResult, ProbeSpec, Role, TargetId};

use crate::escape::escape_for_terminal;
use crate::health::Health;
use crate::hooks::{self, Change, Ended, Hooks};
use crate::metrics::Metrics;
use crate::target_state::TargetState;

/// Something worth a line of output, with what the line says.
#[derive(Debug, Clone, Copy)]
pub enum Notice<'a> {
    /// A published value of `role` changed (`outcome`: the run that changed it; `None` for the
    /// initial value set with the probe).
    State {
        /// The target, after the change.
        target: &'a TargetState,
        /// The probe whose value changed.
        role: Role,
        /// The value published.
        result: ProbeResult,
        /// The run that changed it.
        outcome: Option<&'a Outcome>,
    },
    /// A run: every run with `every_run`, else the first failing run of a streak that did not
    /// change the published value.
    Run {
        /// The target, with the run recorded.
        target: &'a TargetState,
        /// The probe that ran.
        role: Role,
        /// What the run said.
        outcome: &'a Outcome,
        /// How long after its scheduled time the run started.
        late: Duration,
    },
    /// A hook run ended.
    Hook {
        /// The target whose hook it was.
        target: &'a TargetState,
        /// Which change the hook was told of.
        ended: &'a Ended,
        /// What the hook's run said (its exit status and output).
        outcome: &'a Outcome,
    },
}

/// The targets of a watch and what follows their events: metrics, health, hooks.
#[derive(Debug)]
pub struct Tracker {
    states: Vec<TargetState>,
    by_id: HashMap<TargetId, usize>,
    every_run: bool,
    metrics: Option<Metrics>,
    /// `--on-change`.
    hooks: Option<Hooks>,
    /// `--health-listen`.
    health: Option<Health>,
    /// How many targets have had no first verdict yet.
    waiting: usize,
    /// A published value or a verdict changed since the flag was last taken.
    changed: bool,
    /// A run ended since the flag was last taken.
    ran: bool,
    /// Hook runs to submit to the engine, tagged with their target's index.
    to_submit: Vec<(ProbeSpec, u64)>,
}

impl Tracker {
    /// Tracks `states`, whose engine ids are `by_id`'s keys (mapped to their index in
    /// `states`); `every_run` makes every run a [`Notice::Run`]. The metrics' target gauges
    /// are set now.
    pub fn new(
        states: Vec<TargetState>,
        by_id: HashMap<TargetId, usize>,
        every_run: bool,
        metrics: Option<Metrics>,
        health: Option<Health>,
        hooks: Option<Hooks>,
    ) -> Tracker {
        if let Some(m) = &metrics {
            states.iter().for_each(|t| m.record_target(t));
        }
        let waiting = states.iter().filter(|t| !t.has_verdict()).count();
        Tracker {
            states,
            by_id,
            every_run,
            metrics,
            hooks,
            health,
            waiting,
            changed: true,
            ran: false,
            to_submit: Vec::new(),
        }
    }

    /// The targets, in the order they were given.
    pub fn states(&self) -> &[TargetState] {
        &self.states
    }

    /// The engine ids of the targets.
    pub fn target_ids(&self) -> impl Iterator<Item = TargetId> + '_ {
        self.by_id.keys().copied()
    }

    /// How many targets have had no first verdict yet.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Whether a published value or a verdict changed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Whether a run ended since the last call.
    pub fn take_ran(&mut self) -> bool {
        std::mem::take(&mut self.ran)
    }

    /// The hook runs to submit to the engine as one-shot checks, with their tags (their
    /// [`Event::Check`] comes back to [`Tracker::handle`]).
    pub fn hook_runs(&mut self) -> std::vec::Drain<'_, (ProbeSpec, u64)> {
        self.to_submit.drain(..)
    }

    /// Whether no hook runs.
    pub fn hooks_idle(&self) -> bool {
        self.hooks.as_ref().is_none_or(Hooks::idle)
    }

    /// Queues a hook run of target `i` for `next` (role, from, to, reason), if any.
    fn queue_hook(&mut self, i: usize, mut next: Option<hooks::Due>) {
        let Some(h) = &mut self.hooks else {
            return;
        };
        let name = &self.states[i].name;
        while let Some((role, from, to, reason)) = next {
            let Some(command) = h.command(i) else { return };
            match command.spec(&Change { target: name, role, from, to, reason }) {
                Ok(spec) => {
                    self.to_submit.push((spec, i as u64));
                    return;
                }
                // The command was checked at start and the values hold no NUL: this cannot
                // happen. Should it, the run is skipped, not left pending for ever.
                Err(e) => {
                    eprintln!("prober: note: --on-change: {}", escape_for_terminal(&e));
                    next = h.ended(i).and_then(|(_, n)| n);
                }
            }
        }
    }

    /// Handles a batch of events, calling `print` with each that is worth a line. After
    /// `print` fails (the reader of the output went away) it is called no more, the events are
    /// still followed, and the error is returned.
    ///
    /// # Errors
    ///
    /// The first error `print` returned.
    pub fn handle(
        &mut self,
        events: &mut Vec<Event>,
        mut print: impl FnMut(Notice<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut result = Ok(());
        let mut events = events.drain(..).peekable();
        while let Some(ev) = events.next() {
            if let Event::Check { tag, outcome } = ev {
                // A hook run ended: log it, and run the target's next change, if any.
                let i = usize::try_from(tag).unwrap_or(usize::MAX);
                let Some((ended, next)) = self.hooks.as_mut().and_then(|h| h.ended(i)) else {
                    continue;
                };
                self.queue_hook(i, next);
                if result.is_ok() {
                    let target = &self.states[i];
                    result = print(Notice::Hook { target, ended: &ended, outcome: &outcome });
                }
                continue;
            }
            let Some(&i) = ev.target().and_then(|t| self.by_id.get(&t)) else {
                continue;
            };
            match ev {
                Event::State { role, result: value, outcome, .. } => {
                    let t = &mut self.states[i];
                    t.publish(role, value, outcome.as_ref().map(|o| o.reason));
                    self.changed = true;
                    if let Some(m) = &self.metrics {
                        m.record_target(t);
                    }
                    if let Some(h) = &self.health {
                        h.update(i, t);
                    }
                    if let Some(h) = &mut self.hooks {
                        match &outcome {
                            None => h.initial(i, role, value),
                            Some(o) => {
                                let next = h.changed(i, role, value, o.reason);
                                self.queue_hook(i, next);
                            }
                        }
                    }
                    if result.is_ok() {
                        let target = &self.states[i];
                        let outcome = outcome.as_deref();
                        result = print(Notice::State { target, role, result: value, outcome });
                    }
                }
                Event::Run { target, role, outcome, late_us } => {
                    let late = Duration::from_micros(late_us);
                    let t = &mut self.states[i];
                    if let Some(m) = &self.metrics {
                        m.record_run(&t.name, role, &outcome, late);
                    }
                    // The engine queues a run's change right behind the run: a change line
                    // then carries the same message.
                    let published_now = matches!(events.peek(),
                        Some(Event::State { target: next, role: r, outcome: Some(_), .. })
                            if *next == target && *r == role);
                    let worth = self.every_run || t.starts_streak(role, &outcome) && !published_now;
                    // Only a shown run is kept past its recording: most runs show nothing.
                    let shown = (worth && result.is_ok()).then(|| outcome.clone());
                    if t.record_run(role, outcome) {
                        self.waiting -= 1;
                        self.changed = true;
                    }
                    self.ran = true;
                    // The reason a target is not ready is its last failing run's.
                    if let Some(h) = &self.health {
                        h.update(i, t);
                    }
                    // Shown once the health table says the same: a reader of the line finds it so.
                    if let Some(outcome) = shown {
                        result = print(Notice::Run { target: t, role, outcome: &outcome, late });
                    }
                }
                // Completions of one-shot checks (the watch submits none), and any event added later.
                _ => {}
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::Reason;

    const ID: TargetId = 7;

    fn run(result: ProbeResult, reason: Reason) -> Event {
        let outcome = Box::new(Outcome::new(result, reason, "m"));
        Event::Run { target: ID, role: Role::Readiness, outcome, late_us: 0 }
    }

    fn state(result: ProbeResult, reason: Option<Reason>) -> Event {
        let outcome = reason.map(|r| Box::new(Outcome::new(result, r, "m")));
        Event::State { target: ID, role: Role::Readiness, result, outcome }
    }

    /// What `handle` shows of `events`, one word per notice.
    fn shown(t: &mut Tracker, events: Vec<Event>) -> Vec<String> {
        let mut lines = Vec::new();
        let mut events = events;
        t.handle(&mut events, |n| {
            lines.push(match n {
                Notice::State { result, .. } => format!("state {result}"),
                Notice::Run { outcome, .. } => format!("run {}", outcome.result),
                Notice::Hook { .. } => "hook".into(),
            });
            Ok(())
        })
        .unwrap();
        lines
    }

    #[test]
    fn runs_are_shown_when_they_start_a_streak_and_changes_always() {
        use ProbeResult::{Failure as F, Success as S};
        let states = vec![TargetState::new("db".into(), [false, true, false])];
        let health = Health::new(&states);
        let mut t = Tracker::new(states, HashMap::from([(ID, 0)]), false, None, Some(health), None);
        assert_eq!(t.waiting(), 1);
        assert_eq!(shown(&mut t, vec![state(F, None)]), ["state failure"]);
        // The first failing run starts a streak; the next says nothing new.
        assert_eq!(shown(&mut t, vec![run(F, Reason::Refused)]), ["run failure"]);
        assert_eq!((t.waiting(), t.take_ran(), t.take_changed()), (0, true, true));
        assert!(shown(&mut t, vec![run(F, Reason::Refused)]).is_empty());
        // A run whose change comes right behind it: the change line says it.
        let changed = shown(&mut t, vec![run(S, Reason::None), state(S, Some(Reason::None))]);
        assert_eq!(changed, ["state success"]);
        assert!(t.states()[0].ready());
        // A failing run that changes the value at once (failureThreshold 1): one line, too.
        let changed = shown(&mut t, vec![run(F, Reason::Status), state(F, Some(Reason::Status))]);
        assert_eq!(changed, ["state failure"]);
        assert!(!t.states()[0].ready());
        assert!(t.hooks_idle());
        // A stray event of no target of this watch is ignored.
        let stray = Event::Run {
            target: ID + 1,
            role: Role::Readiness,
            outcome: Box::new(Outcome::new(F, Reason::Refused, "m")),
            late_us: 0,
        };
        assert!(shown(&mut t, vec![stray]).is_empty());
    }

    #[test]
    fn a_failed_print_stops_the_lines_not_the_tracking() {
        let states = vec![TargetState::new("db".into(), [false, true, false])];
        let mut t = Tracker::new(states, HashMap::from([(ID, 0)]), true, None, None, None);
        let mut calls = 0;
        let mut events = vec![
            run(ProbeResult::Success, Reason::None),
            state(ProbeResult::Success, Some(Reason::None)),
        ];
        let r = t.handle(&mut events, |_| {
            calls += 1;
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(calls, 1);
        assert!(t.states()[0].ready(), "the change was tracked after the failed print");
        assert!(events.is_empty());
    }
}
