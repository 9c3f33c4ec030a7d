//! One run's echoes, without I/O: which requests went out when, which replies and errors are
//! its own (matched by id, sequence, address and payload), and the statistics at the end.
//!
//! Kept apart from the socket on purpose: a socket shared by many runs (see the crate
//! documentation) hands each received message to the run its (id, sequence) names, and that
//! run's [`Echoes`] decides the rest exactly as it does on a socket of its own.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use prober_core::{EchoStats, IcmpError};

/// The data of a run's requests: `payload_size` bytes that begin with the run's random
/// `cookie`.
pub(crate) fn payload(cookie: u64, payload_size: usize) -> Vec<u8> {
    const TEXT: &[u8] = b"libprober echo ";
    let mut pattern = [0u8; 8 + TEXT.len()];
    pattern[..8].copy_from_slice(&cookie.to_be_bytes());
    pattern[8..].copy_from_slice(TEXT);
    let mut data = Vec::with_capacity(payload_size + pattern.len());
    while data.len() < payload_size {
        data.extend_from_slice(&pattern);
    }
    data.truncate(payload_size);
    data
}

/// What became of one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fate {
    /// Sent, nothing back yet.
    Waiting(Instant),
    /// Answered after this round-trip time, with the reply's hop limit.
    Answered(Duration, Option<u8>),
    /// An ICMP error came back for it.
    Failed(IcmpError),
    /// The send itself failed (no route, message too long).
    NotSent,
}

/// The requests of one run and what became of them.
#[derive(Debug)]
pub(crate) struct Echoes {
    dst: IpAddr,
    pub(crate) id: u16,
    first_seq: u16,
    /// The data every request carries: a random cookie, so that a reply to another run (or a
    /// `ping` beside us) with the same id and sequence is still not taken for ours.
    pub(crate) data: Vec<u8>,
    pub(crate) fates: Vec<Fate>,
    want: usize,
}

impl Echoes {
    /// `want` requests to `dst` with echo id `id`, the first of sequence `first_seq`, each
    /// carrying `payload_size` bytes that begin with `cookie`.
    #[cfg(test)]
    pub(crate) fn new(
        dst: IpAddr,
        id: u16,
        first_seq: u16,
        want: usize,
        payload_size: usize,
        cookie: u64,
    ) -> Echoes {
        Echoes::with_data(dst, id, first_seq, want, payload(cookie, payload_size))
    }

    /// `want` requests to `dst` with echo id `id`, the first of sequence `first_seq`, each
    /// carrying `data` (made by [`payload`]).
    pub(crate) fn with_data(
        dst: IpAddr,
        id: u16,
        first_seq: u16,
        want: usize,
        data: Vec<u8>,
    ) -> Echoes {
        Echoes { dst, id, first_seq, data, fates: Vec::with_capacity(want), want }
    }

    /// The sequence number of the next request, if one is left to send.
    pub(crate) fn next_seq(&self) -> Option<u16> {
        (self.fates.len() < self.want).then(|| self.first_seq.wrapping_add(self.fates.len() as u16))
    }

    /// Records the next request as sent at `at` (or its send as failed).
    pub(crate) fn sent(&mut self, at: Option<Instant>) {
        self.fates.push(at.map_or(Fate::NotSent, Fate::Waiting));
    }

    /// The index of the request `id`/`seq`, when it is one of ours still waiting.
    fn waiting(&self, id: u16, seq: u16) -> Option<usize> {
        if id != self.id {
            return None;
        }
        let i = usize::from(seq.wrapping_sub(self.first_seq));
        matches!(self.fates.get(i), Some(Fate::Waiting(_))).then_some(i)
    }

    /// Takes a reply if it answers one of our waiting requests; says whether it did.
    pub(crate) fn reply(
        &mut self,
        from: IpAddr,
        id: u16,
        seq: u16,
        data: &[u8],
        at: Instant,
        hop_limit: Option<u8>,
    ) -> bool {
        if data != self.data.as_slice() {
            return false;
        }
        self.reply_checked(from, id, seq, at, hop_limit)
    }

    /// [`Echoes::reply`] for a reply whose data was already checked (a shared socket checks it
    /// before it wakes the run).
    pub(crate) fn reply_checked(
        &mut self,
        from: IpAddr,
        id: u16,
        seq: u16,
        at: Instant,
        hop_limit: Option<u8>,
    ) -> bool {
        if from != self.dst {
            return false;
        }
        let Some(i) = self.waiting(id, seq) else { return false };
        let Fate::Waiting(sent) = self.fates[i] else { return false };
        self.fates[i] = Fate::Answered(at.saturating_duration_since(sent), hop_limit);
        true
    }

