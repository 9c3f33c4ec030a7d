//! Descriptor accounting needs a test binary of its own: tests in one binary run on parallel
//! threads and would open descriptors while this one counts.

use std::time::Duration;

use prober_core::TcpSpec;
use prober_io::run_to_completion;
use prober_tcp::TcpProbe;
use prober_testkit::{TargetServer, closed_port};

fn probe(host: &str, port: u16) -> prober_core::Outcome {
    let spec = TcpSpec {
        host: host.to_string(),
        port,
        connect: Default::default(),
        send: Vec::new(),
        expect: None,
        starttls: false,
        steps: Vec::new(),
    };
    run_to_completion(&mut TcpProbe::new(&spec, Duration::from_secs(1)))
}

#[test]
fn no_descriptor_leaks_over_many_probes() {
    let server = TargetServer::start();
    let dead = closed_port();
    let count = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    // Warm up lazily created process-wide state (resolver threads, etc.).
    probe("127.0.0.1", server.port());
    assert!(server.wait_for_connections_closed(1, Duration::from_secs(10)));
    let before = count();
    let fds = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
            .collect::<Vec<_>>()
    };
    let listing = fds();
    for i in 0..300 {
        let port = if i % 2 == 0 { server.port() } else { dead };
        probe("127.0.0.1", port);
    }
    // The in-process server closes its side on its own threads: let it finish first.
    assert!(server.wait_for_connections_closed(151, Duration::from_secs(10)));
    assert_eq!(count(), before, "before: {listing:?}\nafter: {:?}", fds());
}
