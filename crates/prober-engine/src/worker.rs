//! The kubelet's per-probe worker rules as a pure state machine (no I/O, no clocks).
//!
//! The engine owns sockets, processes and timers; this module only decides what one run's result
//! means: whether to retry at once, whether the published value changes, and whether the worker
//! stops probing (hold). Keeping the rules here, apart from the event loop, lets them be tested
//! step by step against the kubelet's own `worker_test.go` cases
//! (<https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/prober/worker_test.go>) without any timing flakiness.
//!
//! Rules (the kubelet's `worker.go`, <https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/prober/worker.go>: the initial values,
//! `doProbe` from startup gating to the hold, and `runProbeWithRetries` in `prober.go`):
//! - Initial values: readiness `Failure`, liveness `Success`, startup `Unknown`.
//! - `Warning` counts as `Success` (the kubelet maps `probe.Warning` to `results.Success`).
//! - `Unknown` plays the role of the kubelet's prober *error*: retried at once, at most
//!   [`MAX_ATTEMPTS`] attempts in all per scheduled run, then thrown away without counting.
//! - Consecutive equal results are counted; the value is published once a threshold is met.
//! - Liveness holds after a published `Failure`; startup holds after any published result. Only a
//!   restart of the target (a new container id) lifts the hold.
//!
//! Initial delay, period, jitter and manual triggers are timing concerns and belong to the engine.

use std::time::Duration;

use prober_core::{ProbeResult, Role, Schedule};

/// Attempts per scheduled run when the result is `Unknown` (the kubelet's `maxProbeRetries`):
/// the first attempt plus two immediate retries.
pub const MAX_ATTEMPTS: u32 = 3;

/// What the engine must do after [`Worker::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The published value did not change: emit no event (the kubelet's results manager only
    /// sends an update when the value is new or changed).
    Unchanged,
    /// The published value changed to this (`Success`, `Failure`); emit one event.
    Published(ProbeResult),
    /// The run produced `Unknown` and has attempts left: run the probe again immediately, with no
    /// backoff and without waiting for the next period.
    RetryNow,
}

/// The state of one periodic probe of one target: its published value, its run of consecutive
/// equal results, and whether it is on hold.
#[derive(Clone, Debug)]
pub struct Worker {
    role: Role,
    schedule: Schedule,
    /// The published value: `Success`, `Failure` or `Unknown` (startup before its first result).
    value: ProbeResult,
    /// How many consecutive runs produced `last` (0 right after a hold or a restart).
    result_run: u32,
    /// The last counted result, normalised (`Success` or `Failure`); `None` after a restart.
    last: Option<ProbeResult>,
    /// Set after a publication that makes further probing pointless until the target restarts.
    on_hold: bool,
    /// Consecutive `Unknown` attempts within the current scheduled run.
    attempts: u32,
}

impl Worker {
    /// A worker for a freshly (re)started target, publishing the role's initial value.
    ///
    /// The schedule must have passed [`Schedule::validate`] for `role`; the engine refuses bad
    /// schedules before creating workers, so this is only checked in debug builds.
    pub fn new(role: Role, schedule: Schedule) -> Worker {
        debug_assert!(schedule.validate(role).is_ok(), "unvalidated schedule for {role}");
        Worker {
            role,
            schedule,
            value: Worker::initial_value(role),
            result_run: 0,
            last: None,
            on_hold: false,
            attempts: 0,
        }
    }

    /// The value a role publishes before its first counted result: readiness `Failure` (not
    /// ready until proven), liveness `Success` (alive until proven dead), startup `Unknown`
    /// (not yet known whether it started).
    pub fn initial_value(role: Role) -> ProbeResult {
        match role {
            Role::Readiness => ProbeResult::Failure,
            Role::Liveness => ProbeResult::Success,
            Role::Startup => ProbeResult::Unknown,
        }
    }

    /// The role this worker was created for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The schedule this worker was created with (the engine reads its timing from here).
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The published value: `Success`, `Failure` or `Unknown`, never `Warning`.
    pub fn value(&self) -> ProbeResult {
        self.value
    }

    /// True when the worker must not probe until the target restarts: after a published
    /// liveness `Failure` (the target is about to be restarted; probing a dying target is
    /// useless, kubernetes#21751) or after any published startup result (kubernetes#121206).
    pub fn on_hold(&self) -> bool {
        self.on_hold
    }

