//! Replies that are not the run's own are ignored: a forger beside the probe (as another
//! prober or a `ping` with the same id would be) answers every echo request it sees on
//! 127.0.0.1 with a reply of the same id and sequence, in a namespace of the test's own where
//! the kernel answers none (`icmp_echo_ignore_all`). With the request's data copied the probe
//! takes the reply (so the forger works); with other data it does not, and times out. Needs
//! root and iproute2, as CI has: without them these tests fail, saying so.

mod common;

use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, Reason};
use prober_icmp::IcmpSocket;
use prober_testkit::netns::TestNetns;
use socket2::{Domain, Protocol, Socket, Type};

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

/// Answers each echo request seen on a raw socket with a forged reply until `stop` (or, should
/// the test fail before it says so, for 30 s at most); counts the replies sent.
fn forge(
    copy_data: bool,
    stop: Arc<AtomicBool>,
    forged: Arc<AtomicU32>,
) -> std::thread::JoinHandle<()> {
    let socket =
        Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4)).expect("raw socket (root)");
    socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    std::thread::spawn(move || {
        let mut buf = [MaybeUninit::<u8>::uninit(); 2048];
        let end = std::time::Instant::now() + Duration::from_secs(30);
        while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < end {
            let Ok(n) = socket.recv(&mut buf) else { continue };
            // SAFETY: recv initialised the first n bytes.
            let packet: Vec<u8> = buf[..n].iter().map(|b| unsafe { b.assume_init() }).collect();
            let ihl = usize::from(packet[0] & 0x0f) * 4;
            let msg = &packet[ihl..];
            if msg.len() < 8 || msg[0] != 8 {
                continue;
            }
            let mut reply = msg.to_vec();
            reply[0] = 0;
            reply[2..4].fill(0);
            if !copy_data {
                for b in &mut reply[8..] {
                    *b = !*b;
                }
            }
            let sum = checksum(&reply);
            reply[2..4].copy_from_slice(&sum.to_be_bytes());
            let to = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
            if socket.send_to(&reply, &to.into()).is_ok() {
                forged.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
}

fn with_forger(copy_data: bool, unprivileged: bool) -> (prober_core::Outcome, u32) {
    let ns = TestNetns::new("icmp-beside");
    ns.run_in(move || {
        sysctl("net/ipv4/icmp_echo_ignore_all", "1");
        ping_group_range(unprivileged);
        let stop = Arc::new(AtomicBool::new(false));
        let forged = Arc::new(AtomicU32::new(0));
        let forger = forge(copy_data, stop.clone(), forged.clone());
        let (o, _) = ping(&spec("127.0.0.1", IcmpSocket::Auto), Duration::from_millis(500));
        stop.store(true, Ordering::Relaxed);
        forger.join().unwrap();
        (o, forged.load(Ordering::Relaxed))
    })
}

#[test]
fn a_reply_with_our_id_and_sequence_but_other_data_is_not_ours() {
    for unprivileged in [true, false] {
        let (o, forged) = with_forger(true, unprivileged);
        assert_eq!(o.result, ProbeResult::Success, "the forger's copy is taken: {o:?}");
        assert!(forged >= 1);
        let (o, forged) = with_forger(false, unprivileged);
        assert!(forged >= 1, "the forger answered");
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    }
}
