//! DNS probes through the engine (issue 36): one-shot submits, a readiness worker and the
//! blocking `check`, against a UDP server of the test's own on loopback that answers A
//! queries with 192.0.2.1, and NXDOMAIN for names under `down.`; the same server inside a
//! network namespace the test makes (`ProbeSpec::set_netns`; root and iproute2, as CI has).

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeKind, ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::Event;

/// Answers every query until dropped (or a minute has passed).
struct Responder {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Responder {
    fn start() -> Responder {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(60);
            let mut buf = [0u8; 512];
            while !stopping.load(Ordering::Relaxed) && Instant::now() < end {
                let Ok((n, from)) = sock.recv_from(&mut buf) else { continue };
                let _ = sock.send_to(&answer(&buf[..n]), from);
            }
        });
        Responder { addr, stop, thread: Some(thread) }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The response to `query` (one question, no EDNS0): one A record, or NXDOMAIN under `down.`.
fn answer(query: &[u8]) -> Vec<u8> {
    let mut end = 12;
    while end < query.len() && query[end] != 0 {
        end += 1 + usize::from(query[end]);
    }
    let question = &query[12..(end + 5).min(query.len())];
    let down = query.get(13..17) == Some(b"down");
    let mut out = vec![query[0], query[1], 0x85, if down { 0x83 } else { 0x80 }, 0, 1];
    out.extend_from_slice(&[0, u8::from(!down), 0, 0, 0, 0]);
    out.extend_from_slice(question);
    if !down {
        out.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
    }
    out
}

fn dns(server: SocketAddr, name: &str) -> ProbeSpec {
    ProbeSpec::dns("127.0.0.1", server.port().into(), name).unwrap().with_timeout(ms(2000)).unwrap()
}

#[test]
fn dns_probes_run_in_the_engine() {
    let r = Responder::start();

    // The blocking one-shot path, with the facts on the outcome.
    let o = prober_engine::check(&dns(r.addr, "up.example"));
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    let facts = o.dns.as_deref().expect("a DNS outcome carries its facts");
    assert_eq!((facts.answer_rrs, facts.rcode), (1, Some(0)));
    assert_eq!(o.peer, Some(r.addr));

    // An answer check, set on the spec's kind.
    let mut checked = dns(r.addr, "up.example");
    if let ProbeKind::Dns(d) = &mut checked.kind {
        d.validate_answer.fail_if_not_matches = vec![
            prober_core::Pattern::new("^up\\.example\\.\t60\tIN\tA\t192\\.0\\.2\\.1$").unwrap(),
        ];
    }

    let mut e = engine();
    let up = e.add_target();
    e.set_probe(up, Role::Readiness, dns(r.addr, "up.example"), schedule(50, 1, 1)).unwrap();
    e.submit(dns(r.addr, "down.example"), 7).unwrap();
    e.submit(checked, 8).unwrap();

    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        states(ev, up).contains(&(Role::Readiness, ProbeResult::Success))
            && ev.iter().filter(|x| matches!(x, Event::Check { .. })).count() == 2
    });
    for ev in &events {
        match ev {
            Event::Check { tag: 7, outcome } => {
                assert_eq!(
                    (outcome.result, outcome.reason),
                    (ProbeResult::Failure, Reason::Status)
                );
                assert_eq!(
                    outcome.message,
                    "rcode NXDOMAIN is not one of the valid rcodes [NOERROR]"
                );
                assert_eq!(outcome.dns.as_ref().and_then(|f| f.rcode), Some(3));
            }
            Event::Check { tag: 8, outcome } => {
                assert_eq!(outcome.result, ProbeResult::Success, "{}", outcome.message);
            }
            Event::Check { tag, .. } => panic!("unexpected tag {tag}"),
            _ => {}
        }
    }
}

#[test]
fn a_dns_probe_with_set_netns_queries_inside_the_namespace() {
    let ns = prober_testkit::netns::TestNetns::new("engine-dns");
    // The server's socket is made inside the namespace: only a socket made there reaches it.
    let r = ns.run_in(Responder::start);
    let mut spec = dns(r.addr, "up.example");
    spec.set_netns(ns.path()).unwrap();
    spec.validate().unwrap();
    let o = prober_engine::check(&spec);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(o.dns.as_deref().map(|f| f.answer_rrs), Some(1));

    // Without the namespace, this process's loopback has nothing on that port.
    let o = prober_engine::check(&dns(r.addr, "up.example"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{}", o.message);
}
