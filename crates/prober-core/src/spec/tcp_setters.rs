//! The setters of a TCP probe's exchange: the single send, expect and STARTTLS, or the steps
//! of a multi-step one ([`TcpStep`], `tcp_steps.rs`'s), and their checks.

use super::tcp_steps::{MAX_TCP_STEPS, TcpStep};
use super::{ProbeKind, ProbeSpec, SpecError, TcpSpec};
use crate::expect::{MAX_SEND_LEN, Pattern};

impl TcpSpec {
    /// True when the connection starts in plain text and TLS comes later (STARTTLS, by the
    /// single-exchange flag or a step).
    pub fn has_starttls(&self) -> bool {
        self.starttls || self.steps.iter().any(|s| s.starttls)
    }
}

impl ProbeSpec {
    /// Sets the bytes a TCP probe writes once connected (at most [`MAX_SEND_LEN`]); see
    /// [`crate::unescape`] for data written as text.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for more than [`MAX_SEND_LEN`] bytes or a probe that is
    /// not TCP.
    pub fn set_send(&mut self, data: Vec<u8>) -> Result<(), SpecError> {
        if data.len() > MAX_SEND_LEN {
            return Err(SpecError::InvalidExpectation(format!(
                "data to send is {} bytes (at most {MAX_SEND_LEN})",
                data.len()
            )));
        }
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                refuse_single(t, !data.is_empty())?;
                t.send = data;
                Ok(())
            }
            _ => {
                Err(SpecError::InvalidExpectation("data to send applies to TCP probes only".into()))
            }
        }
    }

    /// Sets a regular expression a TCP probe's reply must match (TCP only).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not TCP.
    pub fn set_expect_reply(&mut self, pattern: Pattern) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                refuse_single(t, true)?;
                t.expect = Some(pattern);
                Ok(())
            }
            _ => Err(SpecError::InvalidExpectation(
                "an expected reply applies to TCP probes only".into(),
            )),
        }
    }

    /// Turns STARTTLS on or off for a TCP probe: the send/expect exchange runs in plain text
    /// (the server's go-ahead, such as SMTP's `220`), then TLS shakes hands on the same
    /// connection with the spec's TLS options (the default ones, no verification, when none
    /// were set). Without an exchange the upgrade follows the connect at once.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for a probe that is not TCP.
    pub fn set_starttls(&mut self, on: bool) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                refuse_single(t, on)?;
                t.starttls = on;
                if on && t.connect.tls.is_none() {
                    t.connect.tls = Some(crate::TlsOptions::default());
                }
                Ok(())
            }
            _ => Err(SpecError::InvalidTls("STARTTLS applies to TCP probes only".into())),
        }
    }

    /// Appends a step to a TCP probe's exchange (see [`TcpStep`]). Steps replace the single
    /// send, expect and STARTTLS ([`ProbeSpec::set_send`], [`ProbeSpec::set_expect_reply`],
    /// [`ProbeSpec::set_starttls`]), which keep their own meaning (the reply matched as a
    /// whole, not line by line): a spec has one or the other. A STARTTLS step without TLS
    /// options sets the default ones (no verification), as [`ProbeSpec::set_starttls`] does.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not TCP, one with a single
    /// send/expect/STARTTLS, more than [`MAX_TCP_STEPS`] steps, a second STARTTLS step, more
    /// than [`MAX_SEND_LEN`] bytes to send, or a template without an expect.
    pub fn add_tcp_step(&mut self, step: TcpStep) -> Result<(), SpecError> {
        let ProbeKind::Tcp(t) = &mut self.kind else {
            return Err(SpecError::InvalidExpectation("TCP steps apply to TCP probes only".into()));
        };
        let mut steps = std::mem::take(&mut t.steps);
        steps.push(step);
        let checked = check_steps(t, &steps);
        if checked.is_ok() && steps.last().is_some_and(|s| s.starttls) && t.connect.tls.is_none() {
            t.connect.tls = Some(crate::TlsOptions::default());
        }
        if checked.is_err() {
            steps.pop();
        }
        t.steps = steps;
        checked
    }

    /// Replaces a TCP probe's steps (empty: none; see [`ProbeSpec::add_tcp_step`]).
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::add_tcp_step`]; the spec is unchanged on error.
    pub fn set_tcp_steps(&mut self, steps: Vec<TcpStep>) -> Result<(), SpecError> {
        let ProbeKind::Tcp(t) = &mut self.kind else {
            return Err(SpecError::InvalidExpectation("TCP steps apply to TCP probes only".into()));
        };
        check_steps(t, &steps)?;
        if steps.iter().any(|s| s.starttls) && t.connect.tls.is_none() {
            t.connect.tls = Some(crate::TlsOptions::default());
        }
        t.steps = steps;
        Ok(())
    }
}

/// Refuses to set a single send, expect or STARTTLS (`setting`) on a spec with steps.
pub(crate) fn refuse_single(t: &TcpSpec, setting: bool) -> Result<(), SpecError> {
    if setting && !t.steps.is_empty() {
        return Err(SpecError::InvalidExpectation(
            "TCP steps replace the single send, expect and STARTTLS: use one or the other".into(),
        ));
    }
    Ok(())
}

/// Checks `steps` for `t` (whose own steps are ignored).
fn check_steps(t: &TcpSpec, steps: &[TcpStep]) -> Result<(), SpecError> {
    if steps.is_empty() {
        return Ok(());
    }
    if !t.send.is_empty() || t.expect.is_some() || t.starttls {
        // Two meanings of "expect" on one connection (the whole reply, or line by line) would
        // leave the order of the two exchanges to guess.
        return Err(SpecError::InvalidExpectation(
            "TCP steps replace the single send, expect and STARTTLS: use one or the other".into(),
        ));
    }
    if steps.len() > MAX_TCP_STEPS {
        return Err(SpecError::InvalidExpectation(format!(
            "{} TCP steps (at most {MAX_TCP_STEPS})",
            steps.len()
        )));
    }
    for (i, s) in steps.iter().enumerate() {
        s.validate(i + 1)?;
    }
    if steps.iter().filter(|s| s.starttls).count() > 1 {
        return Err(SpecError::InvalidExpectation(
            "more than one STARTTLS step (the connection is upgraded once)".into(),
        ));
    }
    Ok(())
}

/// [`ProbeSpec::validate`]'s check of a TCP probe's steps.
pub(super) fn validate_steps(t: &TcpSpec) -> Result<(), SpecError> {
    check_steps(t, &t.steps)
}
