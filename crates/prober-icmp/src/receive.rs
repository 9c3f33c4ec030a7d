//! One received datagram read as what it says about an echo: a reply, or an ICMP error about a
//! request (from the error queue of an unprivileged socket, or read as an ICMP message by a
//! raw one). Shared by a run's own socket and the sockets many runs share.

use std::io;
use std::net::IpAddr;
use std::time::Instant;

use prober_core::{IcmpError, IcmpSocketKind};

use crate::packet::{self, Message};
use crate::socket::EchoSocket;

/// What one datagram said about an echo (not yet matched to a run).
#[derive(Debug)]
pub(crate) enum Received<'a> {
    /// An echo reply from `from`, with its data (a slice of the read buffer).
    Reply { from: IpAddr, id: u16, seq: u16, data: &'a [u8], at: Instant, hop_limit: Option<u8> },
    /// An ICMP error about the request `id`/`seq`, sent to `to` when the kernel says.
    Error { to: Option<IpAddr>, id: u16, seq: u16, error: IcmpError },
}

impl Received<'_> {
    /// The echo id and sequence the message is about.
    pub(crate) fn id_seq(&self) -> (u16, u16) {
        match *self {
            Received::Reply { id, seq, .. } | Received::Error { id, seq, .. } => (id, seq),
        }
    }
}

/// Reads one datagram from `socket` (the error queue first on an unprivileged socket) into
/// `buf`: `Err(WouldBlock)` when there is none, `Ok(None)` for one that is not about an echo
/// (other ICMP traffic a raw socket sees, a truncated message, a pending socket error).
pub(crate) fn receive<'b>(
    socket: &EchoSocket,
    buf: &'b mut [u8],
) -> io::Result<Option<Received<'b>>> {
    let from_queue = socket.kind == IcmpSocketKind::Unprivileged;
    let got = if from_queue {
        match socket.recv_error(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => socket.recv(buf).map(|d| (d, false)),
            r => r.map(|d| (d, true)),
        }
    } else {
        socket.recv(buf).map(|d| (d, false))
    };
    let (dgram, queued) = match got {
        Ok(x) => x,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(e),
        // A pending socket error (an ICMP error when IP_RECVERR is off) or a truncated
        // message: nothing to match.
        Err(_) => return Ok(None),
    };
    let at = Instant::now();
    let data = &buf[..dgram.len.min(buf.len())];
    if queued {
        let Some((kind, code, by)) = dgram.icmp else { return Ok(None) };
        let Some((id, seq)) = packet::offending_echo(data) else { return Ok(None) };
        let Some(from) = by.or(dgram.from) else { return Ok(None) };
        let error = IcmpError { ipv6: socket.ipv6, kind, code, from };
        return Ok(Some(Received::Error { to: dgram.from, id, seq, error }));
    }
    let Some(from) = dgram.from else { return Ok(None) };
    let raw_v4 = socket.kind == IcmpSocketKind::Raw && !socket.ipv6;
    Ok(match packet::parse(socket.ipv6, raw_v4, data) {
        Message::Reply { id, seq, data } => {
            Some(Received::Reply { from, id, seq, data, at, hop_limit: dgram.hop_limit })
        }
        Message::Error { kind, code, id, seq } => {
            let error = IcmpError { ipv6: socket.ipv6, kind, code, from };
            // The quoted packet's destination is not checked here: the id, the sequence and a
            // waiting request are; a raw socket sees every error.
            Some(Received::Error { to: None, id, seq, error })
        }
        Message::Other => None,
    })
}
