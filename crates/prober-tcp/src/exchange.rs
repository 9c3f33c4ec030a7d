//! TCP send/expect (HAProxy `tcp-check send`/`expect rstring`, Envoy's `tcp_health_check`,
//! blackbox_exporter's `query_response`): once connected, write the spec's bytes, then read
//! until the reply matches the expected regular expression, the peer closes, or
//! [`MAX_REPLY`] bytes arrived without a match.
//!
//! With [`TcpStep`]s ([`Exchange::with_steps`]) the exchange runs them in order instead, reading
//! line by line (see `steps.rs`; lines are dropped once scanned, a line is at most
//! [`MAX_TCP_STEP_LINE`](prober_core::MAX_TCP_STEP_LINE) bytes and the run reads at most
//! [`MAX_TCP_STEPS_READ`](prober_core::MAX_TCP_STEPS_READ), of which the first [`MAX_REPLY`]
//! are kept); a STARTTLS step returns [`ExchangeStep::StartTls`] for the
//! probe to shake hands, after which [`Exchange::resume_after_tls`] lets the next steps run on
//! the TLS connection.
//!
//! The exchange is written over any non-blocking `Read + Write`, so the rules are tested here
//! without sockets; [`crate::TcpProbe`] drives it on its connection (edge-triggered readiness:
//! every call reads and writes until the socket would block, or, for steps, until the call's
//! read budget is spent: [`ExchangeStep::Yield`], after which the probe is called again without
//! a readiness event).

use std::io::{self, Read, Write};

use prober_core::{Pattern, TcpStep};
use prober_io::retry_interrupted;

use crate::exchange_step::QUOTED;
pub use crate::exchange_step::{ExchangeStep, MAX_REPLY};
use crate::steps::Steps;

#[derive(Debug)]
/// The send/expect part of a TCP probe on a connected socket: writes the data to send, then
/// reads the reply until the expected expression matches, the peer closes, or [`MAX_REPLY`]
/// bytes arrived.
pub struct Exchange {
    send: Vec<u8>,
    sent: usize,
    expect: Option<Pattern>,
    reply: Vec<u8>,
    /// A multi-step exchange instead of `send`/`expect` (boxed: the single one stays small).
    steps: Option<Box<Steps>>,
}

impl Exchange {
    /// An exchange that sends `send` (may be empty) and, with `expect`, reads a reply that must
    /// match it.
    pub fn new(send: Vec<u8>, expect: Option<Pattern>) -> Exchange {
        Exchange { send, sent: 0, expect, reply: Vec::new(), steps: None }
    }

    /// An exchange that runs `steps` in order (see [`TcpStep`]); the reply is kept as a whole,
    /// as for the single exchange.
    pub fn with_steps(steps: Vec<TcpStep>) -> Exchange {
        let steps = Some(Box::new(Steps::new(steps)));
        Exchange { send: Vec::new(), sent: 0, expect: None, reply: Vec::new(), steps }
    }

    /// True when everything is done once the connection is upgraded: a single exchange (its
    /// STARTTLS comes last), or steps with none left after the STARTTLS step.
    pub fn done_after_tls(&self) -> bool {
        self.steps.as_ref().is_none_or(|s| s.finished_after_tls())
    }

    /// After the STARTTLS handshake, the steps after the STARTTLS step run on the TLS
    /// connection (plain bytes buffered past the server's go-ahead are dropped).
    pub fn resume_after_tls(&mut self) {
        if let Some(s) = self.steps.as_mut() {
            s.resume_after_tls();
        }
    }

    /// `step N of M: ` while steps run (for messages about socket errors), else empty.
    pub fn step_label(&self) -> String {
        self.steps.as_ref().map_or_else(String::new, |s| s.label())
    }

    /// The message when the deadline passes during the exchange; `within`: the timeout as the
    /// probe writes it.
    pub fn describe_timeout(&self, within: &str) -> String {
        match (&self.steps, &self.expect) {
            (Some(s), _) => s.describe_timeout(within),
            (None, Some(re)) => self.describe(re, &format!("no match within {within}")),
            (None, None) => format!("timeout after {within}: the data could not be sent"),
        }
    }

