//! Sockets kept per network namespace (issue 37): probes in a namespace reuse the sockets of
//! earlier probes there instead of asking a `prober-netns` thread for new ones, and the engine
//! lets go of them (so of the namespace, which a socket keeps in existence) when the last spec
//! naming the path goes, when the path comes to name another namespace, and after an idle
//! bound. Real namespaces (`ip netns`, root: CI runs as root; without it these tests fail,
//! saying so, they never skip).
//!
//! Its own test binary: it looks at the process's descriptors (each test at those of its own
//! namespace only, so they may run side by side).

mod common;

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Role};
use prober_engine::{Engine, EngineConfig, Event};
use prober_testkit::netns::TestNetns;

/// `ioctl(SIOCGSKNS)`: a descriptor of the network namespace a socket belongs to.
const SIOCGSKNS: libc::c_ulong = 0x894C;

/// The identity (device, inode) of the namespace file at `path`.
fn identity(path: &Path) -> (u64, u64) {
    let meta = std::fs::metadata(path).unwrap();
    (meta.dev(), meta.ino())
}

/// How many of this process's inet sockets belong to the namespace `ns` (by identity), other
/// than those on local port `except` (a test server's listener and what it accepted): the
/// engine's sockets there, connected or kept (a kept socket is disconnected: port 0).
fn engine_sockets_in(ns: (u64, u64), except: u16) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(link) = std::fs::read_link(entry.path()) else { continue };
        if !link.to_string_lossy().starts_with("socket:[") {
            continue;
        }
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        // SAFETY: a plain ioctl on a descriptor number; if another thread closed it meanwhile
        // the call fails (EBADF) or asks some other socket, which is then not in `ns`.
        let nsfd = unsafe { libc::ioctl(fd, SIOCGSKNS as _) };
        if nsfd < 0 {
            continue;
        }
        // SAFETY: SIOCGSKNS returned a new descriptor, owned by nobody else.
        let nsfd = unsafe { OwnedFd::from_raw_fd(nsfd) };
        let Ok(meta) = std::fs::File::from(nsfd).metadata() else { continue };
        if (meta.dev(), meta.ino()) != ns {
            continue;
        }
        // Inet sockets only (the server's wake-up pair is a Unix one made inside too).
        let local = socket2::SockRef::from(&BorrowedSocket(fd)).local_addr();
        if local.ok().and_then(|a| a.as_socket()).is_some_and(|a| a.port() != except) {
            n += 1;
        }
    }
    n
}

/// A descriptor number lent to `socket2::SockRef` for one call.
struct BorrowedSocket(i32);

impl AsRawFd for BorrowedSocket {
    fn as_raw_fd(&self) -> i32 {
        self.0
    }
}

impl std::os::fd::AsFd for BorrowedSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: used only within `engine_sockets_in`'s loop body, while the number was just
        // seen open; a number closed meanwhile makes the call fail, nothing worse.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.0) }
    }
}

/// Descriptors of this process open on the namespace file `path` (as `netns_cache.rs`).
fn descriptors_on(id: (u64, u64)) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::metadata(e.ok()?.path()).ok())
        .filter(|m| (m.dev(), m.ino()) == id)
        .count()
}

fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn inside(ns: &TestNetns, url: &str) -> ProbeSpec {
    http(url).with_netns(ns.path()).unwrap()
}

fn engine_with(f: impl FnOnce(&mut EngineConfig)) -> Engine {
    let mut config = EngineConfig { every_run: true, jitter_seed: 7, ..EngineConfig::default() };
    f(&mut config);
    Engine::with_config(config).unwrap()
}

/// A period no run waits for: the tests trigger every run after the first.
fn on_demand() -> prober_core::Schedule {
    schedule(3_600_000, 1, 1)
}

/// Runs the targets' readiness probes (set with [`on_demand`]) `n` times each, one round at a
/// time: when this returns, no run is in flight, so every socket is back in the pool.
fn rounds(e: &mut Engine, events: &mut Vec<Event>, targets: &[u64], n: usize) {
    for round in 1..=n {
        run_until(e, events, |ev| targets.iter().all(|&t| runs(ev, t, Role::Readiness) >= round));
        if round < n {
            for &t in targets {
                e.trigger(t, Role::Readiness).unwrap();
            }
        }
    }
}

fn successes(events: &[Event]) -> usize {
    events
        .iter()
        .filter(
            |e| matches!(e, Event::Run { outcome, .. } if outcome.result == ProbeResult::Success),
        )
        .count()
}

/// Every socket after the first is a kept one: without a re-check of the path within the test
/// (taken at once), and with a re-check before every probe (taken once a thread has found the
/// path still naming the kept socket's namespace).
#[test]
fn probes_in_a_namespace_reuse_their_sockets() {
    reuse_with(Duration::from_secs(3600));
    reuse_with(Duration::ZERO);
}