    /// Takes an ICMP error about one of our waiting requests to `to` (the failed packet's
    /// destination, when known); says whether it did.
    pub(crate) fn error(
        &mut self,
        to: Option<IpAddr>,
        id: u16,
        seq: u16,
        error: IcmpError,
    ) -> bool {
        if to.is_some_and(|to| to != self.dst) {
            return false;
        }
        let Some(i) = self.waiting(id, seq) else { return false };
        self.fates[i] = Fate::Failed(error);
        true
    }

    /// Every request is sent and none is waiting any more.
    pub(crate) fn settled(&self) -> bool {
        self.fates.len() == self.want && !self.fates.iter().any(|f| matches!(f, Fate::Waiting(_)))
    }

    /// The statistics of the run as it stands (requests still waiting count as lost).
    pub(crate) fn stats(&self) -> EchoStats {
        let rtts: Vec<Duration> = self
            .fates
            .iter()
            .filter_map(|f| match f {
                Fate::Answered(rtt, _) => Some(*rtt),
                _ => None,
            })
            .collect();
        let sent = self.fates.len() as u32;
        let received = rtts.len() as u32;
        let (min, max) = (rtts.iter().min().copied(), rtts.iter().max().copied());
        let (avg, stddev) = if rtts.is_empty() {
            (None, None)
        } else {
            // As ping's mdev: the population standard deviation.
            let secs: Vec<f64> = rtts.iter().map(Duration::as_secs_f64).collect();
            let mean = secs.iter().sum::<f64>() / secs.len() as f64;
            let var = secs.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / secs.len() as f64;
            (Some(Duration::from_secs_f64(mean)), Some(Duration::from_secs_f64(var.sqrt())))
        };
        let reply_hop_limit = self.fates.iter().rev().find_map(|f| match f {
            Fate::Answered(_, hop) => *hop,
            _ => None,
        });
        let first_rtt = self.fates.iter().find_map(|f| match f {
            Fate::Answered(rtt, _) => Some(*rtt),
            _ => None,
        });
        let last_error = self.fates.iter().rev().find_map(|f| match f {
            Fate::Failed(e) => Some(*e),
            _ => None,
        });
        EchoStats { sent, received, min, avg, max, stddev, first_rtt, reply_hop_limit, last_error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn only_our_replies_count_and_stats_are_pings() {
        let dst = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let t0 = Instant::now();
        let mut e = Echoes::new(dst, 7, u16::MAX, 3, 20, 42);
        assert_eq!(e.data.len(), 20);
        assert_eq!(&e.data[..15], b"\0\0\0\0\0\0\0\x2alibprob");
        assert_eq!(payload(42, 50).len(), 50);
        assert_eq!(&payload(42, 50)[23..31], &42u64.to_be_bytes());
        for i in 0..3 {
            assert_eq!(e.next_seq(), Some(u16::MAX.wrapping_add(i)));
            e.sent(Some(t0));
        }
        assert_eq!(e.next_seq(), None);
        let data = e.data.clone();
        let other = vec![0u8; 20];
        assert!(!e.reply(dst, 8, u16::MAX, &data, t0, None), "another id");
        assert!(!e.reply(dst, 7, u16::MAX, &other, t0, None), "another payload (a ping beside us)");
        assert!(!e.reply(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 7, u16::MAX, &data, t0, None));
        assert!(!e.reply(dst, 7, 2, &data, t0, None), "a sequence not sent");
        assert!(e.reply(dst, 7, u16::MAX, &data, t0 + Duration::from_millis(10), Some(64)));
        assert!(!e.reply(dst, 7, u16::MAX, &data, t0, None), "a duplicate");
        assert!(e.reply(dst, 7, 0, &data, t0 + Duration::from_millis(30), Some(63)));
        assert!(!e.settled());
        let s = e.stats();
        assert_eq!((s.sent, s.received, s.reply_hop_limit), (3, 2, Some(63)));
        assert_eq!(
            (s.min, s.max, s.avg),
            (
                Some(Duration::from_millis(10)),
                Some(Duration::from_millis(30)),
                Some(Duration::from_millis(20))
            )
        );
        assert_eq!(s.stddev, Some(Duration::from_millis(10)));
        assert!((s.loss() - 1.0 / 3.0).abs() < 1e-9);
    }
}
