//! A resolver thread that cannot be started is the node's fault: the probe is Unknown with
//! reason `resource`, not a DNS Failure of the target. Thread creation cannot be made to fail
//! for real without starving the whole test process, so the test uses the resolver's hook
//! `fail_next_thread_start_for_test`, which fails the next start as `pthread_create` does
//! (`EAGAIN`). Its own test binary (so its own process): the pool starts with no thread, as
//! the case needs; with a thread already running, the lookup would simply wait for it.

use std::net::TcpListener;
use std::time::Duration;

use prober_core::{ProbeResult, Reason, TcpSpec};
use prober_io::{resolver, run_to_completion};
use prober_tcp::TcpProbe;

fn probe_localhost(port: u16) -> prober_core::Outcome {
    let spec = TcpSpec {
        host: "localhost".into(),
        port,
        connect: Default::default(),
        send: Vec::new(),
        expect: None,
        starttls: false,
        steps: Vec::new(),
    };
    let mut probe = TcpProbe::new(&spec, Duration::from_secs(30));
    run_to_completion(&mut probe)
}

#[test]
fn no_resolver_thread_is_unknown_resource_and_the_next_lookup_works() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    resolver::fail_next_thread_start_for_test();
    let o = probe_localhost(port);
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Resource), "{o:?}");
    assert_eq!(
        o.message,
        "dial tcp: lookup localhost: cannot start a resolver thread: resource temporarily unavailable"
    );

    // The pool is not left broken: the next lookup starts a thread and connects.
    let o = probe_localhost(port);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
}
