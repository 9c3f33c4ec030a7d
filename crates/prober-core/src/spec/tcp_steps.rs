//! Multi-step TCP exchanges (blackbox_exporter's `query_response`, HAProxy's chain of
//! `tcp-check expect`/`send`): an ordered list of steps, each one optionally awaiting a line of
//! the reply, then optionally sending, then optionally upgrading the connection to TLS.

use super::error::SpecError;
use crate::expect::{MAX_SEND_LEN, Pattern};

/// The most steps a TCP probe has (an SMTP STARTTLS check needs nine).
pub const MAX_TCP_STEPS: usize = 64;

/// The longest line a step reads, with its line end: a peer that sends more without a `\n`
/// fails the step (Go's `bufio.MaxScanTokenSize`, blackbox_exporter's limit too).
pub const MAX_TCP_STEP_LINE: usize = 64 * 1024;

/// The most bytes the steps of a run read in all (1 MiB): generous for an IRC MOTD or a long
/// capability list, yet a peer cannot keep a probe reading for its whole timeout.
pub const MAX_TCP_STEPS_READ: usize = 1 << 20;

/// What the message of a step whose [`TcpStep::expect_bytes`] read other bytes says, after its
/// `step N of M: ` (and before the bytes read): a host that reports that case apart (as
/// blackbox_exporter's `probe_failed_due_to_bytes`) finds it there.
pub const TCP_BYTES_DIFFER: &str = "the bytes read differ from those expected";

/// One step of a multi-step TCP exchange ([`ProbeSpec::add_tcp_step`](crate::ProbeSpec::add_tcp_step)). In order: with
/// `expect`, lines of the reply are read until one matches (a line ends at `\n`; the `\n` and
/// a `\r` before it are not part of it; an unterminated last line before the peer closes
/// counts); then `send` is written; then, with `starttls`, TLS shakes hands on the connection
/// and the following steps go through it.
///
/// Lines left over after a matching line are where the next `expect` starts reading, as
/// blackbox_exporter's one scanner over the connection; lines already read are not kept for
/// matching, so a chatty peer (an IRC MOTD, a long `EHLO` answer) is read line after line.
/// An `expect` fails the probe when the peer closes first, when a line is longer than
/// [`MAX_TCP_STEP_LINE`], when the steps have read [`MAX_TCP_STEPS_READ`] bytes in all, or
/// when the timeout (the whole exchange's) passes first.
///
/// The outcome's output is the first [`MAX_REPLY`](crate::DEFAULT_OUTPUT_LIMIT) (10240) bytes
/// the steps read, whatever the spec's output limit; its `output_total` counts every byte read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStep {
    /// The expression a line must match before this step sends (`None`: nothing is read).
    pub expect: Option<Pattern>,
    /// Bytes, not a line: the next `expect_bytes.len()` bytes of the reply must be exactly
    /// these before this step sends (blackbox_exporter's `expect_bytes`, for a binary
    /// greeting). Empty: none. Not with `expect`; at most [`MAX_TCP_STEP_LINE`] bytes. The
    /// bytes read are compared as they come, whatever lines they hold (a line left over by
    /// the step before counts); the peer closing before all of them arrived fails the step
    /// (reason body), and so do bytes that differ (the message says
    /// [`TCP_BYTES_DIFFER`]).
    pub expect_bytes: Vec<u8>,
    /// The bytes written, as they are (no line end is added unless `line`); empty: nothing is
    /// written.
    pub send: Vec<u8>,
    /// `send` is a template: `$1`, `${1}`, `${name}` are replaced with the groups of the line
    /// `expect` matched and `$$` with one `$` (Go's `Regexp.Expand`, as blackbox_exporter's
    /// `send`). Off by default, so that data holding a `$` is sent as written: a library user
    /// who sends `PRICE $5` is not surprised by an empty group. Needs `expect`. An expansion
    /// longer than [`MAX_SEND_LEN`] fails the step (reason protocol).
    pub expand: bool,
    /// `send` is a line: a `\n` is written after it, and only when it is not empty once
    /// expanded (blackbox_exporter's `send`: a template whose groups are all empty writes
    /// nothing at all).
    pub line: bool,
    /// Upgrade to TLS after this step (STARTTLS), with the spec's TLS options; at most one step.
    pub starttls: bool,
}

impl TcpStep {
    /// A step that reads lines until one matches `pattern`.
    pub fn expect(pattern: Pattern) -> TcpStep {
        TcpStep { expect: Some(pattern), ..TcpStep::default() }
    }

    /// A step that reads `bytes.len()` bytes and requires them to be `bytes`.
    pub fn expect_bytes(bytes: Vec<u8>) -> TcpStep {
        TcpStep { expect_bytes: bytes, ..TcpStep::default() }
    }

    /// A step that writes `data` as it is.
    pub fn send(data: Vec<u8>) -> TcpStep {
        TcpStep { send: data, ..TcpStep::default() }
    }

