//! The multi-step exchange ([`TcpStep`]s, blackbox_exporter's `query_response`): per step,
//! read lines until one matches the step's expression (line-wise, as Go's `bufio.ScanLines`),
//! then write the step's data (expanded with the match when the step asks for it), then hand
//! the connection back for STARTTLS when the step asks for it. Sans I/O, as [`Exchange`]:
//! every call reads and writes until the socket would block, the exchange is decided, or the
//! call has read [`READ_PER_CALL`] bytes or scanned [`LINES_PER_CALL`] lines: then it returns
//! [`ExchangeStep::Yield`] and the probe lets the poll loop's other runs go first (a peer that
//! talks fast would otherwise hold the loop's thread for the whole 1 MiB a run may read).
//!
//! Lines are dropped once scanned, as Go's scanner does: what is held is the unterminated line
//! (at most [`MAX_TCP_STEP_LINE`]) and whole lines left for the next step; the reply kept for
//! the outcome is the first [`MAX_REPLY`] bytes; the run reads at most [`MAX_TCP_STEPS_READ`].
//!
//! [`Exchange`]: crate::exchange::Exchange

use std::io::{self, Read, Write};

use prober_core::{
    Expansion, MAX_SEND_LEN, MAX_TCP_STEP_LINE, MAX_TCP_STEPS_READ, Pattern, TcpStep,
};
use prober_io::retry_interrupted;

use crate::exchange_step::{ExchangeStep, MAX_REPLY, QUOTED};

/// The most bytes one call reads (16 reads of 2 KiB, as HTTP bodies read 16 chunks per turn).
pub(crate) const READ_PER_CALL: usize = 16 * 2048;
/// The most lines one call scans (each one costs a regular expression match, and short lines
/// are many per byte).
pub(crate) const LINES_PER_CALL: usize = 1024;

/// The connection as the steps see it: one compiled copy of the steps serves the plain and
/// the TLS probe (the `prober` binary's size is bounded).
pub(crate) trait ReadWrite: Read + Write {}

impl<T: Read + Write> ReadWrite for T {}

/// Where the steps stand; the kept reply bytes are the [`Exchange`](crate::exchange::Exchange)'s.
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
    /// Read and not yet scanned: whole lines left by the step that matched before them, then
    /// the unterminated line.
    pending: Vec<u8>,
    /// How many bytes at the start of `pending` are known to hold no `\n` (a long line is
    /// searched once, not again after every read).
    searched: usize,
    /// Bytes read over the run (at most [`MAX_TCP_STEPS_READ`]).
    total: usize,
    /// Bytes the running step has scanned, and the first [`QUOTED`] of them (what a failure
    /// quotes, with `pending` after them).
    step_scanned: usize,
    step_head: Vec<u8>,
    /// The peer closed its side.
    eof: bool,
    /// The running step has sent and waits for the TLS upgrade.
    awaiting_tls: bool,
    /// Bytes read and lines scanned by the current call (see [`READ_PER_CALL`]).
    call_read: usize,
    call_lines: usize,
}

impl Steps {
    pub(crate) fn new(list: Vec<TcpStep>) -> Steps {
        Steps {
            list,
            at: 0,
            matched: false,
            out: Vec::new(),
            sent: 0,
            pending: Vec::new(),
            searched: 0,
            total: 0,
            step_scanned: 0,
            step_head: Vec::new(),
            eof: false,
            awaiting_tls: false,
            call_read: 0,
            call_lines: 0,
        }
    }

    /// True when the step awaiting TLS is the last one (or none is left).
    pub(crate) fn finished_after_tls(&self) -> bool {
        self.at + 1 >= self.list.len()
    }

    /// Bytes read over the run (the reply kept is the first [`MAX_REPLY`] of them).
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// `step N of M: ` for messages about the running step.
    pub(crate) fn label(&self) -> String {
        format!("step {} of {}: ", (self.at + 1).min(self.list.len()), self.list.len())
    }

    /// After the STARTTLS handshake: the following steps read what arrives through TLS (plain
    /// bytes buffered past the go-ahead are dropped, as blackbox_exporter's new scanner does).
    pub(crate) fn resume_after_tls(&mut self) {
        if self.awaiting_tls {
            self.awaiting_tls = false;
            self.pending.clear();
            self.searched = 0;
            self.eof = false;
            self.advance();
        }
    }

    fn advance(&mut self) {
        self.at += 1;
        self.matched = false;
        self.out.clear();
        self.sent = 0;
        self.step_scanned = 0;
        self.step_head.clear();
    }

