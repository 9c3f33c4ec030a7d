//! One turn of the engine: poll, take commands and answers, fire timers, drive what is ready.

use std::io;
use std::time::{Duration, Instant};

use prober_core::Role;

use crate::arena::Key;
use crate::engine::{Command, Engine};
use crate::slots::Owner;
use crate::timers::TimerKey;
use crate::token::{GEN_MASK, WAKE, kept_fd, shared_index, split_token};
use crate::wake_timer::TIMER;
use prober_io::{Machine, Ready};

impl Engine {
    pub(crate) fn turn(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        self.queue.start_turn();
        // Runs that yielded before this turn go on after its poll: their own readiness and
        // everyone else's I/O and timers come first.
        std::mem::swap(&mut self.resuming, &mut self.yielded);
        let owed = std::mem::take(&mut self.icmp_owed);
        let timeout = if self.resuming.is_empty() && owed.is_empty() {
            timeout
        } else {
            Some(Duration::ZERO)
        };
        if timeout != Some(Duration::ZERO) {
            // Work added since the last turn (a probe set, a check submitted) may have brought
            // the next timer closer than the one armed.
            self.arm_wake_timer();
        }
        // A wake-up that arrived since the last turn makes the waker's fd readable, so the poll
        // below returns at once: no wake-up is lost between turns.
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                // The runs to resume wait for the next turn, which must not sleep first.
                self.icmp_owed.extend(owed);
                std::mem::swap(&mut self.resuming, &mut self.yielded);
                self.yielded.append(&mut self.resuming);
                return Err(e);
            }
        }
        let mut done = 0;
        let now = Instant::now();
        self.wake_timer.polled(now);
        // Collect first: handling an event needs `&mut self`.
        let mut ready = std::mem::take(&mut self.ready);
        ready.extend(self.events.iter().map(|e| (e.token(), Ready::from_event(e))));
        for &(token, r) in &ready {
            done += 1;
            if token == WAKE {
                self.apply_commands();
                self.deliver_answers();
            } else if token == TIMER {
                // The next timer is due: the timers fired below are all there is to do.
            } else if let Some(index) = shared_index(token) {
                self.read_shared(index);
            } else {
                // A kept connection's readiness goes to the run that holds it, as readiness of
                // its token 0 (the connection's token while it dials).
                let token = match kept_fd(token) {
                    Some(fd) => match self.kept.route(fd, r) {
                        Some(run) => run,
                        None => continue, // idle, or a closed connection's last event
                    },
                    None => token,
                };
                let (index, low_generation, sub) = split_token(token);
                match self.slots.key_at(index) {
                    Some(slot) if slot.generation as usize & GEN_MASK == low_generation => {
                        self.drive(slot, |p, cx| p.ready(cx, sub, r));
                    }
                    _ => {} // about a run that has ended
                }
            }
        }
        ready.clear();
        self.ready = ready;
        for index in owed {
            done += 1;
            self.read_shared(index);
        }
        done += self.fire_timers(now);
        let mut resuming = std::mem::take(&mut self.resuming);
        for &slot in &resuming {
            done += 1;
            if let Some(s) = self.slots.get_mut(slot) {
                s.resume_queued = false;
            }
            self.drive(slot, |p, cx| p.resume(cx)); // a run that ended is skipped
        }
        resuming.clear();
        self.resuming = resuming;
        if !self.kept.is_empty() {
            self.kept.expire(now);
        }
        // Runs that ended this turn may have dropped the last spec naming a namespace (a
        // one-shot check's), and a namespace may have been idle past its bound.
        let netns = self.pool.netns();
        netns.release_unnamed();
        netns.expire(now);
        if self.timers.len() > 4 * (self.slots.len() + 3 * self.targets.len()) + 1024 {
            self.compact_timers();
        }
        self.queue.end_turn();
        self.arm_wake_timer();
        Ok(done)
    }

    /// Arms the timerfd at the next timer (a system call only when that instant changed). A
    /// failure to arm leaves the poll's millisecond timeout to wake the engine, as before.
    pub(crate) fn arm_wake_timer(&mut self) {
        let next = self.next_timer();
        let _ = self.wake_timer.arm(next, Instant::now());
    }

    /// Reads shared ICMP socket `index` (up to a budget: a flood of ICMP cannot hold the
    /// thread; the rest is read next turn) and hands each run it woke its messages.
    fn read_shared(&mut self, index: usize) {
        /// Datagrams one read of a shared socket takes, for all its runs together.
        const SHARED_READ_BUDGET: usize = 1024;
        let mut wake = std::mem::take(&mut self.icmp_wake);
        if self.icmp.read(index, SHARED_READ_BUDGET, &mut wake) && !self.icmp_owed.contains(&index)
        {
            self.icmp_owed.push(index);
        }
        let ready = Ready { readable: true, ..Ready::default() };
        for &ticket in &wake {
            self.drive(Key::from_u64(ticket), |p, cx| {
                p.ready(cx, prober_icmp::SHARED_READY, ready)
            });
        }
        wake.clear();
        self.icmp_wake = wake;
    }

    pub(crate) fn apply_commands(&mut self) {
        let commands = std::mem::take(&mut self.shared.commands.lock().queue);
        for c in commands {
            match c {
                // Validated by the handle, on the caller's thread.
                Command::Submit(spec, tag) => {
                    let probe = self.plans.probe_validated(*spec);
                    self.start_probe(probe, Owner::Check { tag })
                }
                Command::SubmitWith(spec, tag, done) => {
                    let probe = self.plans.probe_validated(*spec);
                    self.start_check(probe, tag, done)
                }
                Command::Trigger(t, r) => {
                    let _ = self.trigger(t, r);
                }
                Command::Call(f) => f(self),
            }
        }
    }

    pub(crate) fn deliver_answers(&mut self) {
        self.mailbox.drain_into(&mut self.answers);
        let answers = std::mem::take(&mut self.answers);
        for a in answers {
            self.drive(Key::from_u64(a.ticket), |p, cx| p.resolved(cx, a.addrs));
        }
        // Blocking jobs (TLS material) answer through the same waker; a job of an ended run is
        // skipped by `drive` like a stale lookup.
        let mut jobs = Vec::new();
        self.mailbox.drain_jobs_into(&mut jobs);
        for j in jobs {
            self.drive(Key::from_u64(j.ticket), |p, cx| p.job_done(cx, j.answer));
        }
    }

    pub(crate) fn fire_timers(&mut self, now: Instant) -> usize {
        let mut n = 0;
        // Take everything due first: a timer that a machine re-arms for "now" while these run
        // fires next turn, after I/O has been polled again.
        let mut due = std::mem::take(&mut self.due);
        self.timers.drain_due(now, &mut due);
        for (at, key) in due.drain(..) {
            match key {
                TimerKey::Probe { slot } => {
                    if let Some(s) = self.slots.get_mut(slot).filter(|s| s.timer == Some(at)) {
                        n += 1;
                        s.timer = None;
                        self.drive(slot, |p, cx| p.timer(cx));
                    }
                }
                TimerKey::Worker { target, role } => {
                    let role = Role::ALL[role as usize];
                    let id = target.to_u64();
                    let due_now = match self.target_mut(id) {
                        Ok(t) => t.workers[role.index()]
                            .as_mut()
                            .filter(|w| w.next_run == Some(at))
                            .map(|w| w.next_run = None)
                            .is_some(),
                        Err(_) => false,
                    };
                    if due_now {
                        n += 1;
                        self.worker_tick(id, role, at, now);
                    }
                }
            }
        }
        self.due = due;
        n
    }

    pub(crate) fn compact_timers(&mut self) {
        let slots = &self.slots;
        let targets = &self.targets;
        self.timers.compact(|at, key| match *key {
            TimerKey::Probe { slot } => slots.get(slot).is_some_and(|s| s.timer == Some(*at)),
            TimerKey::Worker { target, role } => targets.get(target).is_some_and(|t| {
                t.workers[role as usize].as_ref().is_some_and(|w| w.next_run == Some(*at))
            }),
        });
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod wake_timer_tests {
    use std::time::Duration;

    use prober_core::{ProbeSpec, Role, Schedule};

    use crate::Engine;
    use crate::arena::Key;

    #[test]
    fn the_timer_is_armed_at_the_next_timers_own_instant() {
        // A run due 300 µs after the target was added: the timerfd gets that very instant,
        // where the poll's timeout alone would have been a whole millisecond.
        let mut e = Engine::new().unwrap();
        let t = e.add_target();
        let schedule = Schedule {
            initial_delay: Duration::from_micros(300),
            period: Duration::from_secs(3600),
            ..Schedule::default()
        };
        e.set_probe(t, Role::Liveness, ProbeSpec::tcp("127.0.0.1", 9).unwrap(), schedule).unwrap();
        e.arm_wake_timer();
        let target = e.targets.get(Key::from_u64(t)).unwrap();
        let at = target.workers[Role::Liveness.index()].as_ref().unwrap().next_run;
        // The engine's own next timer, to the nanosecond: the run's instant, or, where adding
        // the target took milliseconds (under emulation), the start of the timing wheel's
        // slot that holds it, which is earlier.
        assert_eq!(e.wake_timer.armed(), e.next_timer());
        assert!(e.next_timer().is_some_and(|next| Some(next) <= at), "{:?}", e.next_timer());
        // What the kernel holds: the time left until that instant, at most 300 µs (0 once
        // expired), never the millisecond the poll would have rounded it up to.
        let mut current = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        };
        // SAFETY: the engine's open timerfd and a valid itimerspec to write into.
        let r = unsafe { libc::timerfd_gettime(e.wake_timer.raw_fd(), &mut current) };
        assert_eq!(r, 0);
        let left = Duration::new(current.it_value.tv_sec as u64, current.it_value.tv_nsec as u32);
        assert!(left <= Duration::from_micros(300), "{left:?} left");
    }
}
