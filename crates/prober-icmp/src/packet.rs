//! ICMP and ICMPv6 echo messages on the wire, without I/O: the request we send, and what a
//! received datagram says about one of our echoes (its reply, or an error a router or the
//! target sent back about it).
//!
//! Layouts (RFC 792, RFC 4443): an echo is `type code checksum(2) id(2) seq(2) data...`. An
//! error (destination unreachable, time exceeded, packet too big) carries after its own 8
//! bytes the offending packet's IP header and at least the first 8 bytes of its payload,
//! which for our echo are its type, id and sequence.

/// ICMP (IPv4) message types.
pub(crate) mod v4 {
    pub(crate) const ECHO_REPLY: u8 = 0;
    pub(crate) const DEST_UNREACHABLE: u8 = 3;
    pub(crate) const ECHO_REQUEST: u8 = 8;
    pub(crate) const TIME_EXCEEDED: u8 = 11;
}

/// ICMPv6 message types.
pub(crate) mod v6 {
    pub(crate) const DEST_UNREACHABLE: u8 = 1;
    pub(crate) const PACKET_TOO_BIG: u8 = 2;
    pub(crate) const TIME_EXCEEDED: u8 = 3;
    pub(crate) const ECHO_REQUEST: u8 = 128;
    pub(crate) const ECHO_REPLY: u8 = 129;
    /// The IPv6 next-header number of ICMPv6.
    pub(crate) const NEXT_HEADER_ICMPV6: u8 = 58;
}

/// Length of an echo's header before its data.
pub(crate) const ECHO_HEADER: usize = 8;

/// An echo request of `id` and `seq` carrying `data`. The checksum is computed for ICMP
/// (IPv4); ICMPv6's covers a pseudo-header with addresses the kernel picks, so the kernel
/// fills it in (it always does for ICMPv6 sockets, raw or not).
pub(crate) fn echo_request(ipv6: bool, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(ECHO_HEADER + data.len());
    msg.push(if ipv6 { v6::ECHO_REQUEST } else { v4::ECHO_REQUEST });
    msg.push(0);
    msg.extend_from_slice(&[0, 0]);
    msg.extend_from_slice(&id.to_be_bytes());
    msg.extend_from_slice(&seq.to_be_bytes());
    msg.extend_from_slice(data);
    if !ipv6 {
        let sum = checksum(&msg);
        msg[2..4].copy_from_slice(&sum.to_be_bytes());
    }
    msg
}

/// The Internet checksum (RFC 1071) of `bytes`.
pub(crate) fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for pair in &mut chunks {
        sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// What one received message says about an echo (ours or not: the caller matches).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Message<'a> {
    /// An echo reply.
    Reply { id: u16, seq: u16, data: &'a [u8] },
    /// An error about the echo request `id`/`seq` (type and code; the sender is the datagram's
    /// source).
    Error { kind: u8, code: u8, id: u16, seq: u16 },
    /// Anything else (other ICMP traffic a raw socket sees, a truncated message).
    Other,
}

/// Reads one message as a socket returns it: `with_ip_header` for a raw IPv4 socket, whose
/// datagrams begin with the IPv4 header; every other kind gives the ICMP message alone.
pub(crate) fn parse(ipv6: bool, with_ip_header: bool, datagram: &[u8]) -> Message<'_> {
    let msg = if with_ip_header {
        match skip_ipv4_header(datagram) {
            Some(rest) => rest,
            None => return Message::Other,
        }
    } else {
        datagram
    };
    if msg.len() < ECHO_HEADER {
        return Message::Other;
    }
    let (kind, code) = (msg[0], msg[1]);
    let reply = if ipv6 { v6::ECHO_REPLY } else { v4::ECHO_REPLY };
    if kind == reply && code == 0 {
        let (id, seq) = id_seq(msg);
        return Message::Reply { id, seq, data: &msg[ECHO_HEADER..] };
    }
    let is_error = if ipv6 {
        matches!(kind, v6::DEST_UNREACHABLE | v6::PACKET_TOO_BIG | v6::TIME_EXCEEDED)
    } else {
        matches!(kind, v4::DEST_UNREACHABLE | v4::TIME_EXCEEDED)
    };
    if !is_error {
        return Message::Other;
    }
    // The offending packet: its IP header, then our echo's first bytes.
    let inner = &msg[ECHO_HEADER..];
    let echo = if ipv6 { skip_ipv6_icmp_header(inner) } else { skip_ipv4_header(inner) };
    match echo.and_then(offending_echo) {
        Some((id, seq)) => Message::Error { kind, code, id, seq },
        None => Message::Other,
    }
}

