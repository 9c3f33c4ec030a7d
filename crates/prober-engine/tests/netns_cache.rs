//! The namespace file cache (issue 29): a path is opened once however many probes name it and
//! however often they run; it is opened again when the path's identity changes (the namespace
//! was deleted and made again, as a restarted container's `/proc/PID/ns/net`), reaching the
//! new namespace and never the old; and its descriptor is closed once no spec names it.
//!
//! Its own test binary (its own process): it counts the process's opens and descriptors.

mod common;

use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role};
use prober_testkit::netns::TestNetns;

/// Descriptors of this process open on the namespace whose file is `path`: those whose file
/// has the same identity (device and inode), whatever path opened it.
fn descriptors_on(path: &Path) -> usize {
    let meta = std::fs::metadata(path).unwrap();
    let want = (meta.dev(), meta.ino());
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::metadata(e.ok()?.path()).ok())
        .filter(|m| (m.dev(), m.ino()) == want)
        .count()
}

#[test]
fn one_open_per_path_reopened_on_a_new_identity_closed_when_unnamed() {
    let ns = TestNetns::new("cache");
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = ns.start_server(addr);
    let port = server.port();
    let spec = || {
        ProbeSpec::tcp("127.0.0.1", port.into())
            .unwrap()
            .with_timeout(ms(2000))
            .unwrap()
            .with_netns(ns.path())
            .unwrap()
    };
    let opens = prober_io::netns_opens();
    assert_eq!(descriptors_on(ns.path()), 0);

    // Three targets and one-shot checks, all naming the path, many runs: one open.
    let mut e = engine();
    let targets: Vec<_> = (0..3).map(|_| e.add_target()).collect();
    for t in &targets {
        e.set_probe(*t, Role::Readiness, spec(), schedule(20, 1, 1)).unwrap();
    }
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| targets.iter().all(|t| runs(ev, *t, Role::Readiness) >= 5));
    for _ in 0..3 {
        assert_eq!(prober_engine::check(&spec()).result, ProbeResult::Success);
    }
    assert_eq!(prober_io::netns_opens() - opens, 1);
    assert_eq!(descriptors_on(ns.path()), 1);

    // The namespace made again under the same path: the next run opens the new one, where
    // nothing listens yet (the old one, with the server, is not reached through the cache).
    ns.recreate();
    let o = prober_engine::check(&spec());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    let again = ns.start_server(SocketAddr::from(([127, 0, 0, 1], port)));
    let o = prober_engine::check(&spec());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(again.wait_for_connections(1, ms(5000)));
    assert_eq!(prober_io::netns_opens() - opens, 2);
    assert_eq!(descriptors_on(ns.path()), 1, "the old namespace's descriptor was replaced");

    // Nobody names it any more: closed.
    drop(e);
    assert_eq!(descriptors_on(ns.path()), 0);
}
