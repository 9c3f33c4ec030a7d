//! TCP send/expect (HAProxy `tcp-check send`/`expect rstring`, Envoy's `tcp_health_check`,
//! blackbox_exporter's `query_response`): once connected, write the spec's bytes, then read
//! until the reply matches the expected regular expression, the peer closes, or
//! [`MAX_REPLY`] bytes arrived without a match.
//!
//! The exchange is written over any non-blocking `Read + Write`, so the rules are tested here
//! without sockets; [`crate::TcpProbe`] drives it on its connection (edge-triggered readiness:
//! every call reads and writes until the socket would block).

use std::io::{self, Read, Write};

use prober_core::{DEFAULT_OUTPUT_LIMIT, Pattern};
use prober_io::retry_interrupted;

/// The most reply bytes read and kept (the kubelet's `maxReadLength`, as for HTTP bodies).
pub const MAX_REPLY: usize = DEFAULT_OUTPUT_LIMIT;
/// How much of the reply a failure message quotes (the whole reply is in the outcome's output).
const QUOTED: usize = 200;

/// Where an exchange stands after a step.
#[derive(Debug)]
pub enum ExchangeStep {
    /// Waiting for the socket (writable to send more, readable for the reply).
    Pending,
    /// Sent everything and the reply matched (or nothing was to be read).
    Matched,
    /// The peer closed, or [`MAX_REPLY`] bytes arrived, without a match: the message says
    /// what arrived.
    NoMatch(String),
    /// A socket error while writing (`"write"`) or reading (`"read"`).
    Failed(&'static str, io::Error),
}

/// Equal when of the same kind with the same message, or the same operation and error kind.
impl PartialEq for ExchangeStep {
    fn eq(&self, other: &ExchangeStep) -> bool {
        match (self, other) {
            (ExchangeStep::Pending, ExchangeStep::Pending) => true,
            (ExchangeStep::Matched, ExchangeStep::Matched) => true,
            (ExchangeStep::NoMatch(a), ExchangeStep::NoMatch(b)) => a == b,
            (ExchangeStep::Failed(a, e), ExchangeStep::Failed(b, f)) => {
                a == b && e.kind() == f.kind()
            }
            _ => false,
        }
    }
}

#[derive(Debug)]
/// The send/expect part of a TCP probe on a connected socket: writes the data to send, then
/// reads the reply until the expected expression matches, the peer closes, or [`MAX_REPLY`]
/// bytes arrived.
pub struct Exchange {
    send: Vec<u8>,
    sent: usize,
    expect: Option<Pattern>,
    reply: Vec<u8>,
}

impl Exchange {
    /// An exchange that sends `send` (may be empty) and, with `expect`, reads a reply that must
    /// match it.
    pub fn new(send: Vec<u8>, expect: Option<Pattern>) -> Exchange {
        Exchange { send, sent: 0, expect, reply: Vec::new() }
    }

    /// The reply bytes read so far (at most [`MAX_REPLY`]).
    pub fn reply(&self) -> &[u8] {
        &self.reply
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
    /// or the exchange is decided.
    pub fn step(&mut self, io: &mut (impl Read + Write)) -> ExchangeStep {
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
}
