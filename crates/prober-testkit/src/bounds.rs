//! Time bounds for tests, derived from the timeout under test: no fixed slack.
//!
//! A test of a probe's deadline asserts what happened (the result, the reason, the message)
//! and that the run did not outlive its deadline by more than a multiple of it, so that the
//! same test holds for a 300 ms and a 10 s timeout, on an idle machine and on a loaded one.
//! The multiple is large because a loaded machine delays threads by whole scheduler slices,
//! and small against what a run that ignores its deadline does (it runs until its peer gives
//! up, tens of seconds, or for ever).
//!
//! - [`ends_by`]: the latest a run with deadline `timeout` may end and still count as having
//!   honoured it.
//! - [`gives_up_after`]: how long a test waits for an event (a watchdog, a loop waiting for an
//!   outcome) before failing with a message; later than [`ends_by`], so that a late run fails
//!   the assertion that says so rather than the watchdog.

use std::time::Duration;

/// The latest a run whose deadline is `timeout` after its start may end: four times the
/// timeout plus half of it again.
#[must_use]
pub fn ends_by(timeout: Duration) -> Duration {
    timeout.saturating_mul(4).saturating_add(timeout / 2)
}

/// How long a test waits for something bound by `timeout` before giving up: four times
/// [`ends_by`].
#[must_use]
pub fn gives_up_after(timeout: Duration) -> Duration {
    ends_by(timeout).saturating_mul(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_scale_with_the_timeout() {
        let ms = Duration::from_millis;
        assert_eq!(ends_by(ms(300)), ms(1350));
        assert_eq!(ends_by(ms(10_000)), ms(45_000));
        assert_eq!(gives_up_after(ms(1000)), ms(18_000));
        assert_eq!(ends_by(Duration::MAX), Duration::MAX);
    }
}
