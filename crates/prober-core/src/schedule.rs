//! How a periodic probe worker runs: its role and its timing (the kubelet's probe fields).

use std::fmt;
use std::time::Duration;

use crate::SpecError;

/// The three kubelet probe roles. ABI: `prober_role` uses the same numbers.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Gates the other two until it has succeeded once (the kubelet's `startupProbe`); starts
    /// Unknown.
    Startup = 0,
    /// Whether the target should receive traffic (`readinessProbe`); starts as Failure.
    Readiness = 1,
    /// Whether the target should be restarted (`livenessProbe`); starts as Success.
    Liveness = 2,
}

impl Role {
    /// Every role, in the order of their numbers.
    pub const ALL: [Role; 3] = [Role::Startup, Role::Readiness, Role::Liveness];

    /// The lower-case name (`startup`, `readiness`, `liveness`), for output and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Startup => "startup",
            Role::Readiness => "readiness",
            Role::Liveness => "liveness",
        }
    }

    /// The role's number as an index (0, 1, 2): for per-role arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Timing and thresholds of a periodic probe, with the kubelet's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Time after the target (re)starts before the first probe (`initialDelaySeconds`).
    pub initial_delay: Duration,
    /// Time between the starts of two runs (`periodSeconds`); the period restarts from a
    /// manual trigger.
    pub period: Duration,
    /// Consecutive successes needed to publish Success (`successThreshold`; 1 for liveness and
    /// startup).
    pub success_threshold: u32,
    /// Consecutive failures needed to publish Failure (`failureThreshold`).
    pub failure_threshold: u32,
    /// Run the first probe at a random point in `[0, period)` after the initial delay, to
    /// spread many workers added at once.
    pub jitter: bool,
    /// The period while the published value is Failure (HAProxy's `downinter`, Envoy's
    /// `unhealthy_interval`); `period` when `None`.
    pub unhealthy_period: Option<Duration>,
    /// The period while the latest results disagree with the published value and count towards
    /// a threshold (HAProxy's `fastinter`); takes precedence over `unhealthy_period`; the
    /// state's period when `None`.
    pub transition_period: Option<Duration>,
    /// Each period is drawn from period ± this percentage (0 to [`MAX_JITTER_PERCENT`]), as
    /// Envoy's `interval_jitter_percent` and HAProxy's `spread-checks`; 0 keeps periods exact.
    pub jitter_percent: u32,
}

/// The largest `jitter_percent`: beyond it, "periodic" loses its meaning.
pub const MAX_JITTER_PERCENT: u32 = 50;

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            initial_delay: Duration::ZERO,
            period: Duration::from_secs(10),
            success_threshold: 1,
            failure_threshold: 3,
            jitter: false,
            unhealthy_period: None,
            transition_period: None,
            jitter_percent: 0,
        }
    }
}

/// The longest period or initial delay accepted (a week): longer values are unit mistakes.
const MAX_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

impl Schedule {
    /// Checks the schedule for a probe of `role`.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidSchedule`] naming the first field out of range: a period outside
    /// 1 ms to 7 days, an initial delay over 7 days, a jitter percentage above
    /// [`MAX_JITTER_PERCENT`], a threshold of 0, a success threshold other than 1 for liveness
    /// or startup.
    pub fn validate(&self, role: Role) -> Result<(), SpecError> {
        let bad = |m: String| Err(SpecError::InvalidSchedule(m));
        if self.period < Duration::from_millis(1) || self.period > MAX_INTERVAL {
            return bad(format!("invalid period {:?} (expected 1 ms to 7 days)", self.period));
        }
        for (name, p) in [
            ("unhealthy period", self.unhealthy_period),
            ("transition period", self.transition_period),
        ] {
            if let Some(p) = p {
                if p < Duration::from_millis(1) || p > MAX_INTERVAL {
                    return bad(format!("invalid {name} {p:?} (expected 1 ms to 7 days)"));
                }
            }
        }
        if self.jitter_percent > MAX_JITTER_PERCENT {
            return bad(format!(
                "invalid jitter {}% (expected 0 to {MAX_JITTER_PERCENT})",
                self.jitter_percent
            ));
        }
        if self.initial_delay > MAX_INTERVAL {
            return bad(format!(
                "invalid initial delay {:?} (expected at most 7 days)",
                self.initial_delay
            ));
        }
        if self.success_threshold == 0 {
            return bad("success threshold must be at least 1".into());
        }
        if self.failure_threshold == 0 {
            return bad("failure threshold must be at least 1".into());
        }
        if role != Role::Readiness && self.success_threshold != 1 {
            return bad(format!(
                "success threshold must be 1 for {role} probes (got {})",
                self.success_threshold
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_kubelets() {
        let s = Schedule::default();
        assert_eq!(s.period, Duration::from_secs(10));
        assert_eq!((s.success_threshold, s.failure_threshold), (1, 3));
        for r in Role::ALL {
            assert!(s.validate(r).is_ok());
        }
    }

    #[test]
    fn refuses_bad_schedules() {
        let s = Schedule { success_threshold: 2, ..Schedule::default() };
        assert!(s.validate(Role::Readiness).is_ok());
        let e = s.validate(Role::Liveness).unwrap_err().to_string();
        assert_eq!(e, "success threshold must be 1 for liveness probes (got 2)");
        assert!(s.validate(Role::Startup).is_err());
        let z = Schedule { period: Duration::ZERO, ..Schedule::default() };
        assert!(z.validate(Role::Readiness).unwrap_err().to_string().contains("period"));
        let f = Schedule { failure_threshold: 0, ..Schedule::default() };
        assert!(f.validate(Role::Readiness).is_err());
        let s0 = Schedule { success_threshold: 0, ..Schedule::default() };
        assert!(s0.validate(Role::Readiness).is_err());
        let u = Schedule { unhealthy_period: Some(Duration::ZERO), ..Schedule::default() };
        assert_eq!(
            u.validate(Role::Readiness).unwrap_err().to_string(),
            "invalid unhealthy period 0ns (expected 1 ms to 7 days)"
        );
        let t =
            Schedule { transition_period: Some(Duration::from_micros(10)), ..Schedule::default() };
        assert!(t.validate(Role::Liveness).unwrap_err().to_string().contains("transition period"));
        let j = Schedule { jitter_percent: 51, ..Schedule::default() };
        assert_eq!(
            j.validate(Role::Liveness).unwrap_err().to_string(),
            "invalid jitter 51% (expected 0 to 50)"
        );
        let ok = Schedule {
            unhealthy_period: Some(Duration::from_millis(1)),
            transition_period: Some(Duration::from_secs(1)),
            jitter_percent: 50,
            ..Schedule::default()
        };
        assert!(ok.validate(Role::Readiness).is_ok());
    }
}
