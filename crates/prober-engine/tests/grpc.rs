//! gRPC health probes through the engine: a readiness worker that follows the service's
//! status, one-shot submits, and the blocking `check`, against grpc-go's health server
//! (`prober_testkit::grpc`).

mod common;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::Event;
use prober_testkit::grpc::HealthServer;

fn grpc(port: u16, service: &str) -> ProbeSpec {
    ProbeSpec::grpc("127.0.0.1", port.into(), service).unwrap().with_timeout(ms(2000)).unwrap()
}

#[test]
fn grpc_probes_run_in_the_engine() {
    let s = HealthServer::start(&["-status", "up=SERVING", "-status", "down=NOT_SERVING"]);

    // The blocking one-shot path.
    let o = prober_engine::check(&grpc(s.port(), "up"));
    assert_eq!((o.result, o.output.as_slice()), (ProbeResult::Success, &b"service healthy"[..]));

    let mut e = engine();
    // Readiness workers: initial Failure, then each service's status.
    let up = e.add_target();
    e.set_probe(up, Role::Readiness, grpc(s.port(), "up"), schedule(50, 1, 1)).unwrap();
    let down = e.add_target();
    e.set_probe(down, Role::Readiness, grpc(s.port(), "down"), schedule(50, 1, 1)).unwrap();
    // One-shot submits.
    e.submit(grpc(s.port(), "down"), 7).unwrap();
    e.submit(grpc(s.port(), "nope"), 8).unwrap();

    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        states(ev, up).contains(&(Role::Readiness, ProbeResult::Success))
            && runs(ev, down, Role::Readiness) >= 2
            && ev.iter().filter(|x| matches!(x, Event::Check { .. })).count() == 2
    });
    assert_eq!(
        states(&events, up),
        [(Role::Readiness, ProbeResult::Failure), (Role::Readiness, ProbeResult::Success)]
    );
    assert_eq!(states(&events, down), [(Role::Readiness, ProbeResult::Failure)]);
    for ev in &events {
        match ev {
            Event::Check { tag: 7, outcome } => {
                assert_eq!(
                    (outcome.result, outcome.reason),
                    (ProbeResult::Failure, Reason::Status)
                );
                assert_eq!(outcome.message, "service unhealthy (responded with \"NOT_SERVING\")");
            }
            Event::Check { tag: 8, outcome } => {
                assert_eq!(
                    outcome.message,
                    "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"
                );
            }
            Event::Check { tag, .. } => panic!("unexpected tag {tag}"),
            Event::Run { target, outcome, .. } if *target == down => {
                assert_eq!(outcome.message, "service unhealthy (responded with \"NOT_SERVING\")");
            }
            _ => {}
        }
    }
}
