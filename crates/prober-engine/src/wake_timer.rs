//! Waking the engine's poll at its next timer to the nanosecond, at most once per
//! [`MIN_GAP`] after a poll: a timerfd in the poll.
//!
//! `mio::Poll::poll` hands `epoll_wait` a timeout in whole milliseconds, rounded up, so a timer
//! due in 300 µs fired up to a millisecond late: `sched_10k`'s runs started 0.55 ms after their
//! instant at the median (docs/benchmarks.md). `epoll_pwait2` takes nanoseconds but would mean
//! calling epoll beside mio (mio's `Events` cannot be filled from outside); a timerfd is an
//! ordinary source of the same poll. The engine arms it at its next timer after every turn,
//! with the remaining time (relative to `Instant::now()`: `Instant` is `CLOCK_MONOTONIC`, the
//! timer's clock, so it never fires before the instant), and re-arms only when that instant
//! changes, and no sooner than [`MIN_GAP`] after the last poll: a busy engine then starts the
//! runs of a millisecond in one turn (the CPU figures are at [`MIN_GAP`]). The poll returns
//! when the timer is due; the millisecond timeout stays as the fallback. No signal is involved (a timerfd is read through the poll, and nothing is read
//! from it: the poll is edge-triggered and each expiry is a new edge), which keeps the library
//! safe in a Go process.
//!
//! A side effect hosts can use: [`Engine::fd`](crate::Engine::fd) becomes readable by itself
//! when a timer is due (within the gap), so a host that polls it with its own millisecond timeout is woken on
//! time too. Elsewhere than Linux there is no timerfd, and the millisecond rounding remains.

use std::io;
use std::time::{Duration, Instant};

use mio::{Registry, Token};

/// The timerfd's poll token: a slot index no run has (as the shared sockets' tokens) with a
/// sub-token no shared socket has, so neither a run nor [`crate::token::WAKE`] can be mistaken
/// for it.
pub(crate) const TIMER: Token = Token(usize::MAX - 1);

/// The shortest time between the end of a poll and the timer's next wake-up. A busy engine
/// woken for every run alone (10,000 runs a second, each due at its own instant) spends more
/// than twice the CPU per run of one whose runs due within a short window start in one turn.
/// `prober-bench sched_10k` (10,000 TCP targets, 1 s period) on an idle 2-core machine: 52 µs
/// per run woken to the nanosecond (lateness p50 0.03 ms), 23 µs with the poll's millisecond
/// timeout alone (p50 0.52 ms), 31 µs with a 500 µs gap (p50 0.23 ms) and 26.6 µs with this
/// 1 ms gap (p50 0.46 ms, p99 1.03 ms). With the gap an engine whose runs are sparse is still
/// woken at each run's own instant (200 targets: p50 0.07 ms), and a busy one at most once per
/// gap, its runs then at most this late (the turns its I/O brings fire the timers due too).
pub(crate) const MIN_GAP: Duration = Duration::from_micros(GAP_US);
const GAP_US: u64 = 1000;

/// The engine's timerfd and the instant it is armed at.
#[derive(Debug)]
pub(crate) struct WakeTimer {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fd: std::os::fd::OwnedFd,
    /// The instant the timer is armed at; `None` when disarmed. Once past, the kernel has
    /// disarmed it (one-shot), which [`WakeTimer::arm`] accounts for.
    armed: Option<Instant>,
    /// When the engine's last poll returned: the timer is armed no sooner than [`MIN_GAP`]
    /// after it.
    polled: Option<Instant>,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl WakeTimer {
    /// A disarmed timerfd (non-blocking, close-on-exec) registered with `registry`.
    pub(crate) fn new(registry: &Registry) -> io::Result<WakeTimer> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let flags = libc::TFD_NONBLOCK | libc::TFD_CLOEXEC;
        // SAFETY: timerfd_create takes no pointers; a non-negative return is a new descriptor
        // that nothing else owns.
        let raw =
            prober_io::os_result(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) })?;
        // SAFETY: `raw` was just returned by timerfd_create and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(
            &mut mio::unix::SourceFd(&fd.as_raw_fd()),
            TIMER,
            mio::Interest::READABLE,
        )?;
        Ok(WakeTimer { fd, armed: None, polled: None })
    }

    /// Arms the timer at `at` (`None`: disarms it), unless it is armed there already. An
    /// instant already past arms it to expire at once.
    pub(crate) fn arm(&mut self, at: Option<Instant>, now: Instant) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let at = at.map(|at| self.polled.map_or(at, |p| at.max(p + MIN_GAP)));
        // A past instant has fired: the kernel disarmed the timer then.
        let armed = self.armed.filter(|a| *a > now);
        if at == armed || (at.is_none() && armed.is_none()) {
            self.armed = armed;
            return Ok(());
        }
        let value = match at {
            // A zero it_value disarms: an instant due now gets the smallest delay instead.
            Some(at) => {
                let d = at.saturating_duration_since(Instant::now()).max(Duration::from_nanos(1));
                libc::timespec {
                    tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
                    tv_nsec: d.subsec_nanos() as libc::c_long,
                }
            }
            None => libc::timespec { tv_sec: 0, tv_nsec: 0 },
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: value,
        };
        // SAFETY: `fd` is this timer's open timerfd; `spec` is a valid itimerspec read by the
        // call, and the old value is not asked for (null).
        let r =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        prober_io::os_result(r)?;
        self.armed = at;
        Ok(())
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl WakeTimer {
    /// No timerfd here: the poll's millisecond timeout alone wakes the engine.
    pub(crate) fn new(_registry: &Registry) -> io::Result<WakeTimer> {
        Ok(WakeTimer { armed: None, polled: None })
    }

    /// Nothing to arm.
    pub(crate) fn arm(&mut self, _at: Option<Instant>, _now: Instant) -> io::Result<()> {
        Ok(())
    }
}

impl WakeTimer {
    /// The engine's poll returned at `now`.
    pub(crate) fn polled(&mut self, now: Instant) {
        self.polled = Some(now);
    }

    /// The instant the timer is armed at, if any (tests: it is the timer's own, not rounded).
    #[cfg(all(test, any(target_os = "linux", target_os = "android")))]
    pub(crate) fn armed(&self) -> Option<Instant> {
        self.armed
    }

    /// The timerfd itself (tests: what the kernel holds).
    #[cfg(all(test, any(target_os = "linux", target_os = "android")))]
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.fd)
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use std::time::{Duration, Instant};

    use super::{MIN_GAP, WakeTimer};

    /// Right after a poll, a timer due sooner than the gap is armed at the gap's end (a busy
    /// engine's runs of one gap start in one turn); a timer due later is armed at its own
    /// instant; before any poll, every timer is armed at its own instant.
    #[test]
    fn a_wake_up_comes_no_sooner_than_the_gap_after_a_poll() {
        let poll = mio::Poll::new().unwrap();
        let mut timer = WakeTimer::new(poll.registry()).unwrap();
        let now = Instant::now();
        let soon = now + Duration::from_micros(100);
        timer.arm(Some(soon), now).unwrap();
        assert_eq!(timer.armed(), Some(soon), "no poll yet: the timer's own instant");
        timer.polled(now);
        timer.arm(Some(soon), now).unwrap();
        assert_eq!(timer.armed(), Some(now + MIN_GAP), "within the gap: the gap's end");
        let later = now + MIN_GAP * 5;
        timer.arm(Some(later), now).unwrap();
        assert_eq!(timer.armed(), Some(later), "past the gap: the timer's own instant");
    }
}
