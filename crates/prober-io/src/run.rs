//! The simplest driver: one machine on a private `Poll`, run to its outcome.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use mio::{Events, Poll, Token};
use prober_core::{Outcome, Reason};

use crate::{Ctx, Machine, Ready, Resolver, Step};

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
    let resolver = Resolver::new(waker);
    let mut events = Events::with_capacity(8);
    let mut answers = Vec::new();

    let mut step = {
        let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &resolver, 0);
        machine.start(&mut cx)
    };
    loop {
        if let Step::Done(outcome) = step {
            return Ok(outcome);
        }
        let timeout = machine.wake_at().map(|t| t.saturating_duration_since(Instant::now()));
        if let Err(e) = poll.poll(&mut events, timeout) {
            if e.kind() != io::ErrorKind::Interrupted {
                let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &resolver, 0);
                machine.cancel(&mut cx);
                return Err(e);
            }
        }
        let mut cx = Ctx::new(poll.registry(), Instant::now(), BASE, &resolver, 0);
        step = Step::Pending;
        for ev in events.iter() {
            step = if ev.token() == WAKE {
                resolver.drain_into(&mut answers);
                let mut s = Step::Pending;
                for a in answers.drain(..) {
                    if matches!(s, Step::Pending) {
                        s = machine.resolved(&mut cx, a.addrs);
                    }
                }
                s
            } else {
                machine.ready(&mut cx, ev.token().0 - BASE, Ready::from_event(ev))
            };
            if matches!(step, Step::Done(_)) {
                break;
            }
        }
        if matches!(step, Step::Pending) && machine.wake_at().is_some_and(|t| t <= cx.now) {
            step = machine.timer(&mut cx);
        }
    }
}
