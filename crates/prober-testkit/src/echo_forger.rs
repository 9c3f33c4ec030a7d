//! A forger of ICMP echo replies, for the tests that a reply which is not a run's own is
//! ignored: it answers every echo request it sees with a reply of the same id and sequence,
//! as another prober or a `ping` with the same id beside the probe would. Made in a namespace
//! of the test's own where the kernel answers none (`icmp_echo_ignore_all`), its replies are
//! the only ones.
//!
//! It reads requests on a raw ICMPv4 socket, which needs root (CI runs as root): without it
//! [`EchoForger::start`] panics, saying so.

use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

/// How long a forger answers at most, should the test fail before it stops it.
const MAX_LIFE: Duration = Duration::from_secs(30);

/// A thread answering echo requests to 127.0.0.1 with forged replies, until
/// [`EchoForger::stop`] (or dropped, or 30 s passed, should the test fail before it stops it).
///
/// Stop one before another starts in the same namespace: one still running would answer the
/// other's requests too.
#[derive(Debug)]
pub struct EchoForger {
    stop: Arc<AtomicBool>,
    forged: Arc<AtomicU32>,
    thread: Option<JoinHandle<()>>,
}

impl EchoForger {
    /// Starts answering the requests seen in the calling thread's network namespace (run it
    /// inside [`crate::netns::TestNetns::run_in`] for another one: the socket stays where it
    /// was made). Each reply has its request's id and sequence, and its data copied when
    /// `copy_data`, else each byte of it flipped.
    ///
    /// # Panics
    ///
    /// When the raw socket cannot be made (not root).
    pub fn start(copy_data: bool) -> EchoForger {
        let socket = Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4))
            .unwrap_or_else(|e| panic!("cannot make a raw ICMP socket (root needed): {e}"));
        // Bounds each read, so that the thread sees `stop` soon after it is set.
        socket.set_read_timeout(Some(Duration::from_millis(20))).expect("read timeout");
        let stop = Arc::new(AtomicBool::new(false));
        let forged = Arc::new(AtomicU32::new(0));
        let thread = {
            let (stop, forged) = (stop.clone(), forged.clone());
            std::thread::spawn(move || answer(&socket, copy_data, &stop, &forged))
        };
        EchoForger { stop, forged, thread: Some(thread) }
    }

    /// Stops answering (the thread is joined); how many replies were sent.
    ///
    /// # Panics
    ///
    /// When the forger's thread panicked.
    pub fn stop(mut self) -> u32 {
        assert!(self.halt(), "the forger's thread panicked");
        self.forged.load(Ordering::Relaxed)
    }

    /// Tells the thread to stop and joins it; whether it ended without a panic.
    fn halt(&mut self) -> bool {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().is_none_or(|thread| thread.join().is_ok())
    }
}

impl Drop for EchoForger {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The forger's loop: each echo request read on `socket` answered, until `stop`.
fn answer(socket: &Socket, copy_data: bool, stop: &AtomicBool, forged: &AtomicU32) {
    let mut buf = [MaybeUninit::<u8>::uninit(); 2048];
    let end = Instant::now() + MAX_LIFE;
    while !stop.load(Ordering::Relaxed) && Instant::now() < end {
        let Ok(n) = socket.recv(&mut buf) else { continue };
        // SAFETY: recv initialised the first n bytes.
        let packet: Vec<u8> = buf[..n].iter().map(|b| unsafe { b.assume_init() }).collect();
        let Some(reply) = forged_reply(&packet, copy_data) else { continue };
        let to = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        if socket.send_to(&reply, &to.into()).is_ok() {
            forged.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The reply to `packet` (an IPv4 packet, as a raw socket reads it) when it is an echo
/// request: the request's ICMP message made a reply, with its data copied or flipped.
fn forged_reply(packet: &[u8], copy_data: bool) -> Option<Vec<u8>> {
    let ihl = usize::from(packet.first()? & 0x0f) * 4;
    let msg = packet.get(ihl..)?;
    if msg.len() < 8 || msg[0] != 8 {
        return None;
    }
    let mut reply = msg.to_vec();
    reply[0] = 0;
    reply[2..4].fill(0);
    if !copy_data {
        reply[8..].iter_mut().for_each(|b| *b = !*b);
    }
    let sum = checksum(&reply);
    reply[2..4].copy_from_slice(&sum.to_be_bytes());
    Some(reply)
}

/// The Internet checksum (RFC 1071) of `bytes`.
fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply's checksum makes the whole message sum to 0xffff (RFC 1071's check), and a
    /// request that is not an echo request gets none.
    #[test]
    fn a_forged_reply_is_an_echo_reply_with_a_valid_checksum() {
        // 20 bytes of IPv4 header (IHL 5), then an echo request: id 0x1234, sequence 7, data.
        let mut packet = vec![0x45; 1];
        packet.extend([0u8; 19]);
        packet.extend([8, 0, 0, 0, 0x12, 0x34, 0, 7, b'a', b'b', b'c']);
        let reply = forged_reply(&packet, true).unwrap();
        assert_eq!(&reply[..2], &[0, 0]);
        assert_eq!(&reply[4..], &[0x12, 0x34, 0, 7, b'a', b'b', b'c']);
        assert_eq!(checksum(&reply), 0);
        let flipped = forged_reply(&packet, false).unwrap();
        assert_eq!(&flipped[8..], &[!b'a', !b'b', !b'c']);
        assert_eq!(checksum(&flipped), 0);
        packet[20] = 0; // an echo reply: not answered
        assert_eq!(forged_reply(&packet, true), None);
    }
}