    /// A step that reads lines until one matches `pattern`, then writes `template` with the
    /// match's groups in place of `$1`, `${1}`, `${name}` (see [`TcpStep::expand`]).
    pub fn expect_then_send(pattern: Pattern, template: Vec<u8>) -> TcpStep {
        TcpStep { expect: Some(pattern), send: template, expand: true, ..TcpStep::default() }
    }

    /// A step that upgrades the connection to TLS (STARTTLS).
    pub fn starttls() -> TcpStep {
        TcpStep { starttls: true, ..TcpStep::default() }
    }

    /// `n` is the step's number from 1, for the message.
    pub(super) fn validate(&self, n: usize) -> Result<(), SpecError> {
        if self.send.len() > MAX_SEND_LEN {
            return Err(SpecError::InvalidExpectation(format!(
                "TCP step {n}: data to send is {} bytes (at most {MAX_SEND_LEN})",
                self.send.len()
            )));
        }
        if self.expect.is_some() && !self.expect_bytes.is_empty() {
            return Err(SpecError::InvalidExpectation(format!(
                "TCP step {n}: expect and expect_bytes are mutually exclusive"
            )));
        }
        if self.expect_bytes.len() > MAX_TCP_STEP_LINE {
            return Err(SpecError::InvalidExpectation(format!(
                "TCP step {n}: {} bytes to expect (at most {MAX_TCP_STEP_LINE})",
                self.expect_bytes.len()
            )));
        }
        if self.expand && self.expect.is_none() {
            return Err(SpecError::InvalidExpectation(format!(
                "TCP step {n}: a send template needs an expect on the same step (its groups fill \
                 the template)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    fn pat(s: &str) -> Pattern {
        Pattern::new(s).unwrap()
    }

    #[test]
    fn steps_and_the_single_exchange_do_not_mix() {
        let mut s = ProbeSpec::tcp("localhost", 25).unwrap();
        s.set_send(b"HELO\r\n".to_vec()).unwrap();
        let err = s.add_tcp_step(TcpStep::expect(pat("^220"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "TCP steps replace the single send, expect and STARTTLS: use one or the other"
        );
        let mut s = ProbeSpec::tcp("localhost", 25).unwrap();
        s.add_tcp_step(TcpStep::expect(pat("^220"))).unwrap();
        assert_eq!(s.set_send(b"x".to_vec()).unwrap_err(), err);
        assert_eq!(s.set_expect_reply(pat("x")).unwrap_err(), err);
        assert_eq!(s.set_starttls(true).unwrap_err(), err);
        s.set_send(Vec::new()).unwrap();
        s.set_starttls(false).unwrap();
        s.validate().unwrap();
    }

    #[test]
    fn step_checks() {
        let mut s = ProbeSpec::tcp("localhost", 25).unwrap();
        s.add_tcp_step(TcpStep::starttls()).unwrap();
        let ProbeKind::Tcp(t) = &s.kind else { unreachable!() };
        assert!(
            t.connect.tls.is_some() && t.has_starttls(),
            "STARTTLS brings the default TLS options"
        );
        let err = s.add_tcp_step(TcpStep::starttls()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "more than one STARTTLS step (the connection is upgraded once)"
        );
        let bad = TcpStep { send: b"$1".to_vec(), expand: true, ..TcpStep::default() };
        let err = s.add_tcp_step(bad).unwrap_err();
        assert!(
            err.to_string().starts_with("TCP step 2: a send template needs an expect"),
            "{err}"
        );
        let err = s.add_tcp_step(TcpStep::send(vec![b'a'; MAX_SEND_LEN + 1])).unwrap_err();
        assert_eq!(err.to_string(), "TCP step 2: data to send is 10241 bytes (at most 10240)");
        let ProbeKind::Tcp(t) = &s.kind else { unreachable!() };
        assert_eq!(t.steps.len(), 1, "refused steps are not kept");
        let many = vec![TcpStep::send(b"x".to_vec()); MAX_TCP_STEPS + 1];
        assert_eq!(s.set_tcp_steps(many).unwrap_err().to_string(), "65 TCP steps (at most 64)");
        let mut h = ProbeSpec::http("http://localhost/").unwrap();
        assert!(h.add_tcp_step(TcpStep::starttls()).is_err());
    }

    #[test]
    fn expect_bytes_checks() {
        let mut s = ProbeSpec::tcp("localhost", 25).unwrap();
        let both = TcpStep { expect: Some(pat("^220")), ..TcpStep::expect_bytes(b"x".to_vec()) };
        let err = s.add_tcp_step(both).unwrap_err().to_string();
        assert!(err.contains("expect and expect_bytes are mutually exclusive"), "{err}");
        let long = TcpStep::expect_bytes(vec![0; MAX_TCP_STEP_LINE + 1]);
        assert!(s.add_tcp_step(long).unwrap_err().to_string().contains("bytes to expect"));
        s.add_tcp_step(TcpStep::expect_bytes(vec![0; MAX_TCP_STEP_LINE])).unwrap();
    }
}