fn reuse_with(recheck: Duration) {
    let ns = TestNetns::new("reuse");
    let server = ns.start_server(local(0));
    let url = server.url("/health");
    let mut e = engine_with(|c| c.netns_recheck = recheck);
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, inside(&ns, &url), on_demand()).unwrap();
    let mut events = Vec::new();
    rounds(&mut e, &mut events, &[t], 20);
    let runs = runs(&events, t, Role::Readiness) as u64;
    assert_eq!(runs, 20);
    assert_eq!(successes(&events) as u64, runs, "{events:#?}");
    let stats = e.netns_pool_stats();
    // One socket made by a namespace thread, for the first run; every later run reused it.
    assert_eq!(stats.reused, runs - 1, "re-check {recheck:?}: {stats:?}");
    assert_eq!((stats.namespaces, stats.idle), (1, 1), "{stats:?}");
    assert_eq!(engine_sockets_in(identity(ns.path()), server.port()), 1);
    assert!(server.wait_for_requests(runs, ms(5000)));
}

#[test]
fn the_last_target_gone_no_descriptor_of_the_namespace_remains() {
    let ns = TestNetns::new("unnamed");
    let id = identity(ns.path());
    let server = ns.start_server(local(0));
    let url = server.url("/health");
    let mut e = engine();
    let targets: Vec<_> = (0..2).map(|_| e.add_target()).collect();
    for &t in &targets {
        e.set_probe(t, Role::Readiness, inside(&ns, &url), on_demand()).unwrap();
    }
    let mut events = Vec::new();
    rounds(&mut e, &mut events, &targets, 5);
    assert!(e.netns_pool_stats().idle >= 1, "{:?}", e.netns_pool_stats());
    assert!(engine_sockets_in(id, server.port()) >= 1);

    // One target left: the path is still named, its sockets stay.
    e.remove_target(targets[0]).unwrap();
    assert!(engine_sockets_in(id, server.port()) >= 1);
    assert_eq!(descriptors_on(id), 1);

    // The last one gone: no socket in the namespace, no descriptor of it, at once.
    e.remove_target(targets[1]).unwrap();
    assert_eq!(engine_sockets_in(id, server.port()), 0, "{:?}", e.netns_pool_stats());
    assert_eq!(descriptors_on(id), 0);
    let stats = e.netns_pool_stats();
    assert_eq!((stats.namespaces, stats.idle), (0, 0), "{stats:?}");
}

#[test]
fn a_path_bound_to_a_new_namespace_is_probed_there() {
    let ns = TestNetns::new("rebound");
    let old = identity(ns.path());
    let first = ns.start_server(local(0));
    let port = first.port();
    let url = first.url("/health");
    // The default re-check bound: the one hosts get.
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, inside(&ns, &url), schedule(20, 1, 1)).unwrap();
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| successes(ev) >= 5);
    assert!(e.netns_pool_stats().reused >= 1, "{:?}", e.netns_pool_stats());
    assert!(engine_sockets_in(old, port) >= 1);

    // The path now names a new namespace, where a second server listens on the same port;
    // the first stays in the old one (it keeps it in existence, as the engine's sockets do).
    ns.recreate();
    assert_ne!(identity(ns.path()), old);
    let second = ns.start_server(local(port));
    run_until(&mut e, &mut events, |_| second.requests() >= 3);
    // The old namespace's sockets were closed once the change was seen, and the probes that
    // reach the new server no longer go to the old one.
    assert_eq!(engine_sockets_in(old, port), 0, "{:?}", e.netns_pool_stats());
    let old_requests = first.requests();
    run_until(&mut e, &mut events, |_| second.requests() >= 6);
    assert_eq!(first.requests(), old_requests, "a probe went to the old namespace");
    assert!(e.netns_pool_stats().released >= 1, "{:?}", e.netns_pool_stats());
}

#[test]
fn sockets_of_an_idle_namespace_are_closed() {
    let ns = TestNetns::new("idle");
    let id = identity(ns.path());
    let server = ns.start_server(local(0));
    let url = server.url("/health");
    let spec = inside(&ns, &url);
    let mut e = engine_with(|c| c.netns_pool_idle = ms(200));
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, spec.clone(), on_demand()).unwrap();
    let mut events = Vec::new();
    rounds(&mut e, &mut events, &[t], 3);

    // No probe any more, but the path still named (by `spec`): only the idle bound closes
    // the kept sockets, and the engine keeps a timer for it.
    e.remove_target(t).unwrap();
    assert!(engine_sockets_in(id, server.port()) >= 1);
    let timeout = e.timeout();
    assert!(timeout.is_some_and(|d| d <= ms(200)), "no timer for the idle bound: {timeout:?}");
    let limit = std::time::Instant::now() + Duration::from_secs(30);
    while e.netns_pool_stats().idle > 0 {
        assert!(std::time::Instant::now() < limit, "{:?}", e.netns_pool_stats());
        e.wait(Some(ms(1000))).unwrap();
    }
    assert_eq!(engine_sockets_in(id, server.port()), 0);
    assert_eq!(e.netns_pool_stats().namespaces, 0);
    assert_eq!(descriptors_on(id), 1, "the spec still names the path: its descriptor stays");
    drop(spec);
}
