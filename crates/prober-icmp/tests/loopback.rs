//! Echoes to 127.0.0.1 and ::1 on real sockets: raw in the host's namespace (root), and both
//! kinds in a namespace of the test's own where it sets `net.ipv4.ping_group_range` (needs
//! root and iproute2, as CI has: without them these tests fail, saying so).

mod common;

use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, Reason};
use prober_icmp::{IcmpSocket, IcmpSocketKind, IcmpSpec};
use prober_testkit::netns::TestNetns;

fn assert_answered(host: &str, socket: IcmpSocket, kind: IcmpSocketKind) {
    let (o, facts) = ping(&spec(host, socket), ANSWERED);
    assert_eq!(o.result, ProbeResult::Success, "{host} over {kind:?}: {o:?}");
    assert_eq!(facts.socket, Some(kind));
    assert_eq!((facts.stats.sent, facts.stats.received), (1, 1), "{facts:?}");
    assert!(facts.stats.first_rtt.is_some() && o.timings.first_byte.is_some(), "{facts:?}");
    // Loopback replies leave with the default TTL (64) and pass no router.
    assert_eq!(facts.stats.reply_hop_limit, Some(64), "{facts:?}");
    assert_eq!(o.peer.map(|p| p.ip().to_string()), Some(host.to_string()));
}

#[test]
fn raw_sockets_answer_on_both_loopbacks() {
    assert_answered("127.0.0.1", IcmpSocket::Raw, IcmpSocketKind::Raw);
    assert_answered("::1", IcmpSocket::Raw, IcmpSocketKind::Raw);
    // An IPv4-mapped address is pinged over IPv4.
    let (o, _) = ping(&spec("::ffff:127.0.0.1", IcmpSocket::Raw), ANSWERED);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.peer.map(|p| p.ip().to_string()).as_deref(), Some("127.0.0.1"), "{o:?}");
}

#[test]
fn unprivileged_sockets_where_ping_group_range_admits_us() {
    let ns = TestNetns::new("icmp-dgram");
    ns.run_in(|| {
        ping_group_range(true);
        assert_answered("127.0.0.1", IcmpSocket::Unprivileged, IcmpSocketKind::Unprivileged);
        assert_answered("::1", IcmpSocket::Unprivileged, IcmpSocketKind::Unprivileged);
        // Auto takes the unprivileged socket when it may.
        assert_answered("127.0.0.1", IcmpSocket::Auto, IcmpSocketKind::Unprivileged);
        // Where the range leaves us out, Auto falls back to raw; Unprivileged alone says why.
        ping_group_range(false);
        assert_answered("::1", IcmpSocket::Auto, IcmpSocketKind::Raw);
        let (o, _) = ping(&spec("127.0.0.1", IcmpSocket::Unprivileged), ANSWERED);
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Io), "{o:?}");
        assert!(o.message.contains("ping_group_range"), "{}", o.message);
    });
}

#[test]
fn neither_socket_allowed_names_both_ways_and_the_sysctl() {
    let ns = TestNetns::new("icmp-neither");
    ns.run_in(|| {
        ping_group_range(false);
        drop_net_raw();
        let (o, facts) = ping(&spec("127.0.0.1", IcmpSocket::Auto), ANSWERED);
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Io), "{o:?}");
        for needle in ["unprivileged", "net.ipv4.ping_group_range", "raw", "CAP_NET_RAW"] {
            assert!(o.message.contains(needle), "{needle:?} not in {:?}", o.message);
        }
        assert_eq!((facts.socket, facts.stats.sent), (None, 0));
    });
}

/// Takes CAP_NET_RAW out of the calling thread's effective set (capabilities are a thread's
/// own on Linux; the thread ends with the test's closure).
fn drop_net_raw() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header { version: VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: capget reads the header and writes two Data records (version 3), both valid
    // for the call.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    assert_eq!(r, 0, "capget: {}", std::io::Error::last_os_error());
    const CAP_NET_RAW: u32 = 13; // <linux/capability.h>
    data[0].effective &= !(1 << CAP_NET_RAW);
    // SAFETY: as above; capset only reads them, and changes this thread alone.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    assert_eq!(r, 0, "capset: {}", std::io::Error::last_os_error());
}

#[test]
fn several_packets_report_loss_and_rtt_statistics() {
    for host in ["127.0.0.1", "::1"] {
        let mut s = IcmpSpec::new(host);
        s.socket = IcmpSocket::Raw;
        s.packets = 5;
        s.interval = Duration::from_millis(10);
        s.payload_size = 1000;
        s.validate().unwrap();
        let (o, facts) = ping(&s, ANSWERED);
        assert_eq!(o.result, ProbeResult::Success, "{o:?}");
        let st = facts.stats;
        assert_eq!((st.sent, st.received, st.loss()), (5, 5, 0.0), "{st:?}");
        let (min, avg, max) = (st.min.unwrap(), st.avg.unwrap(), st.max.unwrap());
        assert!(min <= avg && avg <= max, "{st:?}");
        assert!(st.stddev.unwrap() <= max - min, "{st:?}");
    }
}

#[test]
fn a_source_address_ttl_and_dont_fragment_are_applied() {
    let mut s = IcmpSpec::new("127.0.0.1");
    s.socket = IcmpSocket::Raw;
    s.connect.source_address = Some("127.0.0.1".parse().unwrap());
    s.ttl = Some(3);
    s.dont_fragment = true;
    let (o, facts) = ping(&s, ANSWERED);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    // The reply is the kernel's, with its own default TTL, not ours.
    assert_eq!(facts.stats.reply_hop_limit, Some(64));
    // With DF, a request over loopback's MTU (65536) cannot be sent at all.
    s.payload_size = prober_icmp::MAX_PAYLOAD_SIZE;
    let (o, _) = ping(&s, ANSWERED);
    assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
    assert!(o.message.contains("sendto"), "{o:?}");
    // A source this host does not have.
    let mut s = IcmpSpec::new("127.0.0.1");
    s.connect.source_address = Some("192.0.2.1".parse().unwrap());
    s.socket = IcmpSocket::Raw;
    let (o, _) = ping(&s, ANSWERED);
    assert_ne!(o.result, ProbeResult::Success, "{o:?}");
    assert!(o.message.contains("bind"), "{o:?}");
}