    /// Whether a scheduled run should probe now. `started` is whether the target has started
    /// (its startup probe published `Success`, or it has no startup probe).
    ///
    /// Startup probes run only until the target has started; liveness and readiness only once
    /// it has, so a slow-starting target is not killed or served before it is up. Nothing runs
    /// while on hold.
    pub fn should_run(&self, started: bool) -> bool {
        if self.on_hold {
            return false;
        }
        match self.role {
            Role::Startup => !started,
            Role::Readiness | Role::Liveness => started,
        }
    }

    /// Applies one attempt's result and says what to do.
    ///
    /// - `Unknown`: [`Verdict::RetryNow`] while the run has attempts left; the last allowed
    ///   `Unknown` of a run is discarded ([`Verdict::Unchanged`]): the run of equal results and
    ///   the last result are left untouched, so an unrunnable probe never moves the published
    ///   value either way (the kubelet throws away prober errors).
    /// - `Success`/`Warning` and `Failure` are counted; the value is published once
    ///   `failure_threshold` consecutive failures or `success_threshold` consecutive successes
    ///   are seen, then the hold rules apply.
    ///
    /// A result recorded while on hold (a run that was already in flight) is ignored, because the
    /// kubelet never probes a held worker and a held value must stay as published.
    pub fn record(&mut self, result: ProbeResult) -> Verdict {
        if self.on_hold {
            return Verdict::Unchanged;
        }
        let result = match result {
            ProbeResult::Unknown => {
                self.attempts += 1;
                if self.attempts < MAX_ATTEMPTS {
                    return Verdict::RetryNow;
                }
                self.attempts = 0;
                return Verdict::Unchanged;
            }
            ProbeResult::Success | ProbeResult::Warning => ProbeResult::Success,
            ProbeResult::Failure => ProbeResult::Failure,
        };
        self.attempts = 0;

        if self.last == Some(result) {
            self.result_run = self.result_run.saturating_add(1);
        } else {
            self.last = Some(result);
            self.result_run = 1;
        }

        let threshold = match result {
            ProbeResult::Failure => self.schedule.failure_threshold,
            _ => self.schedule.success_threshold,
        };
        if self.result_run < threshold {
            return Verdict::Unchanged;
        }

        let changed = self.value != result;
        self.value = result;
        // The kubelet holds without looking at whether the value changed; a held worker restarts
        // counting from zero so that the restarted target gets the full thresholds.
        if (self.role == Role::Liveness && result == ProbeResult::Failure)
            || self.role == Role::Startup
        {
            self.on_hold = true;
            self.result_run = 0;
        }
        if changed { Verdict::Published(result) } else { Verdict::Unchanged }
    }

    /// The target restarted (a new container id): publish the initial value again, lift the
    /// hold and forget all counts. Returns `Some(value)` when the published value changed.
    ///
    /// Unlike the kubelet, which keeps `resultRun` and `lastResult` across container ids, the run
    /// count is reset too: results of the old target must not count towards the new target's
    /// thresholds (the kubelet's own comment on resetting `resultRun` gives the same intent:
    /// "so that the probe on the restarted pod also gets FailureThreshold attempts").
    pub fn restart(&mut self) -> Option<ProbeResult> {
        let initial = Worker::initial_value(self.role);
        let changed = self.value != initial;
        self.value = initial;
        self.result_run = 0;
        self.last = None;
        self.on_hold = false;
        self.attempts = 0;
        changed.then_some(initial)
    }

    /// The period until the next scheduled run, from the state after the last recorded result:
    /// the schedule's `transition_period` while the last counted result disagrees with the
    /// published value (it counts towards a threshold), else its `unhealthy_period` while the
    /// published value is Failure, else `period`. Without either set this is always `period`.
    pub fn period(&self) -> Duration {
        let s = &self.schedule;
        if let Some(fast) = s.transition_period {
            if self.last.is_some_and(|last| last != self.value) && self.result_run > 0 {
                return fast;
            }
        }
        match s.unhealthy_period {
            Some(down) if self.value == ProbeResult::Failure => down,
            _ => s.period,
        }
    }

