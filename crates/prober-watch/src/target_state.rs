//! What `prober watch` knows of each target: its published values (for the started, ready
//! and live flags) and what its runs said (for the explanations).

use prober::{Outcome, ProbeResult, Reason, Role};

/// A target's published values, for the started / ready / live summary, and what its runs
/// said, for the explanations.
#[derive(Debug)]
pub struct TargetState {
    /// The target's name, as the watch file or manifest gives it.
    pub name: String,
    /// Which roles it has a probe for, by [`Role::index`].
    pub has: [bool; 3],
    /// Each role's published value (the kubelet's initial values before any change).
    pub value: [ProbeResult; 3],
    /// The reason of the change that published each value (`initial` before any).
    pub value_reason: [&'static str; 3],
    /// Each role's last run result (`None` before its first run).
    pub last_run: [Option<ProbeResult>; 3],
    /// Each role's last run that did not succeed: what the summary explains.
    pub last_bad: [Option<Box<Outcome>>; 3],
    /// Whether the target has had its first verdict (see [`TargetState::has_verdict`]).
    pub verdict: bool,
}

/// Why a target is not ready or not live: a role's published value and a reason, shown as
/// `readiness failure (refused)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Why {
    /// The role whose value keeps the target from being ready or live.
    pub role: Role,
    /// That role's published value.
    pub value: ProbeResult,
    /// Why (a [`Reason::as_str`], or `initial`).
    pub reason: &'static str,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.role, self.value, self.reason)
    }
}

/// A run that did not succeed: `Failure`, or `Unknown` (the probe could not run).
pub fn failing(r: ProbeResult) -> bool {
    matches!(r, ProbeResult::Failure | ProbeResult::Unknown)
}

impl TargetState {
    /// A target named `name` with probes for the roles `has` says, before anything ran.
    pub fn new(name: String, has: [bool; 3]) -> TargetState {
        TargetState {
            name,
            has,
            value: [ProbeResult::Unknown, ProbeResult::Failure, ProbeResult::Success],
            value_reason: ["initial"; 3],
            last_run: [None; 3],
            last_bad: [None, None, None],
            // No probe: nothing to wait for.
            verdict: !has.contains(&true),
        }
    }

    /// Whether the target has had its first verdict: every probe it runs has run once, or
    /// its startup probe ran and it has not started (its other probes wait for that). Once
    /// true it stays so (readiness and liveness starting after the startup probe do not take
    /// it back).
    pub fn has_verdict(&self) -> bool {
        self.verdict
    }

    fn first_verdict_now(&self) -> bool {
        let ran = |r: Role| !self.has[r.index()] || self.last_run[r.index()].is_some();
        if self.started() { Role::ALL.into_iter().all(ran) } else { ran(Role::Startup) }
    }

    /// A published value of `role`, with the reason of the change (`None`: an initial value).
    pub fn publish(&mut self, role: Role, value: ProbeResult, reason: Option<Reason>) {
        self.value[role.index()] = value;
        self.value_reason[role.index()] = reason.map_or("initial", Reason::as_str);
    }

    /// The published value of `role` and why: the reason of the last run when it failed (a
    /// readiness probe that never passed has published nothing but its initial value), else
    /// that of the change that published the value.
    fn why(&self, role: Role) -> Why {
        let i = role.index();
        let reason = match (&self.last_run[i], &self.last_bad[i]) {
            (Some(r), Some(bad)) if failing(*r) => bad.reason.as_str(),
            _ => self.value_reason[i],
        };
        Why { role, value: self.value[i], reason }
    }

    /// Why the target is not ready (its startup or readiness probe); `None` when it is.
    pub fn why_not_ready(&self) -> Option<Why> {
        if !self.started() {
            Some(self.why(Role::Startup))
        } else if !self.ready() {
            Some(self.why(Role::Readiness))
        } else {
            None
        }
    }

    /// Why the target is not live; `None` when it is.
    pub fn why_not_live(&self) -> Option<Why> {
        (!self.live()).then(|| self.why(Role::Liveness))
    }

    /// Whether it has started: no startup probe, or its value is a success.
    pub fn started(&self) -> bool {
        !self.has[Role::Startup.index()]
            || self.value[Role::Startup.index()] == ProbeResult::Success
    }

    /// Whether it is ready: started, and no readiness probe or its value is a success.
    pub fn ready(&self) -> bool {
        let r = Role::Readiness.index();
        self.started() && (!self.has[r] || self.value[r] == ProbeResult::Success)
    }

    /// Whether it is live: no liveness probe, or its value is a success.
    pub fn live(&self) -> bool {
        let l = Role::Liveness.index();
        !self.has[l] || self.value[l] == ProbeResult::Success
    }

    /// `started=yes ready=no live=yes`.
    pub fn flags(&self) -> String {
        let yn = |b: bool| if b { "yes" } else { "no" };
        format!(
            "started={} ready={} live={}",
            yn(self.started()),
            yn(self.ready()),
            yn(self.live())
        )
    }

    /// The roles the summary explains: those whose published value or last run is not a
    /// success.
    pub fn not_success(&self) -> impl Iterator<Item = Role> + '_ {
        Role::ALL.into_iter().filter(|r| {
            let i = r.index();
            self.has[i]
                && (self.value[i] != ProbeResult::Success || self.last_run[i].is_some_and(failing))
        })
    }

    /// Whether `outcome`, the next run of `role`, is the first failing run of a streak (the
    /// first run, or the first after a success).
    pub fn starts_streak(&self, role: Role, outcome: &Outcome) -> bool {
        failing(outcome.result) && !self.last_run[role.index()].is_some_and(failing)
    }

    /// Records a run (a failing one is kept for the summary); true when it gave the target
    /// its first verdict.
    pub fn record_run(&mut self, role: Role, outcome: Box<Outcome>) -> bool {
        let i = role.index();
        self.last_run[i] = Some(outcome.result);
        if failing(outcome.result) {
            self.last_bad[i] = Some(outcome);
        }
        let first = !self.verdict && self.first_verdict_now();
        self.verdict |= first;
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(has: [bool; 3], value: [ProbeResult; 3]) -> TargetState {
        TargetState { value, ..TargetState::new("t".into(), has) }
    }

    #[test]
    fn readiness_rules() {
        use ProbeResult::{Failure as F, Success as S, Unknown as U};
        // No probes: started, ready, live.
        assert_eq!(state([false; 3], [U, F, S]).flags(), "started=yes ready=yes live=yes");
        // Startup pending: not started, so not ready even without a readiness probe.
        assert_eq!(state([true, false, false], [U, F, S]).flags(), "started=no ready=no live=yes");
        assert_eq!(
            state([true, false, false], [S, F, S]).flags(),
            "started=yes ready=yes live=yes"
        );
        assert_eq!(state([false, true, true], [U, F, F]).flags(), "started=yes ready=no live=no");
        assert_eq!(
            state([false, true, false], [U, S, S]).flags(),
            "started=yes ready=yes live=yes"
        );
    }
}
