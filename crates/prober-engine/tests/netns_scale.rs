//! One engine probes 1,000 network namespaces (issue 29): each namespace has its own listener
//! on 127.0.0.1 (the same port number in all of them would do; each has its own here), and
//! every target turns ready. The engine holds one descriptor per namespace, and none once the
//! targets are gone. CPU per probe is measured by ci/bench.sh, not here.
//!
//! Its own test binary (its own process): it counts the process's descriptors.

mod common;

use std::collections::HashSet;
use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Role};
use prober_engine::EngineConfig;
use prober_testkit::netns::TestNetns;

const NAMESPACES: usize = 1000;

/// How many of this process's descriptors are open on a file of `ids` (device, inode).
fn descriptors_on(ids: &HashSet<(u64, u64)>) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::metadata(e.ok()?.path()).ok())
        .filter(|m| ids.contains(&(m.dev(), m.ino())))
        .count()
}

#[test]
fn one_engine_probes_a_thousand_namespaces() {
    let set = TestNetns::many("scale", NAMESPACES);
    let listeners: Vec<TcpListener> = set
        .iter()
        .map(|ns| ns.run_in(|| TcpListener::bind("127.0.0.1:0")).expect("listen inside"))
        .collect();
    let ids: HashSet<(u64, u64)> = set
        .iter()
        .map(|ns| {
            let m = std::fs::metadata(ns.path()).unwrap();
            (m.dev(), m.ino())
        })
        .collect();
    assert_eq!(ids.len(), NAMESPACES);

    let config = EngineConfig { jitter_seed: 7, ..EngineConfig::default() };
    let mut e = prober_engine::Engine::with_config(config).unwrap();
    let mut targets = Vec::with_capacity(NAMESPACES);
    for (ns, l) in set.iter().zip(&listeners) {
        let port = l.local_addr().unwrap().port();
        let spec = ProbeSpec::tcp("127.0.0.1", port.into())
            .unwrap()
            .with_timeout(ms(5000))
            .unwrap()
            .with_netns(ns.path())
            .unwrap();
        let t = e.add_target();
        e.set_probe(t, Role::Readiness, spec, schedule(1000, 1, 1)).unwrap();
        targets.push(t);
    }
    let mut events = Vec::new();
    let limit = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let ready = targets
            .iter()
            .filter(|t| e.published(**t, Role::Readiness).unwrap() == ProbeResult::Success)
            .count();
        if ready == NAMESPACES {
            break;
        }
        assert!(std::time::Instant::now() < limit, "{ready} of {NAMESPACES} targets ready");
        e.wait(Some(ms(50))).unwrap();
        events.clear();
        e.drain(&mut events, usize::MAX);
    }
    let held = descriptors_on(&ids);
    eprintln!("{NAMESPACES} namespaces probed by one engine: {held} namespace descriptors held");
    assert_eq!(held, NAMESPACES, "one descriptor per namespace");
    for t in targets {
        e.remove_target(t).unwrap();
    }
    drop(e);
    assert_eq!(descriptors_on(&ids), 0, "closed once no probe names them");
}
