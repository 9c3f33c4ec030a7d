//! A loopback port that nothing listens on, for the tests of refused connections.

use std::net::{Ipv4Addr, TcpListener};

/// A loopback port with nothing listening: binds `127.0.0.1:0`, reads the port, closes it.
///
/// The port is chosen below the kernel's ephemeral range, so that no socket bound to port 0
/// (a test server, another process, a client's own end) can be given it while a test relies on
/// it being closed, and no connect to it can self-connect.
pub fn closed_port() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next().and_then(|p| p.parse::<u16>().ok()))
        .unwrap_or(32768);
    if low > 2048 {
        static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
        let span = low - 1024;
        let seed = (std::process::id() as u16).wrapping_mul(97);
        for _ in 0..2000 {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let port = 1024 + seed.wrapping_add(i.wrapping_mul(7919)) % span;
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return port;
            }
        }
    }
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("prober-testkit: bind 127.0.0.1:0");
    l.local_addr().expect("prober-testkit: local_addr").port()
}
