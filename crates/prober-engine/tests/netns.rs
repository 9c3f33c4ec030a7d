//! Probes in another network namespace (issue 29), with real namespaces (`ip netns`, root: CI
//! runs as root; without it these tests fail, saying so, they never skip): a server answers
//! only inside, on 127.0.0.1, on the same port as a different server on the host, and each
//! probe reaches the one it names; a namespace that cannot be used is the run's Unknown with
//! reason `namespace`, naming the path, within the timeout, and the engine goes on.

mod common;

use std::net::{SocketAddr, TcpListener};
use std::path::Path;

use common::*;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::{Event, check};
use prober_testkit::TargetServer;
use prober_testkit::grpc::HealthServer;
use prober_testkit::netns::TestNetns;

fn inside(ns: &TestNetns, spec: ProbeSpec) -> ProbeSpec {
    spec.with_timeout(ms(2000)).unwrap().with_netns(ns.path()).unwrap()
}

fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[test]
fn each_probe_reaches_the_server_of_its_namespace() {
    // The host's server says 503 on /health; the one inside, on the same port, says 200.
    let host = TargetServer::start();
    host.set_healthy(false);
    let ns = TestNetns::new("reach");
    let guest = ns.start_server(local(host.port()));
    let url = host.url("/health");

    let o = check(&inside(&ns, http(&url)));
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(200)), "{o:?}");
    let o = check(&http(&url));
    assert_eq!((o.result, o.http_status), (ProbeResult::Failure, Some(503)), "{o:?}");
    assert_eq!((guest.requests(), host.requests()), (1, 1));

    // TCP: the same port on both sides reaches the namespace's listener; a port that only
    // listens inside is refused on the host.
    let tcp = ProbeSpec::tcp("127.0.0.1", host.port().into()).unwrap();
    let o = check(&inside(&ns, tcp));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(guest.wait_for_connections(2, ms(5000)));
    assert_eq!(host.connections(), 1, "the TCP probe went to the host's server");
    let only_inside = ns.start_server(local(0));
    let tcp = ProbeSpec::tcp("127.0.0.1", only_inside.port().into()).unwrap();
    let o = check(&inside(&ns, tcp.clone()));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let o = check(&tcp);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");

    // gRPC: grpc-go's health server started from a thread inside (a child is born in the
    // namespace of the thread that forks it).
    let health = ns.run_in(|| HealthServer::start(&["-status", "up=SERVING"]));
    let grpc = ProbeSpec::grpc("127.0.0.1", health.port().into(), "up").unwrap();
    let o = check(&inside(&ns, grpc.clone()));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let o = check(&grpc.with_timeout(ms(2000)).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
}

#[test]
fn periodic_workers_inside_and_outside_side_by_side() {
    let host = TargetServer::start();
    host.set_healthy(false);
    let ns = TestNetns::new("workers");
    let _guest = ns.start_server(local(host.port()));
    let url = host.url("/health");
    let mut e = engine();
    let a = e.add_target();
    e.set_probe(a, Role::Readiness, inside(&ns, http(&url)), schedule(50, 1, 1)).unwrap();
    let b = e.add_target();
    e.set_probe(b, Role::Readiness, http(&url), schedule(50, 1, 1)).unwrap();
    // Keep-alive: a connection kept by the namespace's target never serves the host's.
    let c = e.add_target();
    let kept = inside(&ns, http(&url));
    let mut kept = kept;
    kept.set_keep_alive(true).unwrap();
    e.set_probe(c, Role::Readiness, kept, schedule(50, 1, 1)).unwrap();
    let d = e.add_target();
    let mut kept_host = http(&url);
    kept_host.set_keep_alive(true).unwrap();
    e.set_probe(d, Role::Readiness, kept_host, schedule(50, 1, 1)).unwrap();
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        [a, b, c, d].iter().all(|t| runs(ev, *t, Role::Readiness) >= 3)
    });
    for (t, want) in [
        (a, ProbeResult::Success),
        (b, ProbeResult::Failure),
        (c, ProbeResult::Success),
        (d, ProbeResult::Failure),
    ] {
        for ev in &events {
            if let Event::Run { target, outcome, .. } = ev {
                if *target == t {
                    assert_eq!(outcome.result, want, "{outcome:?}");
                }
            }
        }
    }
}

fn assert_unknown(o: &Outcome, path: &Path, why: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Namespace), "{o:?}");
    // HTTP puts Go's `Get "URL": ` in front, as for every connect error.
    let want = format!("cannot use network namespace {path:?}: {why}");
    assert!(o.message.ends_with(&want), "{:?} does not end with {want:?}", o.message);
    assert!(o.timings.total <= ms(2000), "within the timeout: {:?}", o.timings);
}

#[test]
fn unusable_namespaces_are_unknown_naming_the_path_and_the_engine_goes_on() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("netns-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("regular");
    std::fs::write(&file, b"not a namespace").unwrap();
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let missing = dir.join("missing");
    let mnt = Path::new("/proc/self/ns/mnt");
    let cases: [(&Path, &str); 5] = [
        (&missing, "no such file or directory"),
        (&file, "not a namespace file (a regular file)"),
        (&fifo, "not a namespace file (a FIFO)"),
        (&dir, "not a namespace file (a directory)"),
        (mnt, "a mount namespace, not a network namespace"),
    ];
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = || ProbeSpec::tcp("127.0.0.1", port.into()).unwrap().with_timeout(ms(2000)).unwrap();
    for (path, why) in cases {
        assert_unknown(&check(&tcp().with_netns(path).unwrap()), path, why);
    }
    // Through an engine: one-shot runs of each, and of a good probe after them.
    let mut e = engine();
    for (i, (path, _)) in cases.iter().enumerate() {
        let url = format!("http://127.0.0.1:{port}/");
        e.submit(http(&url).with_netns(path).unwrap(), i as u64).unwrap();
    }
    e.submit(tcp(), 99).unwrap();
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        ev.iter().filter(|x| matches!(x, Event::Check { .. })).count() == cases.len() + 1
    });
    for ev in &events {
        if let Event::Check { tag, outcome } = ev {
            match cases.get(*tag as usize) {
                Some((path, why)) => assert_unknown(outcome, path, why),
                None => assert_eq!(outcome.result, ProbeResult::Success, "{outcome:?}"),
            }
        }
    }
}

#[test]
fn spec_time_mistakes_are_refused() {
    let mut spec = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
    assert_eq!(spec.set_netns("").unwrap_err().to_string(), "the network namespace path is empty");
    assert!(spec.set_netns("run/netns/x").unwrap_err().to_string().contains("must be absolute"));
    let mut exec = ProbeSpec::exec(&["true"]).unwrap();
    assert!(exec.set_netns("/run/netns/x").is_err());
}

#[test]
fn ipv6_and_extra_addresses_inside() {
    let ns = TestNetns::new("v6");
    ns.add_address("10.200.0.1/32");
    ns.add_address("fd00:200::1/128");
    for addr in ["[::1]:0", "10.200.0.1:0", "[fd00:200::1]:0"] {
        let server = ns.start_server(addr.parse().unwrap());
        let ip = server.addr().ip();
        let host = if ip.is_ipv6() { format!("[{ip}]") } else { ip.to_string() };
        let url = format!("http://{host}:{}/ok", server.port());
        let o = check(&inside(&ns, http(&url)));
        assert_eq!(o.result, ProbeResult::Success, "{url}: {o:?}");
        assert_eq!(server.requests(), 1);
    }
}