    /// Runs the steps on `io`, keeping the first [`MAX_REPLY`] bytes read in `reply`, until
    /// the socket would block, the steps are decided or this call's budget is spent.
    pub(crate) fn step(&mut self, io: &mut dyn ReadWrite, reply: &mut Vec<u8>) -> ExchangeStep {
        self.call_read = 0;
        self.call_lines = 0;
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
                if !step.expect_bytes.is_empty() {
                    if let Err(pending_or_verdict) =
                        self.await_bytes(io, reply, &step.expect_bytes, list.len())
                    {
                        return pending_or_verdict;
                    }
                }
                match &step.expect {
                    None => self.out.extend_from_slice(&step.send),
                    Some(re) => match self.await_line(io, reply, re, step, list.len()) {
                        Ok(out) => self.out = out,
                        Err(pending_or_verdict) => return pending_or_verdict,
                    },
                }
                // A line is written with its end, and not at all when empty (as Go's `send`).
                if step.line && !self.out.is_empty() {
                    self.out.push(b'\n');
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
    /// with the match when it asks for it). `Err`: pending, the call's budget spent (yield),
    /// or the step's failure.
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
            // The whole lines held (left by the step before, or just read), each dropped once
            // scanned: only the unterminated line stays.
            let mut scanned = 0;
            let mut found = None;
            let mut skip = self.searched;
            let mut out_of_lines = false;
            while let Some((len, used)) = line_at(&self.pending[scanned..], skip, self.eof) {
                if self.call_lines >= LINES_PER_CALL {
                    out_of_lines = true;
                    break;
                }
                self.call_lines += 1;
                skip = 0;
                let line = &self.pending[scanned..scanned + len];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if step.expand {
                    match re.expand(line, &step.send, MAX_SEND_LEN) {
                        Expansion::NoMatch => {}
                        Expansion::Expanded(out) => found = Some(Ok(out)),
                        Expansion::TooLong => found = Some(Err(())),
                    }
                } else if re.is_match(line) {
                    found = Some(Ok(step.send.clone()));
                }
                let taken = &self.pending[scanned..scanned + used];
                let room = QUOTED.saturating_sub(self.step_head.len()).min(used);
                self.step_head.extend_from_slice(&taken[..room]);
                self.step_scanned += used;
                scanned += used;
                if found.is_some() {
                    break;
                }
            }
            self.pending.drain(..scanned);
            // Without a match (and lines left to scan) the loop ended at the unterminated line:
            // none of it holds a `\n`.
            self.searched = if found.is_some() || out_of_lines { 0 } else { self.pending.len() };
            match found {
                Some(Ok(out)) => return Ok(out),
                Some(Err(())) => {
                    // `self.label()` would not do: the list is out of `self` while it runs.
                    return Err(ExchangeStep::Protocol(format!(
                        "step {} of {count}: the data to send, expanded with the line that \
                         matched {:?}, would be longer than {MAX_SEND_LEN} bytes",
                        self.at + 1,
                        re.as_str()
                    )));
                }
                None => {}
            }
            // Whole lines are left (in `pending`, or in the socket): the next call scans them,
            // called again by the poll loop without a new readiness event.
            if out_of_lines {
                return Err(ExchangeStep::Yield);
            }
            if self.eof {
                let why = "the peer closed the connection";
                return Err(ExchangeStep::NoMatch(self.describe(re, count, why)));
            }
            if self.total >= MAX_TCP_STEPS_READ {
                let why = format!("the steps read {MAX_TCP_STEPS_READ} bytes in all");
                return Err(ExchangeStep::NoMatch(self.describe(re, count, &why)));
            }
            if self.pending.len() >= MAX_TCP_STEP_LINE {
                return Err(ExchangeStep::Protocol(self.describe_step(
                    count,
                    &format!("a line is longer than {MAX_TCP_STEP_LINE} bytes"),
                )));
            }
            if self.call_read >= READ_PER_CALL {
                return Err(ExchangeStep::Yield);
            }
            let room = chunk
                .len()
                .min(READ_PER_CALL - self.call_read)
                .min(MAX_TCP_STEPS_READ - self.total)
                .min(MAX_TCP_STEP_LINE - self.pending.len());
            match retry_interrupted(|| io.read(&mut chunk[..room])) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.total += n;
                    self.call_read += n;
                    let keep = n.min(MAX_REPLY.saturating_sub(reply.len()));
                    reply.extend_from_slice(&chunk[..keep]);
                    self.pending.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(ExchangeStep::Pending);
                }
                Err(e) => return Err(ExchangeStep::Failed("read", e)),
            }
        }
    }

    /// Reads until `want.len()` bytes are held (those a step before left first), then requires
    /// them to be `want` and drops them. Reads no more than it needs, so what follows is the
    /// next step's. `Err`: pending, the call's budget spent (yield), or the step's failure.
    fn await_bytes(
        &mut self,
        io: &mut dyn ReadWrite,
        reply: &mut Vec<u8>,
        want: &[u8],
        count: usize,
    ) -> Result<(), ExchangeStep> {
        let mut chunk = [0u8; 2048];
        loop {
            if self.pending.len() >= want.len() {
                if self.pending[..want.len()] != *want {
                    let what =
                        format!("{} (\"{}\")", prober_core::TCP_BYTES_DIFFER, want.escape_ascii());
                    self.pending.truncate(want.len());
                    return Err(ExchangeStep::NoMatch(self.describe_step(count, &what)));
                }
                self.pending.drain(..want.len());
                // What is left was not searched for a line end as such: search it again.
                self.searched = 0;
                return Ok(());
            }
            if self.eof {
                let what = format!(
                    "the peer closed the connection after {} of the {} expected bytes",
                    self.pending.len(),
                    want.len()
                );
                return Err(ExchangeStep::NoMatch(self.describe_step(count, &what)));
            }
            if self.total >= MAX_TCP_STEPS_READ {
                let what = format!("the steps read {MAX_TCP_STEPS_READ} bytes in all");
                return Err(ExchangeStep::NoMatch(self.describe_step(count, &what)));
            }
            if self.call_read >= READ_PER_CALL {
                return Err(ExchangeStep::Yield);
            }
            let room = chunk
                .len()
                .min(READ_PER_CALL - self.call_read)
                .min(MAX_TCP_STEPS_READ - self.total)
                .min(want.len() - self.pending.len());
            match retry_interrupted(|| io.read(&mut chunk[..room])) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.total += n;
                    self.call_read += n;
                    let keep = n.min(MAX_REPLY.saturating_sub(reply.len()));
                    reply.extend_from_slice(&chunk[..keep]);
                    self.pending.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(ExchangeStep::Pending);
                }
                Err(e) => return Err(ExchangeStep::Failed("read", e)),
            }
        }
    }

    /// `step N of M: no line matched "RE": WHY, K bytes received in this step: "..."`.
    fn describe(&self, re: &Pattern, count: usize, why: &str) -> String {
        self.describe_step(count, &format!("no line matched {:?}: {why}", re.as_str()))
    }

    /// `step N of M: WHAT, K bytes received in this step: "..."`, quoting the first bytes the
    /// step scanned and then those it holds.
    fn describe_step(&self, count: usize, what: &str) -> String {
        let got = self.step_scanned + self.pending.len();
        let rest = QUOTED.saturating_sub(self.step_head.len()).min(self.pending.len());
        let shown = [&self.step_head[..], &self.pending[..rest]].concat();
        let more = if got > QUOTED { "..." } else { "" };
        format!(
            "step {} of {count}: {what}, {got} bytes received in this step: \"{}\"{more}",
            self.at + 1,
            shown.escape_ascii()
        )
    }

    /// The message when the run's deadline passes during the steps; `within`: the timeout as
    /// the probe writes it.
    pub(crate) fn describe_timeout(&self, within: &str) -> String {
        match self.list.get(self.at) {
            Some(TcpStep { expect_bytes: want, .. }) if !self.matched && !want.is_empty() => self
                .describe_step(
                    self.list.len(),
                    &format!(
                        "{} of the {} expected bytes arrived within {within}",
                        self.pending.len().min(want.len()),
                        want.len()
                    ),
                ),
            Some(TcpStep { expect: Some(re), .. }) if !self.matched => {
                self.describe(re, self.list.len(), &format!("no match within {within}"))
            }
            _ => format!("{}timeout after {within}: the data could not be sent", self.label()),
        }
    }
}

/// The first line of `held`: its length without the `\n`, and the bytes it takes with it;
/// at the peer's close (`eof`), the unterminated rest is the last line. `held[..skip]` is known
/// to hold no `\n`.
fn line_at(held: &[u8], skip: usize, eof: bool) -> Option<(usize, usize)> {
    match held[skip.min(held.len())..].iter().position(|&b| b == b'\n') {
        Some(i) => Some((skip + i, skip + i + 1)),
        None if eof && !held.is_empty() => Some((held.len(), held.len())),
        None => None,
    }
}
