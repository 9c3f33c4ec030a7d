//! What the single send/expect exchange ([`Exchange`](crate::exchange::Exchange)) and the
//! multi-step one (`steps.rs`) both speak: where an exchange stands after a step
//! ([`ExchangeStep`]) and the bounds on the reply they keep and quote. It imports nothing of
//! either, so each can use it without the other.

use std::io;

use prober_core::DEFAULT_OUTPUT_LIMIT;

/// The most reply bytes kept (the kubelet's `maxReadLength`, as for HTTP bodies), and the most
/// a single exchange reads.
pub const MAX_REPLY: usize = DEFAULT_OUTPUT_LIMIT;
/// How much of the reply a failure message quotes (the whole reply is in the outcome's output).
pub(crate) const QUOTED: usize = 200;

/// Where an exchange stands after a step.
#[derive(Debug)]
pub enum ExchangeStep {
    /// Waiting for the socket (writable to send more, readable for the reply).
    Pending,
    /// The call spent its budget (steps only: 32 KiB read or 1024 lines scanned) with work
    /// perhaps left: call [`Exchange::step`](crate::exchange::Exchange::step) again after the poll loop's other work, without
    /// waiting for readiness (what is left may already be buffered, and readiness is
    /// edge-triggered). A probe returns [`prober_io::Step::Yield`] for it.
    Yield,
    /// Sent everything and the reply matched (or nothing was to be read).
    Matched,
    /// The peer closed, or [`MAX_REPLY`] bytes arrived (steps: [`MAX_TCP_STEPS_READ`] in
    /// all), without a match: the message says what arrived.
    ///
    /// [`MAX_TCP_STEPS_READ`]: prober_core::MAX_TCP_STEPS_READ
    NoMatch(String),
    /// The peer's data broke a bound of the steps (a line longer than
    /// [`MAX_TCP_STEP_LINE`](prober_core::MAX_TCP_STEP_LINE), or a send that would expand past
    /// [`MAX_SEND_LEN`](prober_core::MAX_SEND_LEN)): the message names the step.
    Protocol(String),
    /// A STARTTLS step has sent its data: shake hands on the connection, then call
    /// [`Exchange::resume_after_tls`](crate::exchange::Exchange::resume_after_tls) and go on stepping over TLS (steps only).
    StartTls,
    /// A socket error while writing (`"write"`) or reading (`"read"`).
    Failed(&'static str, io::Error),
}

/// Equal when of the same kind with the same message, or the same operation and error kind.
impl PartialEq for ExchangeStep {
    fn eq(&self, other: &ExchangeStep) -> bool {
        match (self, other) {
            (ExchangeStep::Pending, ExchangeStep::Pending) => true,
            (ExchangeStep::Yield, ExchangeStep::Yield) => true,
            (ExchangeStep::Matched, ExchangeStep::Matched) => true,
            (ExchangeStep::StartTls, ExchangeStep::StartTls) => true,
            (ExchangeStep::NoMatch(a), ExchangeStep::NoMatch(b)) => a == b,
            (ExchangeStep::Protocol(a), ExchangeStep::Protocol(b)) => a == b,
            (ExchangeStep::Failed(a, e), ExchangeStep::Failed(b, f)) => {
                a == b && e.kind() == f.kind()
            }
            _ => false,
        }
    }
}
