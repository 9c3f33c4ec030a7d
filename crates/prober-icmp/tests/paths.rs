//! Echoes across a router in namespaces the test makes (see `common::Lab`): answered, dropped
//! (a timeout), refused with destination unreachable, and expired on the way (time exceeded),
//! over IPv4 and IPv6, on both socket kinds. Needs root and iproute2, as CI has: without them
//! these tests fail, saying so; they never skip.

mod common;

use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, Reason};
use prober_icmp::{IcmpSocket, IcmpSocketKind, IcmpSpec};

/// Both socket kinds, as (the choice, whether the namespace admits unprivileged sockets,
/// the kind expected).
const KINDS: [(IcmpSocket, bool, IcmpSocketKind); 2] = [
    (IcmpSocket::Auto, true, IcmpSocketKind::Unprivileged),
    (IcmpSocket::Auto, false, IcmpSocketKind::Raw),
];

#[test]
fn the_router_answers_with_its_hop_limit() {
    let lab = Lab::new("icmp-answer");
    for (choice, unprivileged, kind) in KINDS {
        for host in [Lab::ROUTER4, Lab::ROUTER6] {
            let (o, facts) = lab.ping(&spec(host, choice), ANSWERED, unprivileged);
            assert_eq!(o.result, ProbeResult::Success, "{host} {kind:?}: {o:?}");
            assert_eq!(facts.socket, Some(kind));
            assert_eq!(facts.stats.reply_hop_limit, Some(64), "{facts:?}");
        }
    }
}

#[test]
fn a_dropped_echo_times_out() {
    let lab = Lab::new("icmp-drop");
    let timeout = Duration::from_millis(300);
    for (choice, unprivileged, kind) in KINDS {
        for host in [Lab::DROPPED4, Lab::DROPPED6] {
            let (o, facts) = lab.ping(&spec(host, choice), timeout, unprivileged);
            assert_eq!(
                (o.result, o.reason),
                (ProbeResult::Failure, Reason::Timeout),
                "{host} {kind:?}: {o:?}"
            );
            assert_eq!((facts.stats.sent, facts.stats.received), (1, 0));
            assert_eq!(facts.stats.first_rtt, None);
        }
    }
}

#[test]
fn a_prohibited_destination_fails_unreachable_naming_the_router() {
    let lab = Lab::new("icmp-reject");
    for (choice, unprivileged, kind) in KINDS {
        for (host, router) in [(Lab::PROHIBITED4, Lab::ROUTER4), (Lab::PROHIBITED6, Lab::ROUTER6)] {
            let (o, facts) = lab.ping(&spec(host, choice), ANSWERED, unprivileged);
            assert_eq!(
                (o.result, o.reason),
                (ProbeResult::Failure, Reason::Unreachable),
                "{host} {kind:?}: {o:?}"
            );
            assert!(o.message.contains("prohibited"), "{o:?}");
            assert!(o.message.contains(&format!("from {router}")), "{o:?}");
            let error = facts.stats.last_error.expect("the ICMP error is kept");
            assert!(!error.is_time_exceeded(), "{error:?}");
        }
    }
}

#[test]
fn an_expiring_ttl_fails_with_time_exceeded() {
    let lab = Lab::new("icmp-ttl");
    for (choice, unprivileged, kind) in KINDS {
        for (host, router) in [(Lab::EXPIRES4, Lab::ROUTER4), (Lab::EXPIRES6, Lab::ROUTER6)] {
            let mut s = spec(host, choice);
            s.ttl = Some(1);
            let (o, facts) = lab.ping(&s, ANSWERED, unprivileged);
            assert_eq!(
                (o.result, o.reason),
                (ProbeResult::Failure, Reason::Unreachable),
                "{host} {kind:?}: {o:?}"
            );
            assert!(o.message.contains("exceeded") && o.message.contains(router), "{o:?}");
            assert!(facts.stats.last_error.is_some_and(|e| e.is_time_exceeded()), "{facts:?}");
        }
    }
}

/// Partial loss, made by the router's own rate limit on the echo replies it sends: with the
/// echo reply in `icmp_ratemask` and `icmp_ratelimit` at 20 s, a new peer's bucket holds 60 s
/// of tokens (the kernel starts it a minute in the past), so exactly the first three requests
/// are answered and the rest are not, whatever their timing.
#[test]
fn partial_loss_over_the_threshold_fails_and_under_it_succeeds() {
    let ping_five = |max_loss: u8| {
        let lab = Lab::new("icmp-partial");
        lab.router.run_in(|| {
            sysctl("net/ipv4/icmp_ratemask", "6169");
            sysctl("net/ipv4/icmp_ratelimit", "20000");
        });
        let mut s = IcmpSpec::new(Lab::ROUTER4);
        s.packets = 5;
        s.interval = Duration::from_millis(10);
        s.max_loss_percent = max_loss;
        s.validate().unwrap();
        lab.ping(&s, Duration::from_millis(500), true)
    };
    let (o, facts) = ping_five(20);
    assert_eq!((facts.stats.sent, facts.stats.received), (5, 3), "{facts:?}");
    assert!((facts.stats.loss() - 0.4).abs() < 1e-9);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(o.message.contains("2 of 5 echo requests lost (40%"), "{o:?}");
    let (o, facts) = ping_five(50);
    assert_eq!((facts.stats.sent, facts.stats.received), (5, 3), "{facts:?}");
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
}

#[test]
fn loss_of_every_request_fails_whatever_the_threshold() {
    let lab = Lab::new("icmp-loss");
    for host in [Lab::PROHIBITED4, Lab::DROPPED6] {
        let mut s = IcmpSpec::new(host);
        s.packets = 3;
        s.interval = Duration::from_millis(20);
        s.max_loss_percent = 100;
        s.validate().unwrap();
        let (o, facts) = lab.ping(&s, Duration::from_millis(500), true);
        assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
        assert_eq!((facts.stats.sent, facts.stats.received, facts.stats.loss()), (3, 0, 1.0));
    }
}
