//! Waking the engine's poll at its next timer to the nanosecond: a timerfd in the poll.
//!
//! `mio::Poll::poll` hands `epoll_wait` a timeout in whole milliseconds, rounded up, so a timer
//! due in 300 µs fired up to a millisecond late: `sched_10k`'s runs started 0.55 ms after their
//! instant at the median (docs/benchmarks.md). `epoll_pwait2` takes nanoseconds but would mean
//! calling epoll beside mio (mio's `Events` cannot be filled from outside); a timerfd is an
//! ordinary source of the same poll. The engine arms it at its next timer after every turn,
//! with the remaining time (relative to `Instant::now()`: `Instant` is `CLOCK_MONOTONIC`, the
//! timer's clock, so it never fires before the instant), and re-arms only when that instant
//! changes. The poll then returns when the timer is due; the millisecond timeout stays as the
//! fallback. No signal is involved (a timerfd is read through the poll, and nothing is read
//! from it: the poll is edge-triggered and each expiry is a new edge), which keeps the library
//! safe in a Go process.
//!
//! A side effect hosts can use: [`Engine::fd`](crate::Engine::fd) becomes readable by itself
//! when a timer is due, so a host that polls it with its own millisecond timeout is woken on
//! time too. Elsewhere than Linux there is no timerfd, and the millisecond rounding remains.

use std::io;
use std::time::{Duration, Instant};

use mio::{Registry, Token};

/// The timerfd's poll token: a slot index no run has (as the shared sockets' tokens) with a
/// sub-token no shared socket has, so neither a run nor [`crate::token::WAKE`] can be mistaken
/// for it.
pub(crate) const TIMER: Token = Token(usize::MAX - 1);

/// The engine's timerfd and the instant it is armed at.
#[derive(Debug)]
pub(crate) struct WakeTimer {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fd: std::os::fd::OwnedFd,
    /// The instant the timer is armed at; `None` when disarmed. Once past, the kernel has
    /// disarmed it (one-shot), which [`WakeTimer::arm`] accounts for.
    armed: Option<Instant>,
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
        Ok(WakeTimer { fd, armed: None })
    }

    /// Arms the timer at `at` (`None`: disarms it), unless it is armed there already. An
    /// instant already past arms it to expire at once.
    pub(crate) fn arm(&mut self, at: Option<Instant>, now: Instant) -> io::Result<()> {
        use std::os::fd::AsRawFd;
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
        Ok(WakeTimer { armed: None })
    }

    /// Nothing to arm.
    pub(crate) fn arm(&mut self, _at: Option<Instant>, _now: Instant) -> io::Result<()> {
        Ok(())
    }
}

impl WakeTimer {
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
