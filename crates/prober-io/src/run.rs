//! The simplest driver: one machine on a private `Poll`, run to its outcome.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};
use prober_core::{Outcome, Reason};

use crate::{Ctx, Machine, Mailbox, Ready, Step};

const BASE: usize = 0;
const WAKE: Token = Token(usize::MAX);

/// Drives `machine` to completion on a private `Poll` and returns its outcome. Blocks the
/// calling thread for at most the probe's own deadline (plus the time to reap a killed child).
pub fn run_to_completion(machine: &mut dyn Machine) -> Outcome {
    match drive(machine) {
        Ok(outcome) => outcome,
        Err(e) => Outcome::unknown(Reason::Io, format!("could not set up polling: {e}")),
    }
}

fn drive(machine: &mut dyn Machine) -> io::Result<Outcome> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE)?);
    let mailbox = Mailbox::new(waker);
    let mut events = Events::with_capacity(8);
    let mut answers = Vec::new();
    let mut jobs = Vec::new();

    let mut step = {
        let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &mailbox, 0);
        machine.start(&mut cx)
    };
    loop {
        let yielded = match step {
            Step::Done(outcome) => return Ok(outcome),
            Step::Yield => true,
            Step::Pending => false,
        };
        let timeout = if yielded {
            Some(Duration::ZERO) // poll I/O, then resume
        } else {
            machine.wake_at().map(|t| t.saturating_duration_since(Instant::now()))
        };
        if let Err(e) = poll.poll(&mut events, timeout) {
            if e.kind() != io::ErrorKind::Interrupted {
                let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &mailbox, 0);
                machine.cancel(&mut cx);
                return Err(e);
            }
        }
        let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &mailbox, 0);
        // Any call of this round may yield again; that yield waits for the next poll.
        let mut yields_again = false;
        let mut call = |s: Step| match s {
            Step::Yield => {
                yields_again = true;
                None
            }
            Step::Pending => None,
            Step::Done(o) => Some(o),
        };
        let mut done = None;
        for ev in events.iter() {
            if ev.token() == WAKE {
                mailbox.drain_into(&mut answers);
                for a in answers.drain(..) {
                    if done.is_none() {
                        done = call(machine.resolved(&mut cx, a.addrs));
                    }
                }
                mailbox.drain_jobs_into(&mut jobs);
                for j in jobs.drain(..) {
                    if done.is_none() {
                        done = call(machine.job_done(&mut cx, j.answer));
                    }
                }
            } else {
                done = call(machine.ready(&mut cx, ev.token().0 - BASE, Ready::from_event(ev)));
            }
            if done.is_some() {
                break;
            }
        }
        if done.is_none() && machine.wake_at().is_some_and(|t| t <= cx.now) {
            done = call(machine.timer(&mut cx));
        }
        if done.is_none() && yielded {
            done = call(machine.resume(&mut cx));
        }
        step = match done {
            Some(outcome) => Step::Done(outcome),
            None if yields_again => Step::Yield,
            None => Step::Pending,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields from start and from each resume until it has been resumed `left` times. It
    /// registers nothing and has no timer, so only resumes can finish it.
    struct Yielder {
        left: u32,
        resumes: u32,
    }

    impl Machine for Yielder {
        fn start(&mut self, _: &mut Ctx<'_>) -> Step {
            Step::Yield
        }
        fn ready(&mut self, _: &mut Ctx<'_>, _: usize, _: Ready) -> Step {
            Step::Pending
        }
        fn timer(&mut self, _: &mut Ctx<'_>) -> Step {
            Step::Pending
        }
        fn wake_at(&self) -> Option<Instant> {
            None
        }
        fn resume(&mut self, _: &mut Ctx<'_>) -> Step {
            self.resumes += 1;
            if self.resumes == self.left { Step::Done(Outcome::success()) } else { Step::Yield }
        }
        fn cancel(&mut self, _: &mut Ctx<'_>) {}
    }

    #[test]
    fn a_yielding_machine_is_resumed_after_each_poll() {
        let mut m = Yielder { left: 3, resumes: 0 };
        let o = run_to_completion(&mut m);
        assert_eq!(o.result, prober_core::ProbeResult::Success);
        assert_eq!(m.resumes, 3);
    }
}