    /// The reply bytes kept so far: the first [`MAX_REPLY`] read.
    pub fn reply(&self) -> &[u8] {
        &self.reply
    }

    /// How many reply bytes were read (steps read past the [`MAX_REPLY`] kept).
    pub fn read_total(&self) -> usize {
        self.steps.as_ref().map_or(self.reply.len(), |s| s.total())
    }

    /// The reply bytes read (for the outcome's output).
    pub fn into_reply(self) -> Vec<u8> {
        self.reply
    }

    /// True once some reply byte arrived (for the first-byte timing).
    pub fn has_reply(&self) -> bool {
        !self.reply.is_empty()
    }

    /// Writes what is left to send, then reads what has arrived, until the socket would block
    /// or the exchange is decided; steps also stop when the call's budget is spent
    /// ([`ExchangeStep::Yield`]). A single exchange reads at most [`MAX_REPLY`] bytes in all,
    /// so it needs no budget per call.
    pub fn step(&mut self, io: &mut (impl Read + Write)) -> ExchangeStep {
        if let Some(steps) = self.steps.as_mut() {
            return steps.step(io, &mut self.reply);
        }
        while self.sent < self.send.len() {
            match retry_interrupted(|| io.write(&self.send[self.sent..])) {
                Ok(0) => return ExchangeStep::Failed("write", io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ExchangeStep::Pending,
                Err(e) => return ExchangeStep::Failed("write", e),
            }
        }
        let Some(expect) = &self.expect else {
            return ExchangeStep::Matched;
        };
        let mut chunk = [0u8; 2048];
        loop {
            let room = MAX_REPLY - self.reply.len();
            match retry_interrupted(|| io.read(&mut chunk[..room.min(2048)])) {
                Ok(0) => {
                    return ExchangeStep::NoMatch(
                        self.describe(expect, "the peer closed the connection"),
                    );
                }
                Ok(n) => {
                    self.reply.extend_from_slice(&chunk[..n]);
                    if expect.is_match(&self.reply) {
                        return ExchangeStep::Matched;
                    }
                    if self.reply.len() >= MAX_REPLY {
                        return ExchangeStep::NoMatch(
                            self.describe(expect, &format!("{MAX_REPLY} bytes read")),
                        );
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ExchangeStep::Pending,
                Err(e) => return ExchangeStep::Failed("read", e),
            }
        }
    }

    /// `reply did not match "RE": WHY after N bytes: "..."`, the reply quoted with escapes.
    pub fn describe(&self, expect: &Pattern, why: &str) -> String {
        let shown = &self.reply[..self.reply.len().min(QUOTED)];
        let more = if self.reply.len() > QUOTED { "..." } else { "" };
        format!(
            "reply did not match {:?}: {why}, {} bytes received: \"{}\"{more}",
            expect.as_str(),
            self.reply.len(),
            shown.escape_ascii()
        )
    }

    /// The pattern, when a reply is expected.
    pub fn expect(&self) -> Option<&Pattern> {
        self.expect.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::{LINES_PER_CALL, READ_PER_CALL};
    use prober_core::{MAX_TCP_STEP_LINE, MAX_TCP_STEPS_READ};
    use std::collections::VecDeque;

    /// A peer scripted as a list of read results; writes accepted up to `write_room` bytes.
    struct Peer {
        reads: VecDeque<io::Result<Vec<u8>>>,
        written: Vec<u8>,
        write_room: usize,
    }

    impl Read for Peer {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.reads.pop_front() {
                None => Err(io::ErrorKind::WouldBlock.into()),
                Some(Ok(mut b)) => {
                    let n = b.len().min(buf.len());
                    buf[..n].copy_from_slice(&b[..n]);
                    if n < b.len() {
                        self.reads.push_front(Ok(b.split_off(n)));
                    }
                    Ok(n)
                }
                Some(Err(e)) => Err(e),
            }
        }
    }

    impl Write for Peer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.write_room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.write_room);
            self.write_room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn peer(reads: Vec<io::Result<Vec<u8>>>, write_room: usize) -> Peer {
        Peer { reads: reads.into(), written: Vec::new(), write_room }
    }

    fn re(s: &str) -> Option<Pattern> {
        Some(Pattern::new(s).unwrap())
    }

    #[test]
    fn sends_then_matches_across_reads() {
        let mut x = Exchange::new(b"PING\r\n".to_vec(), re(r"^\+PONG\r\n"));
        let mut p = peer(vec![], 3);
        assert_eq!(x.step(&mut p), ExchangeStep::Pending, "partial write");
        p.write_room = 100;
        assert_eq!(x.step(&mut p), ExchangeStep::Pending, "sent, nothing to read yet");
        assert_eq!(p.written, b"PING\r\n");
        p.reads.push_back(Ok(b"+PO".to_vec()));
        assert_eq!(x.step(&mut p), ExchangeStep::Pending);
        p.reads.push_back(Ok(b"NG\r\n".to_vec()));
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
        assert_eq!(x.reply(), b"+PONG\r\n");
    }

    #[test]
    fn close_or_limit_without_match() {
        let mut x = Exchange::new(Vec::new(), re("^220 "));
        let mut p = peer(vec![Ok(b"554 go away\r\n\x00".to_vec()), Ok(Vec::new())], 0);
        assert_eq!(
            x.step(&mut p),
            ExchangeStep::NoMatch(
                "reply did not match \"^220 \": the peer closed the connection, 14 bytes received: \"554 go away\\r\\n\\x00\"".into()
            )
        );
        let mut x = Exchange::new(Vec::new(), re("never"));
        let mut p = peer(vec![Ok(vec![b'a'; MAX_REPLY + 5000])], 0);
        match x.step(&mut p) {
            ExchangeStep::NoMatch(m) => {
                assert!(m.contains("10240 bytes read, 10240 bytes received"), "{m}");
                assert!(m.ends_with("\"..."), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(x.reply().len(), MAX_REPLY);
    }

    #[test]
    fn send_only_and_errors() {
        let mut x = Exchange::new(b"QUIT\r\n".to_vec(), None);
        let mut p = peer(vec![], 100);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
        let mut x = Exchange::new(Vec::new(), re("x"));
        let mut p = peer(vec![Err(io::ErrorKind::ConnectionReset.into())], 0);
        assert!(
            matches!(x.step(&mut p), ExchangeStep::Failed("read", e) if e.kind() == io::ErrorKind::ConnectionReset)
        );
    }

    #[test]
    fn steps_read_chatty_peers_line_by_line() {
        // An IRC server's MOTD far past the kept reply before the line awaited: lines scanned
        // are dropped, so the match is found; the output keeps the first MAX_REPLY bytes.
        let motd = b":irc.test 372 prober :- a line of the message of the day\r\n".repeat(2000);
        let mut x = steps(vec![
            TcpStep::expect_then_send(pat("PING :([^ ]+)"), b"PONG ${1}\n".to_vec()),
            TcpStep::expect(pat("^:[^ ]+ 001")),
        ]);
        let mut p = peer(vec![Ok(motd.clone()), Ok(b"PING :tok\r\n".to_vec())], 100);
        assert_eq!(step_through(&mut x, &mut p), ExchangeStep::Pending);
        assert_eq!(p.written, b"PONG tok\n");
        p.reads.push_back(Ok(b":irc.test 001 prober :Welcome\r\n".to_vec()));
        assert_eq!(step_through(&mut x, &mut p), ExchangeStep::Matched);
        assert_eq!(x.reply(), &motd[..MAX_REPLY]);
        assert_eq!(x.read_total(), motd.len() + 11 + 31);

        // A line of MAX_TCP_STEP_LINE bytes with its end is read (Go's scanner takes it too).
        let mut long = vec![b'x'; MAX_TCP_STEP_LINE - 2];
        long.extend_from_slice(b"\r\nOK\r\n");
        let mut x = steps(vec![TcpStep::expect(pat("^OK$"))]);
        assert_eq!(step_through(&mut x, &mut peer(vec![Ok(long)], 0)), ExchangeStep::Matched);
    }

    /// Steps `x` until it stops yielding, checking that no call reads more than its budget.
    fn step_through(x: &mut Exchange, p: &mut Peer) -> ExchangeStep {
        for _ in 0..10_000 {
            let before = x.read_total();
            let step = x.step(p);
            assert!(x.read_total() - before <= READ_PER_CALL, "one call read too much");
            if step != ExchangeStep::Yield {
                return step;
            }
        }
        panic!("the exchange yields without end");
    }

    #[test]
    fn steps_yield_after_a_bounded_amount_of_work_per_call() {
        // A peer whose lines are all buffered at once: each call reads at most its budget and
        // yields, and the next call goes on where it stopped (no readiness in between).
        let mut x = steps(vec![TcpStep::expect(pat("^250 "))]);
        let chatter = b"250-chatter\r\n".repeat(20_000);
        let mut p = peer(vec![Ok(chatter.clone()), Ok(b"250 END\r\n".to_vec())], 0);
        let mut calls = 0;
        loop {
            let before = x.read_total();
            let step = x.step(&mut p);
            calls += 1;
            assert!(x.read_total() - before <= READ_PER_CALL, "call {calls} read too much");
            match step {
                ExchangeStep::Yield => {}
                ExchangeStep::Matched => break,
                other => panic!("call {calls}: {other:?}"),
            }
            assert!(calls < 1000, "never matched");
        }
        assert_eq!(x.read_total(), chatter.len() + 9);
        assert!(calls > chatter.len() / READ_PER_CALL, "{calls} calls");

        // Short lines cost a match each: a call scans at most LINES_PER_CALL of them, the rest
        // (already read) on the next calls.
        let mut x = steps(vec![TcpStep::expect(pat("^OK$"))]);
        let lines = [b"x\n".repeat(3 * LINES_PER_CALL).as_slice(), b"OK\n"].concat();
        let mut p = peer(vec![Ok(lines)], 0);
        assert_eq!(x.step(&mut p), ExchangeStep::Yield);
        assert_eq!(x.step(&mut p), ExchangeStep::Yield);
        assert_eq!(x.step(&mut p), ExchangeStep::Yield);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
    }

    #[test]
    fn steps_bound_lines_and_expansions() {
        // One byte more without a line end: the step fails, named, and reading stops there.
        let mut x = steps(vec![TcpStep::expect(pat("^220")), TcpStep::expect(pat("^250 "))]);
        let mut p =
            peer(vec![Ok(b"220 hi\r\n".to_vec()), Ok(vec![b'y'; MAX_TCP_STEP_LINE + 10])], 0);
        match step_through(&mut x, &mut p) {
            ExchangeStep::Protocol(m) => assert!(
                m.starts_with(
                    "step 2 of 2: a line is longer than 65536 bytes, 65536 bytes received in \
                     this step: \"yyyy"
                ),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(x.read_total(), 8 + MAX_TCP_STEP_LINE, "nothing read past the bound");

        // A template of many `$1` against a long line: refused before it is built.
        let mut x = steps(vec![TcpStep::expect_then_send(
            pat("^PING :(.*)$"),
            "$1".repeat(1000).into_bytes(),
        )]);
        let line = [b"PING :".as_slice(), &[b'a'; 5000], b"\r\n"].concat();
        let mut p = peer(vec![Ok(line)], 1 << 20);
        assert_eq!(
            x.step(&mut p),
            ExchangeStep::Protocol(
                "step 1 of 1: the data to send, expanded with the line that matched \
                 \"^PING :(.*)$\", would be longer than 10240 bytes"
                    .into()
            )
        );
        assert!(p.written.is_empty());
    }

    #[test]
    fn line_steps_write_nothing_for_an_empty_expansion() {
        // blackbox_exporter's `send`: a `\n` after the data, and nothing when it is empty.
        let line = |expect: &str, send: &str| TcpStep {
            line: true,
            ..TcpStep::expect_then_send(pat(expect), send.as_bytes().to_vec())
        };
        let mut x = steps(vec![line("^220 (.*)$", "${1}"), line("^250 (.*)$", "HELO ${1}")]);
        let mut p = peer(vec![Ok(b"220 \r\n250 mx\r\n".to_vec())], 100);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
        assert_eq!(p.written, b"HELO mx\n");
    }

    fn steps(list: Vec<TcpStep>) -> Exchange {
        Exchange::with_steps(list)
    }

    fn pat(s: &str) -> Pattern {
        Pattern::new(s).unwrap()
    }

    #[test]
    fn steps_match_line_by_line_and_starttls_hands_over() {
        // blackbox_exporter's smtp_starttls, up to the upgrade and after it.
        let mut x = steps(vec![
            TcpStep::expect(pat("^220 ([^ ]+) ESMTP (.+)$")),
            TcpStep::send(b"EHLO prober\r\n".to_vec()),
            TcpStep::expect(pat("^250-STARTTLS")),
            TcpStep::send(b"STARTTLS\r\n".to_vec()),
            TcpStep::expect(pat("^220")),
            TcpStep::starttls(),
            TcpStep::send(b"EHLO prober\r\n".to_vec()),
            TcpStep::expect(pat("^250-AUTH")),
        ]);
        let mut p = peer(vec![Ok(b"220 mx.example ESMTP Postfix\r".to_vec())], 100);
        // `$` is the end of the line: the line is not whole until its `\n`.
        assert_eq!(x.step(&mut p), ExchangeStep::Pending);
        assert!(p.written.is_empty());
        p.reads.push_back(Ok(b"\n250-mx.example\r\n250-STAR".to_vec()));
        assert_eq!(x.step(&mut p), ExchangeStep::Pending);
        assert_eq!(p.written, b"EHLO prober\r\n");
        // Two lines in one read: the second is left for the next expect.
        p.reads.push_back(Ok(b"TTLS\r\n250 SIZE\r\n".to_vec()));
        assert_eq!(x.step(&mut p), ExchangeStep::Pending);
        assert_eq!(p.written, b"EHLO prober\r\nSTARTTLS\r\n");
        p.reads.push_back(Ok(b"220 go ahead\r\nplain bytes past the go-ahead\r\n".to_vec()));
        assert_eq!(x.step(&mut p), ExchangeStep::StartTls);
        assert_eq!(x.step(&mut p), ExchangeStep::StartTls, "until the upgrade is done");
        assert!(!x.done_after_tls());
        x.resume_after_tls();
        // Over "TLS": the plain bytes left over are not read as an answer.
        let mut t = peer(vec![Ok(b"250-mx.example\r\n250-AUTH PLAIN\r\n".to_vec())], 100);
        assert_eq!(x.step(&mut t), ExchangeStep::Matched);
        assert_eq!(t.written, b"EHLO prober\r\n");
        assert!(x.reply().ends_with(b"250-AUTH PLAIN\r\n"));
        assert!(x.reply().starts_with(b"220 mx.example ESMTP Postfix\r\n"));
    }

    #[test]
    fn send_templates_expand_only_when_asked() {
        // blackbox_exporter's irc_banner: `${1}` from the PING line.
        let mut x = steps(vec![
            TcpStep::send(b"NICK prober\n".to_vec()),
            TcpStep::expect_then_send(pat("PING :([^ ]+)"), b"PONG ${1} $1x $$ $9\n".to_vec()),
            TcpStep {
                expect: Some(pat("^:[^ ]+ 001")),
                send: b"cost $5\n".to_vec(),
                ..Default::default()
            },
        ]);
        let mut p =
            peer(vec![Ok(b"NOTICE hi\r\nPING :abc123\r\n:srv 001 prober\r\n".to_vec())], 1000);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
        assert_eq!(
            String::from_utf8_lossy(&p.written),
            "NICK prober\nPONG abc123  $ \ncost $5\n",
            "$1x names group \"1x\" (empty), as in Go; a plain send keeps its $"
        );
    }

    #[test]
    fn steps_fail_naming_the_step() {
        // The last line needs no `\n` when the peer closes after it.
        let mut x = steps(vec![TcpStep::expect(pat("^SSH-2.0-"))]);
        let mut p = peer(vec![Ok(b"SSH-2.0-OpenSSH".to_vec()), Ok(Vec::new())], 0);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);

        let mut x = steps(vec![
            TcpStep::expect(pat("^220")),
            TcpStep::send(b"EHLO x\r\n".to_vec()),
            TcpStep::expect(pat("^250-STARTTLS")),
        ]);
        let mut p = peer(vec![Ok(b"220 hi\r\n250-x\r\n250 SIZE".to_vec()), Ok(Vec::new())], 100);
        assert_eq!(
            x.step(&mut p),
            ExchangeStep::NoMatch(
                "step 3 of 3: no line matched \"^250-STARTTLS\": the peer closed the connection, \
                 15 bytes received in this step: \"250-x\\r\\n250 SIZE\""
                    .into()
            )
        );
        assert_eq!(x.describe_timeout("1s").split(':').next(), Some("step 3 of 3"));

        // A peer that talks without end is read up to the run's bound, not for its timeout.
        let mut x = steps(vec![TcpStep::expect(pat("never"))]);
        let mut p = peer(vec![Ok(b"line\n".repeat(MAX_TCP_STEPS_READ / 4))], 0);
        match step_through(&mut x, &mut p) {
            ExchangeStep::NoMatch(m) => {
                assert!(
                    m.starts_with(
                        "step 1 of 1: no line matched \"never\": the steps read 1048576 bytes in \
                         all, 1048576 bytes received in this step: \"line\\nline"
                    ),
                    "{m}"
                );
                assert!(m.ends_with("\"..."), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!((x.reply().len(), x.read_total()), (MAX_REPLY, MAX_TCP_STEPS_READ));

        let mut x = steps(vec![TcpStep::expect(pat("^1")), TcpStep::expect(pat("^2"))]);
        let mut p = peer(vec![Ok(b"1\n".to_vec())], 0);
        assert_eq!(x.step(&mut p), ExchangeStep::Pending);
        assert_eq!(
            x.describe_timeout("5s"),
            "step 2 of 2: no line matched \"^2\": no match within 5s, 0 bytes received in this step: \"\""
        );
    }

    #[test]
    fn expect_bytes_compares_bytes_not_lines() {
        // A binary greeting with a `\n` inside, across reads, then a line for the next step:
        // exactly the expected bytes are taken, what follows is the next step's.
        let greeting = b"\x00\x01\nOK".to_vec();
        let mut x = steps(vec![
            TcpStep { send: b"HELLO\n".to_vec(), ..TcpStep::expect_bytes(greeting.clone()) },
            TcpStep::expect(pat("^ready$")),
        ]);
        let mut p = peer(vec![Ok(b"\x00\x01".to_vec()), Ok(b"\nOKready\r\n".to_vec())], 100);
        assert_eq!(x.step(&mut p), ExchangeStep::Matched);
        assert_eq!(p.written, b"HELLO\n");
        // Other bytes: the step fails, its message names the case and quotes what came.
        let mut x = steps(vec![TcpStep::expect_bytes(greeting.clone())]);
        let mut p = peer(vec![Ok(b"\x00\x02\nOK and more".to_vec())], 100);
        assert_eq!(
            x.step(&mut p),
            ExchangeStep::NoMatch(format!(
                "step 1 of 1: {} (\"\\x00\\x01\\nOK\"), 5 bytes received in this step: \"\\x00\\x02\\nOK\"",
                prober_core::TCP_BYTES_DIFFER
            ))
        );
        // Fewer bytes before the peer closes: a failure of its own kind.
        let mut x = steps(vec![TcpStep::expect_bytes(greeting)]);
        let mut p = peer(vec![Ok(b"\x00".to_vec()), Ok(Vec::new())], 100);
        assert_eq!(
            x.step(&mut p),
            ExchangeStep::NoMatch(
                "step 1 of 1: the peer closed the connection after 1 of the 5 expected bytes, 1 \
                 bytes received in this step: \"\\x00\""
                    .into()
            )
        );
    }
}