    /// The number of consecutive equal counted results (what the kubelet's tests assert on).
    #[cfg(test)]
    fn result_run(&self) -> u32 {
        self.result_run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProbeResult::{Failure as F, Success as S, Unknown as U, Warning as W};
    use Verdict::{Published, RetryNow, Unchanged};

    fn sched(success: u32, failure: u32) -> Schedule {
        Schedule { success_threshold: success, failure_threshold: failure, ..Schedule::default() }
    }

    /// Feeds results and returns the verdicts together with the published value after each.
    fn feed(w: &mut Worker, results: &[ProbeResult]) -> Vec<(Verdict, ProbeResult)> {
        results.iter().map(|&r| (w.record(r), w.value())).collect()
    }

    /// Whether the role runs before / after the target has started.
    fn started_for(role: Role) -> bool {
        role != Role::Startup
    }

    // W7: TestDoProbe "probe successful" and "initial delay passed": one success publishes
    // Success for every role (an event only where the value changes).
    #[test]
    fn w7_probe_success_publishes_success() {
        for (role, verdict) in [
            (Role::Liveness, Unchanged),
            (Role::Readiness, Published(S)),
            (Role::Startup, Published(S)),
        ] {
            let mut w = Worker::new(role, Schedule::default());
            assert!(w.should_run(started_for(role)), "{role}");
            assert_eq!(w.record(S), verdict, "{role}");
            assert_eq!(w.value(), S, "{role}");
        }
    }

    // W8: TestInitialDelay: before the first result each role publishes its initial value; the
    // first run after the delay publishes Success.
    #[test]
    fn w8_initial_values_and_first_run() {
        for (role, initial) in [(Role::Liveness, S), (Role::Readiness, F), (Role::Startup, U)] {
            assert_eq!(Worker::initial_value(role), initial, "{role}");
            let mut w = Worker::new(role, Schedule::default());
            assert_eq!(w.value(), initial, "{role}");
            assert!(!w.on_hold(), "{role}");
            assert!(w.should_run(started_for(role)), "{role}");
            assert!(!w.should_run(!started_for(role)), "{role}");
            w.record(S);
            assert_eq!(w.value(), S, "{role}");
        }
    }

    // W9: TestFailureThreshold: readiness S=1 F=3: S,S,S then two failures keep Success, the
    // third and following fail; twice.
    #[test]
    fn w9_failure_threshold() {
        let mut w = Worker::new(Role::Readiness, sched(1, 3));
        for round in 0..2 {
            let got = feed(&mut w, &[S, S, S, F, F, F, F, F]);
            let want = vec![
                (Published(S), S),
                (Unchanged, S),
                (Unchanged, S),
                (Unchanged, S),
                (Unchanged, S),
                (Published(F), F),
                (Unchanged, F),
                (Unchanged, F),
            ];
            assert_eq!(got, want, "round {round}");
            assert!(!w.on_hold());
        }
    }

    // W10: TestSuccessThreshold: readiness S=3 F=1 starting at Failure: two successes keep
    // Failure, the third and following succeed, one failure fails at once; twice.
    #[test]
    fn w10_success_threshold() {
        let mut w = Worker::new(Role::Readiness, sched(3, 1));
        assert_eq!(w.value(), F);
        for round in 0..2 {
            let got = feed(&mut w, &[S, S, S, S, S, F]);
            let want = vec![
                (Unchanged, F),
                (Unchanged, F),
                (Published(S), S),
                (Unchanged, S),
                (Unchanged, S),
                (Published(F), F),
            ];
            assert_eq!(got, want, "round {round}");
        }
    }

    // W11: TestStartupProbeSuccessThreshold: startup S=1 F=3: the first success publishes and
    // holds with resultRun 0; no more runs.
    #[test]
    fn w11_startup_success_holds() {
        let mut w = Worker::new(Role::Startup, sched(1, 3));
        assert!(!w.on_hold());
        assert_eq!(w.record(S), Published(S));
        assert_eq!(w.value(), S);
        assert!(w.on_hold());
        assert_eq!(w.result_run(), 0);
        assert!(!w.should_run(false));
        assert!(!w.should_run(true));
    }

    // W12: TestStartupProbeFailureThreshold: startup S=1 F=3 failing: runs 1-2 keep Unknown with
    // resultRun 1, 2; run 3 publishes Failure, resultRun 0, hold.
    #[test]
    fn w12_startup_failure_threshold() {
        let mut w = Worker::new(Role::Startup, sched(1, 3));
        for i in 0..2 {
            assert!(!w.on_hold());
            assert!(w.should_run(false));
            assert_eq!(w.record(F), Unchanged);
            assert_eq!(w.value(), U);
            assert_eq!(w.result_run(), i + 1);
        }
        assert_eq!(w.record(F), Published(F));
        assert_eq!(w.value(), F);
        assert_eq!(w.result_run(), 0);
        assert!(w.on_hold());
        assert!(!w.should_run(false));
        assert_eq!(w.result_run(), 0);
    }

    // W13: TestOnHoldOnLivenessOrStartupCheckFailure: S=1 F=1: a failure publishes Failure and
    // holds; a success while held changes nothing; a restart lifts the hold and the next success
    // publishes Success (liveness stays un-held, startup holds again).
    #[test]
    fn w13_hold_on_liveness_or_startup_failure() {
        for role in [Role::Liveness, Role::Startup] {
            let mut w = Worker::new(role, sched(1, 1));
            assert_eq!(w.record(F), Published(F), "{role}");
            assert_eq!(w.value(), F, "{role}");
            assert!(w.on_hold(), "{role}");

            assert!(!w.should_run(started_for(role)), "{role}");
            assert_eq!(w.record(S), Unchanged, "{role}: a stray result while held");
            assert_eq!(w.value(), F, "{role}");
            assert!(w.on_hold(), "{role}");

            let initial = Worker::initial_value(role);
            assert_eq!(w.restart(), Some(initial), "{role}");
            assert!(!w.on_hold(), "{role}");
            assert!(w.should_run(started_for(role)), "{role}");
            let want = if role == Role::Liveness { Unchanged } else { Published(S) };
            assert_eq!(w.record(S), want, "{role}");
            assert_eq!(w.value(), S, "{role}");
            assert_eq!(w.on_hold(), role == Role::Startup, "{role}");
        }
    }

    // W14: TestResultRunOnLivenessCheckFailure: liveness F=3: S (run 1), F (run 1, Success),
    // F (run 2, Success), F publishes Failure and resets the run to 0.
    #[test]
    fn w14_result_run_on_liveness_failure() {
        let mut w = Worker::new(Role::Liveness, sched(1, 3));
        let steps = [(S, Unchanged, S, 1), (F, Unchanged, S, 1), (F, Unchanged, S, 2)];
        for (i, (r, verdict, value, run)) in steps.into_iter().enumerate() {
            assert_eq!(w.record(r), verdict, "step {i}");
            assert_eq!(w.value(), value, "step {i}");
            assert_eq!(w.result_run(), run, "step {i}");
        }
        assert_eq!(w.record(F), Published(F));
        assert_eq!(w.value(), F);
        assert_eq!(w.result_run(), 0);
        assert!(w.on_hold());
    }

    // W15: TestResultRunOnStartupCheckFailure: startup F=3, not started: Unknown (run 1),
    // Unknown (run 2), Failure (run 0).
    #[test]
    fn w15_result_run_on_startup_failure() {
        let mut w = Worker::new(Role::Startup, sched(1, 3));
        assert!(w.should_run(false));
        assert_eq!(w.record(F), Unchanged);
        assert_eq!((w.value(), w.result_run()), (U, 1));
        assert_eq!(w.record(F), Unchanged);
        assert_eq!((w.value(), w.result_run()), (U, 2));
        assert_eq!(w.record(F), Published(F));
        assert_eq!((w.value(), w.result_run()), (F, 0));
    }

    // W16: TestLivenessProbeDisabledByStarted: liveness S=1 F=1 does not run before the target
    // has started, so it stays Success; once started, a failure publishes Failure.
    #[test]
    fn w16_liveness_disabled_until_started() {
        let mut w = Worker::new(Role::Liveness, sched(1, 1));
        assert!(!w.should_run(false));
        assert_eq!(w.value(), S);
        assert!(w.should_run(true));
        assert_eq!(w.record(F), Published(F));
        assert_eq!(w.value(), F);
    }

    // W16 for readiness: the same gating (kubelet step 9 idles liveness and readiness alike).
    #[test]
    fn readiness_disabled_until_started() {
        let w = Worker::new(Role::Readiness, Schedule::default());
        assert!(!w.should_run(false));
        assert!(w.should_run(true));
    }

    // W17: TestStartupProbeDisabledByStarted: startup F=2: a failure keeps Unknown, a success
    // publishes Success; once started the probe no longer runs, so the value stays Success.
    #[test]
    fn w17_startup_disabled_once_started() {
        let mut w = Worker::new(Role::Startup, sched(1, 2));
        assert!(w.should_run(false));
        assert_eq!(w.record(F), Unchanged);
        assert_eq!(w.value(), U);
        assert!(w.should_run(false));
        assert_eq!(w.record(S), Published(S));
        assert_eq!(w.value(), S);
        assert!(!w.should_run(true));
        assert_eq!(w.record(F), Unchanged, "a stray failure after start is ignored");
        assert_eq!(w.value(), S);
    }

    // W17 without the hold: gating alone stops a startup probe once the target has started.
    #[test]
    fn startup_gating_alone_stops_runs() {
        let w = Worker::new(Role::Startup, Schedule::default());
        assert!(!w.on_hold());
        assert!(!w.should_run(true));
    }

    // W20: results TestUpdates: a new value is an event, the same value again is none, a changed
    // value is an event.
    #[test]
    fn w20_events_only_on_change() {
        let mut w = Worker::new(Role::Readiness, sched(1, 1));
        assert_eq!(
            feed(&mut w, &[S, S, F, F, S]),
            vec![
                (Published(S), S),
                (Unchanged, S),
                (Published(F), F),
                (Unchanged, F),
                (Published(S), S),
            ]
        );
    }

    #[test]
    fn warning_counts_as_success() {
        let mut w = Worker::new(Role::Readiness, sched(2, 1));
        assert_eq!(feed(&mut w, &[W, S]), vec![(Unchanged, F), (Published(S), S)]);
        assert_eq!(w.result_run(), 2, "Warning and Success are one run");
        assert_eq!(
            feed(&mut w, &[F, W, W]),
            vec![(Published(F), F), (Unchanged, F), (Published(S), S)]
        );
    }

    #[test]
    fn unknown_retried_twice_then_discarded() {
        let mut w = Worker::new(Role::Readiness, sched(1, 1));
        assert_eq!(feed(&mut w, &[U, U, U]), vec![(RetryNow, F), (RetryNow, F), (Unchanged, F)]);
        assert_eq!(w.result_run(), 0);
        // The next scheduled run gets three attempts again.
        assert_eq!(feed(&mut w, &[U, U, S]), vec![(RetryNow, F), (RetryNow, F), (Published(S), S)]);
        // An Unknown never publishes, whatever the role's initial value.
        let mut l = Worker::new(Role::Liveness, sched(1, 1));
        for _ in 0..4 {
            assert_eq!(
                feed(&mut l, &[U, U, U]),
                vec![(RetryNow, S), (RetryNow, S), (Unchanged, S)]
            );
        }
        let mut s = Worker::new(Role::Startup, sched(1, 1));
        assert_eq!(feed(&mut s, &[U, U, U]), vec![(RetryNow, U), (RetryNow, U), (Unchanged, U)]);
        assert!(!s.on_hold());
    }

    #[test]
    fn counted_result_resets_attempts() {
        let mut w = Worker::new(Role::Liveness, sched(1, 3));
        // U then F: the F ends the run; the next run's Unknowns get three attempts again.
        assert_eq!(feed(&mut w, &[U, F]), vec![(RetryNow, S), (Unchanged, S)]);
        assert_eq!(feed(&mut w, &[U, U]), vec![(RetryNow, S), (RetryNow, S)]);
        assert_eq!(w.record(U), Unchanged);
        assert_eq!(w.result_run(), 1, "the discarded Unknowns did not touch the run");
    }

    // Decision: a discarded Unknown leaves result_run and the last result untouched, so it does
    // not break a run of successes or failures (the kubelet throws prober errors away).
    #[test]
    fn discarded_unknown_does_not_break_a_run() {
        let mut w = Worker::new(Role::Readiness, sched(2, 2));
        assert_eq!(w.record(S), Unchanged);
        assert_eq!(feed(&mut w, &[U, U, U]), vec![(RetryNow, F), (RetryNow, F), (Unchanged, F)]);
        assert_eq!(w.result_run(), 1);
        assert_eq!(w.record(S), Published(S), "S, discarded U, S is a run of 2");
        assert_eq!(w.result_run(), 2);

        assert_eq!(w.record(F), Unchanged);
        assert_eq!(feed(&mut w, &[U, U, U]), vec![(RetryNow, S), (RetryNow, S), (Unchanged, S)]);
        assert_eq!(w.record(F), Published(F), "F, discarded U, F is a run of 2");
    }

    #[test]
    fn restart_returns_to_initial_value() {
        let mut r = Worker::new(Role::Readiness, sched(1, 3));
        assert_eq!(r.restart(), None, "readiness already at its initial Failure");
        assert_eq!(r.record(S), Published(S));
        assert_eq!(r.restart(), Some(F));
        assert_eq!(r.value(), F);

        let mut s = Worker::new(Role::Startup, sched(1, 3));
        assert_eq!(s.record(S), Published(S));
        assert!(s.on_hold());
        assert_eq!(s.restart(), Some(U));
        assert!(!s.on_hold());
        assert!(s.should_run(false));
        assert_eq!(s.value(), U);

        let mut l = Worker::new(Role::Liveness, sched(1, 1));
        assert_eq!(l.restart(), None);
        assert_eq!(l.record(F), Published(F));
        assert_eq!(l.restart(), Some(S));
        assert!(!l.on_hold());
        assert_eq!(l.value(), S);
    }

    // Deliberate difference from the kubelet, which keeps resultRun across container ids: the old
    // target's failures do not count towards the new target's threshold.
    #[test]
    fn restart_resets_counts() {
        let mut w = Worker::new(Role::Liveness, sched(1, 3));
        assert_eq!(feed(&mut w, &[F, F]), vec![(Unchanged, S), (Unchanged, S)]);
        assert_eq!(w.restart(), None);
        assert_eq!(w.result_run(), 0);
        assert_eq!(
            feed(&mut w, &[F, F, F]),
            vec![(Unchanged, S), (Unchanged, S), (Published(F), F)]
        );

        // Pending Unknown attempts are forgotten too: the new target gets three attempts.
        let mut r = Worker::new(Role::Readiness, sched(1, 1));
        assert_eq!(feed(&mut r, &[U, U]), vec![(RetryNow, F), (RetryNow, F)]);
        assert_eq!(r.restart(), None);
        assert_eq!(r.record(U), RetryNow);
    }

    #[test]
    fn accessors_return_construction_values() {
        let s = sched(2, 5);
        let w = Worker::new(Role::Readiness, s);
        assert_eq!(w.role(), Role::Readiness);
        assert_eq!(*w.schedule(), s);
    }

    #[test]
    fn period_follows_state() {
        let ms = Duration::from_millis;
        let s = Schedule {
            period: ms(1000),
            unhealthy_period: Some(ms(100)),
            transition_period: Some(ms(10)),
            ..sched(2, 3)
        };
        // Readiness starts published Failure: the unhealthy period.
        let mut w = Worker::new(Role::Readiness, s);
        assert_eq!(w.period(), ms(100));
        w.record(S);
        assert_eq!(w.period(), ms(10), "one success of two: in transition");
        w.record(S);
        assert_eq!((w.value(), w.period()), (S, ms(1000)));
        w.record(F);
        assert_eq!(w.period(), ms(10));
        w.record(S);
        assert_eq!(w.period(), ms(1000), "agrees with the published value again");
        feed(&mut w, &[F, F]);
        assert_eq!(w.period(), ms(10));
        w.record(F);
        assert_eq!((w.value(), w.period()), (F, ms(100)));
        // Unknown does not count: the period stays.
        w.record(U);
        assert_eq!(w.period(), ms(100));
        w.restart();
        assert_eq!(w.period(), ms(100));

        // Without the extensions the period is always the kubelet's.
        let mut k = Worker::new(Role::Readiness, sched(2, 3));
        for r in [S, F, S, S, F, F, F] {
            k.record(r);
            assert_eq!(k.period(), Duration::from_secs(10));
        }
        // Only a transition period: the normal period otherwise.
        let mut t = Worker::new(
            Role::Liveness,
            Schedule { transition_period: Some(ms(10)), ..sched(1, 2) },
        );
        assert_eq!(t.period(), Duration::from_secs(10));
        t.record(F);
        assert_eq!(t.period(), ms(10));
    }
}
