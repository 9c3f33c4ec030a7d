//! Worker scheduling: ticks, periods (per state), jitter and initial spreading.

use std::time::{Duration, Instant};

use prober_core::{Role, Schedule};

use crate::arena::Key;
use crate::engine::Engine;
use crate::event::TargetId;
use crate::probe::AnyProbe;
use crate::slots::Owner;
use crate::timers::TimerKey;

impl Engine {
    pub(crate) fn worker_tick(
        &mut self,
        id: TargetId,
        role: Role,
        scheduled: Instant,
        now: Instant,
    ) {
        // The generator is borrowed apart from the target (both live in `self`).
        let rng = &mut self.rng;
        let Some(t) = self.targets.get_mut(Key::from_u64(id)) else { return };
        let started = t.started();
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        // The period of the worker's state (the schedule's period without the extensions).
        let base = w.state.period();
        let percent = w.state.schedule().jitter_percent;
        w.tick = Some((scheduled, base));
        let period = if percent == 0 { base } else { spread(rng, base, percent) };
        // Fixed rate from the scheduled instant; if the engine fell behind by more than a
        // period, skip the missed ticks (as Go's ticker drops them) instead of bursting.
        let mut next = scheduled + period;
        if next <= now {
            next = now + period;
        }
        if w.in_flight.is_some() {
            w.run_after = true;
        }
        let run = w.in_flight.is_none() && w.state.should_run(started);
        // Built from the prepared spec: nothing of the spec is copied per run.
        let probe = if run { Some(AnyProbe::prepared(&w.spec)) } else { None };
        self.schedule_worker(id, role, next);
        if let Some(probe) = probe {
            // Lateness is measured at the start of the run, not at its end: it says how well
            // the scheduler kept time, not how long the probe took.
            let late_us = Instant::now().saturating_duration_since(scheduled).as_micros() as u64;
            let owner = Owner::Worker { target: Key::from_u64(id), role, late_us };
            self.start_probe(probe, owner);
        }
    }

    pub(crate) fn schedule_worker(&mut self, id: TargetId, role: Role, at: Instant) {
        if let Ok(t) = self.target_mut(id) {
            if let Some(w) = t.workers[role.index()].as_mut() {
                w.next_run = Some(at);
                let key = TimerKey::Worker { target: Key::from_u64(id), role: role as u8 };
                self.timers.push(at, key);
            }
        }
    }

    pub(crate) fn jitter(&mut self, schedule: Schedule) -> Duration {
        if !schedule.jitter {
            return Duration::ZERO;
        }
        let r = next_random(&mut self.rng);
        let nanos = schedule.period.as_nanos().max(1) as u64;
        Duration::from_nanos(r % nanos)
    }

    /// After a recorded result: when the worker's per-state period changed (Failure published,
    /// a transition begun or ended), move the next run to the last tick plus the new period,
    /// or to now if that is already past. Nothing to do for kubelet schedules, whose period
    /// never changes.
    pub(crate) fn reperiod(&mut self, id: TargetId, role: Role, now: Instant) {
        let Ok(t) = self.target_mut(id) else { return };
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        let schedule = w.state.schedule();
        if schedule.unhealthy_period.is_none() && schedule.transition_period.is_none() {
            return;
        }
        let (Some((tick, used)), Some(_)) = (w.tick, w.next_run) else { return };
        let base = w.state.period();
        if base == used {
            return;
        }
        let percent = schedule.jitter_percent;
        w.tick = Some((tick, base));
        let period = if percent == 0 { base } else { spread(&mut self.rng, base, percent) };
        self.schedule_worker(id, role, (tick + period).max(now));
    }
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// `period` ± `percent` %, uniformly (Envoy's `interval_jitter_percent`): workers that start
/// together drift apart instead of probing in lockstep forever.
pub(crate) fn spread(rng: &mut u64, period: Duration, percent: u32) -> Duration {
    let nanos = period.as_nanos().min(u64::MAX as u128 / 2) as u64;
    let span = nanos / 100 * u64::from(percent) + nanos % 100 * u64::from(percent) / 100;
    let offset = next_random(rng) % (2 * span + 1);
    Duration::from_nanos((nanos - span + offset).max(1))
}

#[cfg(test)]
mod spread_tests {
    use super::*;

    #[test]
    fn spread_stays_within_the_percentage_and_varies() {
        let mut rng = 7;
        let p = Duration::from_millis(1000);
        let draws: Vec<Duration> = (0..2000).map(|_| spread(&mut rng, p, 10)).collect();
        assert!(
            draws
                .iter()
                .all(|d| (Duration::from_millis(900)..=Duration::from_millis(1100)).contains(d))
        );
        let (lo, hi) = (draws.iter().min().unwrap(), draws.iter().max().unwrap());
        assert!(
            *lo < Duration::from_millis(910) && *hi > Duration::from_millis(1090),
            "{lo:?} {hi:?}"
        );
        let mean = draws.iter().sum::<Duration>() / draws.len() as u32;
        assert!(
            (Duration::from_millis(990)..=Duration::from_millis(1010)).contains(&mean),
            "{mean:?}"
        );
        // Tiny periods and the largest ones neither underflow nor overflow.
        assert!(spread(&mut rng, Duration::from_nanos(1), 50) >= Duration::from_nanos(1));
        let week = Duration::from_secs(7 * 24 * 3600);
        assert!(spread(&mut rng, week, 50) <= week * 3 / 2);
    }
}
