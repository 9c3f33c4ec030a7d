//! The multi-step exchange ([`TcpStep`]s, blackbox_exporter's `query_response`): per step,
//! read lines until one matches the step's expression (line-wise, as Go's `bufio.ScanLines`),
//! then write the step's data (expanded with the match when the step asks for it), then hand
//! the connection back for STARTTLS when the step asks for it. Sans I/O, as [`Exchange`]:
//! every call reads and writes until the socket would block or the exchange is decided.
//!
//! [`Exchange`]: crate::exchange::Exchange

use std::io::{self, Read, Write};

use prober_core::{Pattern, TcpStep};
use prober_io::retry_interrupted;

use crate::exchange::{ExchangeStep, MAX_REPLY, QUOTED};

/// The connection as the steps see it: one compiled copy of the steps serves the plain and
/// the TLS probe (the `prober` binary's size is bounded).
pub(crate) trait ReadWrite: Read + Write {}

impl<T: Read + Write> ReadWrite for T {}

/// Where the steps stand; the reply bytes are the [`Exchange`](crate::exchange::Exchange)'s.
#[derive(Debug)]
pub(crate) struct Steps {
    list: Vec<TcpStep>,
    /// The step running (`list.len()`: all done).
    at: usize,
    /// The running step's expect is satisfied (or it has none) and `out` holds what it sends.
    matched: bool,
    /// What the running step writes, and how much of it went.
    out: Vec<u8>,
    sent: usize,
    /// Where the next line starts in the reply (lines before it were read by earlier steps).
    line_start: usize,
    /// Where the running step started reading (what a failure quotes).
    step_start: usize,
    /// The peer closed its side.
    eof: bool,
    /// The running step has sent and waits for the TLS upgrade.
    awaiting_tls: bool,
}

impl Steps {
    pub(crate) fn new(list: Vec<TcpStep>) -> Steps {
        Steps {
            list,
            at: 0,
            matched: false,
            out: Vec::new(),
            sent: 0,
            line_start: 0,
            step_start: 0,
            eof: false,
            awaiting_tls: false,
        }
    }

    /// True when the step awaiting TLS is the last one (or none is left).
    pub(crate) fn finished_after_tls(&self) -> bool {
        self.at + 1 >= self.list.len()
    }

    /// `step N of M: ` for messages about the running step.
    pub(crate) fn label(&self) -> String {
        format!("step {} of {}: ", (self.at + 1).min(self.list.len()), self.list.len())
    }

    /// After the STARTTLS handshake: the following steps read what arrives through TLS (plain
    /// bytes buffered past the go-ahead are dropped, as blackbox_exporter's new scanner does).
    pub(crate) fn resume_after_tls(&mut self, reply: &[u8]) {
        if self.awaiting_tls {
            self.awaiting_tls = false;
            self.line_start = reply.len();
            self.eof = false;
            self.advance();
        }
    }

    fn advance(&mut self) {
        self.at += 1;
        self.matched = false;
        self.out.clear();
        self.sent = 0;
        self.step_start = self.line_start;
    }

    /// The next whole line of the reply (without `\n` and a `\r` before it), or at the peer's
    /// close the unterminated rest; advances past it.
    fn next_line<'a>(&mut self, reply: &'a [u8]) -> Option<&'a [u8]> {
        let rest = &reply[self.line_start.min(reply.len())..];
        let (line, used) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], i + 1),
            None if self.eof && !rest.is_empty() => (rest, rest.len()),
            None => return None,
        };
        self.line_start += used;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// Runs the steps on `io`, reading into `reply` (at most [`MAX_REPLY`] bytes in all).
    pub(crate) fn step(&mut self, io: &mut dyn ReadWrite, reply: &mut Vec<u8>) -> ExchangeStep {
        // Taken out for the run, so that the step borrowed from it and `self` are apart.
        let list = std::mem::take(&mut self.list);
        let step = self.run(&list, io, reply);
        self.list = list;
        step
    }

    fn run(
        &mut self,
        list: &[TcpStep],
        io: &mut dyn ReadWrite,
        reply: &mut Vec<u8>,
    ) -> ExchangeStep {
        loop {
            if self.awaiting_tls {
                return ExchangeStep::StartTls;
            }
            let Some(step) = list.get(self.at) else { return ExchangeStep::Matched };
            if !self.matched {
                match &step.expect {
                    None => self.out.extend_from_slice(&step.send),
                    Some(re) => match self.await_line(io, reply, re, step, list.len()) {
                        Ok(out) => self.out = out,
                        Err(pending_or_verdict) => return pending_or_verdict,
                    },
                }
                self.matched = true;
            }
            while self.sent < self.out.len() {
                match retry_interrupted(|| io.write(&self.out[self.sent..])) {
                    Ok(0) => {
                        return ExchangeStep::Failed("write", io::ErrorKind::WriteZero.into());
                    }
                    Ok(n) => self.sent += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return ExchangeStep::Pending;
                    }
                    Err(e) => return ExchangeStep::Failed("write", e),
                }
            }
            if step.starttls {
                self.awaiting_tls = true;
                return ExchangeStep::StartTls;
            }
            self.advance();
        }
    }

    /// Reads lines until one matches `re`; `Ok`: what the step sends (its template expanded
    /// with the match when it asks for it). `Err`: pending, or the step's failure.
    fn await_line(
        &mut self,
        io: &mut dyn ReadWrite,
        reply: &mut Vec<u8>,
        re: &Pattern,
        step: &TcpStep,
        count: usize,
    ) -> Result<Vec<u8>, ExchangeStep> {
        let mut chunk = [0u8; 2048];
        loop {
            while let Some(line) = self.next_line(reply) {
                if step.expand {
                    if let Some(out) = re.expand(line, &step.send) {
                        return Ok(out);
                    }
                } else if re.is_match(line) {
                    return Ok(step.send.clone());
                }
            }
            if self.eof {
                let why = "the peer closed the connection";
                return Err(ExchangeStep::NoMatch(self.describe(reply, re, count, why)));
            }
            if reply.len() >= MAX_REPLY {
                let why = format!("{MAX_REPLY} bytes read");
                return Err(ExchangeStep::NoMatch(self.describe(reply, re, count, &why)));
            }
            let room = (MAX_REPLY - reply.len()).min(chunk.len());
            match retry_interrupted(|| io.read(&mut chunk[..room])) {
                Ok(0) => self.eof = true,
                Ok(n) => reply.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(ExchangeStep::Pending);
                }
                Err(e) => return Err(ExchangeStep::Failed("read", e)),
            }
        }
    }

    /// `step N of M: no line matched "RE": WHY, K bytes received in this step: "..."`.
    fn describe(&self, reply: &[u8], re: &Pattern, count: usize, why: &str) -> String {
        let got = &reply[self.step_start.min(reply.len())..];
        let shown = &got[..got.len().min(QUOTED)];
        let more = if got.len() > QUOTED { "..." } else { "" };
        format!(
            "step {} of {count}: no line matched {:?}: {why}, {} bytes received in this step: \"{}\"{more}",
            self.at + 1,
            re.as_str(),
            got.len(),
            shown.escape_ascii()
        )
    }

    /// The message when the run's deadline passes during the steps; `within`: the timeout as
    /// the probe writes it.
    pub(crate) fn describe_timeout(&self, reply: &[u8], within: &str) -> String {
        match self.list.get(self.at) {
            Some(TcpStep { expect: Some(re), .. }) if !self.matched => {
                self.describe(reply, re, self.list.len(), &format!("no match within {within}"))
            }
            _ => format!("{}timeout after {within}: the data could not be sent", self.label()),
        }
    }
}
