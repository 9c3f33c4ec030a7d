//! What a socket per probe costs beside one shared socket (issue 36): CPU time per echo to
//! 127.0.0.1 on a raw socket (root), three ways, each `ROUNDS` times:
//!
//! 1. `probe`: an `IcmpProbe` run to completion (its own socket and options, a private poll);
//! 2. `socket`: only opening, setting up (as the probe does) and closing a raw ICMP socket;
//! 3. `shared`: one echo request and its reply on one socket kept open (what each probe would
//!    cost the engine on a shared socket, less the dispatch).
//!
//! `cargo run --release -p prober-icmp --example socket_cost` (as root).

use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use prober_icmp::{IcmpProbe, IcmpSocket, IcmpSpec};
use socket2::{Domain, Protocol, Socket, Type};

const ROUNDS: u32 = 5_000;

/// CPU time of this process (user and system).
fn cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for writes for the whole call.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn per_round(label: &str, f: impl Fn()) {
    let start = cpu();
    for _ in 0..ROUNDS {
        f();
    }
    let each = (cpu() - start) / ROUNDS;
    println!("{label:8} {:>8.1} µs CPU per echo", each.as_secs_f64() * 1e6);
}

fn open_raw() -> Socket {
    let s = Socket::new(Domain::IPV4, Type::RAW.nonblocking(), Some(Protocol::ICMPV4))
        .expect("raw socket: run as root");
    s.set_ttl_v4(64).unwrap();
    s
}

fn main() {
    let mut spec = IcmpSpec::new("127.0.0.1");
    spec.socket = IcmpSocket::Raw;
    per_round("probe", || {
        let mut p = IcmpProbe::new(&spec, Duration::from_secs(1));
        let o = prober_io::run_to_completion(&mut p);
        assert_eq!(o.result, prober_core::ProbeResult::Success, "{o:?}");
    });
    per_round("socket", || drop(open_raw()));
    let shared = open_raw();
    shared.set_nonblocking(false).unwrap();
    shared.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let to = SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into();
    let seq = std::cell::Cell::new(0u16);
    per_round("shared", || {
        let s = seq.get().wrapping_add(1);
        seq.set(s);
        let mut msg = [8u8, 0, 0, 0, 0x12, 0x34, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        msg[6..8].copy_from_slice(&s.to_be_bytes());
        let mut sum: u32 = msg.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        msg[2..4].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        shared.send_to(&msg, &to).unwrap();
        let mut buf = [MaybeUninit::<u8>::uninit(); 256];
        // The request loops back first, then the reply: read until the reply.
        loop {
            let n = shared.recv(&mut buf).unwrap();
            // SAFETY: recv initialised the first n bytes; byte 20 is the ICMP type after a
            // 20-byte IPv4 header.
            if n > 20 && unsafe { buf[20].assume_init() } == 0 {
                break;
            }
        }
    });
}