/// The id and sequence of an echo request at the start of `msg` (the error queue's data, or
/// an error message's quoted packet), if it is one.
pub(crate) fn offending_echo(msg: &[u8]) -> Option<(u16, u16)> {
    if msg.len() < ECHO_HEADER || !matches!(msg[0], v4::ECHO_REQUEST | v6::ECHO_REQUEST) {
        return None;
    }
    Some(id_seq(msg))
}

fn id_seq(msg: &[u8]) -> (u16, u16) {
    (u16::from_be_bytes([msg[4], msg[5]]), u16::from_be_bytes([msg[6], msg[7]]))
}

/// What follows an IPv4 header (its length from IHL), when the header is one of ICMP.
fn skip_ipv4_header(packet: &[u8]) -> Option<&[u8]> {
    let first = *packet.first()?;
    let len = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || len < 20 || packet.len() < len || packet[9] != 1 {
        return None;
    }
    Some(&packet[len..])
}

/// What follows a quoted IPv6 header whose next header is ICMPv6 (an echo with extension
/// headers is not one we sent).
fn skip_ipv6_icmp_header(packet: &[u8]) -> Option<&[u8]> {
    if packet.len() < 40 || packet[0] >> 4 != 6 || packet[6] != v6::NEXT_HEADER_ICMPV6 {
        return None;
    }
    Some(&packet[40..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_checksums_to_zero() {
        let msg = echo_request(false, 0x1234, 7, b"abc");
        assert_eq!(&msg[..2], &[8, 0]);
        assert_eq!(checksum(&msg), 0, "a message with its checksum sums to zero");
        assert_eq!(parse(false, false, &msg), Message::Other, "a request is not a reply");
    }

    #[test]
    fn errors_name_the_echo_they_quote() {
        // Time exceeded carrying an IPv4 header and our echo's first 8 bytes.
        let mut err = vec![11, 0, 0, 0, 0, 0, 0, 0];
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 1, 1];
        ip.resize(20, 0);
        err.extend_from_slice(&ip);
        err.extend_from_slice(&echo_request(false, 9, 10, b"")[..8]);
        assert_eq!(parse(false, false, &err), Message::Error { kind: 11, code: 0, id: 9, seq: 10 });
        // Truncated: nothing of ours.
        assert_eq!(parse(false, false, &err[..30]), Message::Other);
        // A raw socket's datagram with its own IPv4 header in front.
        let mut raw = ip.clone();
        raw.extend_from_slice(&err);
        assert_eq!(parse(false, true, &raw), Message::Error { kind: 11, code: 0, id: 9, seq: 10 });
    }

    /// Hostile input (anyone on the path can send ICMP to a raw socket): every prefix of
    /// valid messages, and pseudo-random bytes with a valid first byte, read without a panic.
    #[test]
    fn any_bytes_are_read_without_a_panic() {
        let mut reply = echo_request(false, 1, 2, b"data");
        reply[0] = v4::ECHO_REPLY;
        let mut err = vec![v6::TIME_EXCEEDED, 0, 0, 0, 0, 0, 0, 0, 0x60, 0, 0, 0, 0, 0, 58];
        err.resize(48, 0);
        err.extend_from_slice(&echo_request(true, 3, 4, b"")[..8]);
        for msg in [&reply, &err] {
            for n in 0..=msg.len() {
                for ipv6 in [false, true] {
                    for header in [false, true] {
                        let _ = parse(ipv6, header, &msg[..n]);
                    }
                }
            }
        }
        assert_eq!(parse(true, false, &err), Message::Error { kind: 3, code: 0, id: 3, seq: 4 });
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..20_000u32 {
            let len = (round % 96) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let mut bytes = bytes;
            if let Some(b) = bytes.first_mut() {
                *b = [0x45, 3, 11, 1, 3, 129][round as usize % 6];
            }
            for ipv6 in [false, true] {
                for header in [false, true] {
                    let _ = parse(ipv6, header, &bytes);
                }
            }
        }
    }
}
