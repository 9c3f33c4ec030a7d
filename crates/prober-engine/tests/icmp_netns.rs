//! ICMP echo probes in a network namespace the test makes (issue 36): the prober's namespace
//! and a router joined by a veth pair, pinged from an engine outside both with `set_netns`. The
//! router answers (Success, with its hop limit), a `prohibit` route is destination unreachable
//! and a `blackhole` route a timeout: paths that exist only inside. Many runs in the namespace
//! share one socket made there (on an unprivileged socket all runs then carry the socket's
//! port as their echo id), on either socket kind as the namespace's own
//! `net.ipv4.ping_group_range` allows. And on that shared socket a reply with a run's id and
//! sequence but not its data (a forger beside us answering every request, in a namespace where
//! the kernel answers none) wakes no run: the runs time out, and take the forger's replies
//! only when it copies the data. Needs root and iproute2 (CI runs as root): without them this
//! fails, saying so; it never skips.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use common::*;
use prober_core::{IcmpSocketKind, IcmpSpec, Outcome, ProbeResult, ProbeSpec, Reason};
use prober_engine::{Engine, Event};
use prober_testkit::echo_forger::EchoForger;
use prober_testkit::netns::TestNetns;

/// `packets` echoes to `host` in `ns`, `interval` apart.
fn ping_in(ns: &TestNetns, host: &str, packets: u32, interval: Duration) -> ProbeSpec {
    let spec = IcmpSpec { packets, interval, ..IcmpSpec::new(host) };
    let spec = ProbeSpec::icmp_with(spec).unwrap().with_timeout(ms(2000)).unwrap();
    spec.with_netns(ns.path()).unwrap()
}

/// Submits `specs` as checks and runs the engine until all complete; their outcomes by tag.
fn run_checks(e: &mut Engine, specs: Vec<ProbeSpec>) -> HashMap<u64, Box<Outcome>> {
    let n = specs.len();
    for (tag, spec) in specs.into_iter().enumerate() {
        e.submit(spec, tag as u64).unwrap();
    }
    let (mut done, mut events) = (HashMap::new(), Vec::new());
    let limit = Instant::now() + Duration::from_secs(60);
    while done.len() < n {
        assert!(Instant::now() < limit, "{} of {n} checks completed", done.len());
        e.wait(Some(ms(50))).unwrap();
        e.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            if let Event::Check { tag, outcome } = ev {
                done.insert(tag, outcome);
            }
        }
    }
    done
}

fn ping_group_range(ns: &TestNetns, all: bool) {
    let range = if all { "0 2147483647" } else { "1 0" };
    ns.run_in(move || std::fs::write("/proc/sys/net/ipv4/ping_group_range", range).unwrap());
}

#[test]
fn icmp_probes_run_inside_the_namespace_they_name_sharing_its_socket() {
    let prober = TestNetns::new("icmp-a");
    let router = TestNetns::new("icmp-r");
    prober.ip(&["link", "add", "a0", "type", "veth", "peer", "name", "r0", "netns", router.name()]);
    prober.ip(&["addr", "add", "10.77.0.2/24", "dev", "a0"]);
    prober.ip(&["link", "set", "a0", "up"]);
    prober.ip(&["route", "add", "default", "via", "10.77.0.1"]);
    router.ip(&["addr", "add", "10.77.0.1/24", "dev", "r0"]);
    router.ip(&["link", "set", "r0", "up"]);
    router.ip(&["route", "add", "prohibit", "10.79.0.0/24"]);
    router.ip(&["route", "add", "blackhole", "10.80.0.0/24"]);
    router.run_in(|| {
        std::fs::write("/proc/sys/net/ipv4/ip_forward", "1").unwrap();
        std::fs::write("/proc/sys/net/ipv4/icmp_ratelimit", "0").unwrap();
    });
    let mut e = engine();

    for (unprivileged, kind) in [(false, IcmpSocketKind::Raw), (true, IcmpSocketKind::Unprivileged)]
    {
        ping_group_range(&prober, unprivileged);
        // Three paths that exist only inside.
        let specs = vec![
            ping_in(&prober, "10.77.0.1", 1, ms(100)),
            ping_in(&prober, "10.79.0.5", 1, ms(100)),
            ping_in(&prober, "10.80.0.5", 1, ms(100)),
        ];
        let done = run_checks(&mut e, specs);
        let answered = &done[&0];
        assert_eq!(answered.result, ProbeResult::Success, "{kind:?}: {answered:?}");
        let facts = answered.icmp.as_deref().unwrap();
        assert_eq!(facts.socket, Some(kind));
        assert_eq!(facts.stats.reply_hop_limit, Some(64), "{facts:?}");
        let refused = &done[&1];
        assert_eq!((refused.result, refused.reason), (ProbeResult::Failure, Reason::Unreachable));
        assert!(refused.message.contains("10.77.0.1"), "names the router: {refused:?}");
        let dropped = &done[&2];
        assert_eq!(
            (dropped.result, dropped.reason),
            (ProbeResult::Failure, Reason::Timeout),
            "{kind:?}: {dropped:?}"
        );

        // Fifty runs at once, two echoes each: all answered, on one socket.
        let specs = (0..50).map(|_| ping_in(&prober, "10.77.0.1", 2, ms(100))).collect();
        let done = run_checks(&mut e, specs);
        let mut ids = HashSet::new();
        for (tag, o) in &done {
            assert_eq!(o.result, ProbeResult::Success, "{kind:?} {tag}: {o:?}");
            let facts = o.icmp.as_deref().unwrap();
            assert_eq!((facts.stats.sent, facts.stats.received), (2, 2));
            ids.insert(facts.id);
        }
        if kind == IcmpSocketKind::Unprivileged {
            // The kernel's id is the socket's port: one id, one socket.
            assert_eq!(ids.len(), 1, "{ids:?}");
        }
    }
}

#[test]
fn on_a_shared_socket_replies_without_the_runs_data_wake_no_run() {
    let ns = TestNetns::new("icmp-forged");
    ns.run_in(|| std::fs::write("/proc/sys/net/ipv4/icmp_echo_ignore_all", "1").unwrap());
    let mut e = engine();
    for unprivileged in [false, true] {
        ping_group_range(&ns, unprivileged);
        for copy_data in [false, true] {
            // Made in the namespace, where the requests go; stopped before the next starts.
            let forger = ns.run_in(move || EchoForger::start(copy_data));
            let spec = |_| {
                let spec = ProbeSpec::icmp("127.0.0.1").unwrap().with_timeout(ms(500)).unwrap();
                spec.with_netns(ns.path()).unwrap()
            };
            let done = run_checks(&mut e, (0..20).map(spec).collect());
            let forged = forger.stop();
            assert!(forged >= 20, "the forger answered every request");
            for (tag, o) in &done {
                let want = if copy_data {
                    (ProbeResult::Success, Reason::None)
                } else {
                    (ProbeResult::Failure, Reason::Timeout)
                };
                assert_eq!((o.result, o.reason), want, "{unprivileged} {copy_data} {tag}: {o:?}");
            }
        }
    }
}
