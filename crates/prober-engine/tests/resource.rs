//! This node out of descriptors (a real EMFILE): TCP, HTTP, gRPC (h2c) and exec probes end
//! Unknown with reason `resource` and a message that says what ran out, never a Failure that
//! would count against a healthy target; and once descriptors are free again, the same probes
//! succeed on the same engine.
//!
//! Its own test binary, so its own process, with one test: it lowers RLIMIT_NOFILE after the
//! engine and a loopback listener exist, fills every descriptor below the limit, runs the
//! probes, then closes the fillers and restores the limit. (The engine's crate hosts it: it is the
//! lowest crate that drives all four kinds.)

use std::fs::File;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason};
use prober_engine::{Engine, Event};

/// Bound for the outcomes to arrive: only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(60);

/// Submits every spec as a one-shot check and returns the outcomes in the specs' order.
fn run_all(engine: &mut Engine, specs: &[ProbeSpec]) -> Vec<Outcome> {
    for (tag, spec) in specs.iter().enumerate() {
        engine.submit(spec.clone(), tag as u64).unwrap();
    }
    let mut outcomes: Vec<Option<Outcome>> = vec![None; specs.len()];
    let mut events = Vec::new();
    let until = Instant::now() + HANG;
    while outcomes.iter().any(Option::is_none) {
        assert!(Instant::now() < until, "outcomes missing: {outcomes:?}");
        engine.wait(Some(Duration::from_millis(500))).unwrap();
        engine.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            if let Event::Check { tag, outcome } = ev {
                outcomes[tag as usize] = Some(*outcome);
            }
        }
    }
    outcomes.into_iter().map(Option::unwrap).collect()
}

#[test]
fn out_of_descriptors_is_unknown_resource_for_every_kind() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut engine = Engine::new().unwrap();
    let ten = Duration::from_secs(10);
    let specs = [
        ProbeSpec::tcp("127.0.0.1", i64::from(port)).unwrap().with_timeout(ten).unwrap(),
        ProbeSpec::http(&format!("http://127.0.0.1:{port}/")).unwrap().with_timeout(ten).unwrap(),
        ProbeSpec::grpc("127.0.0.1", i64::from(port), "").unwrap().with_timeout(ten).unwrap(),
        ProbeSpec::exec(&["true"]).unwrap().with_timeout(ten).unwrap(),
    ];

    let saved = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let open_now = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    setrlimit(Resource::RLIMIT_NOFILE, open_now + 64, saved.1).unwrap();
    let mut fillers = Vec::new();
    let full = loop {
        match File::open("/dev/null") {
            Ok(f) => fillers.push(f),
            Err(e) => break e,
        }
    };
    let outcomes = run_all(&mut engine, &specs);
    drop(fillers);
    setrlimit(Resource::RLIMIT_NOFILE, saved.0, saved.1).unwrap();

    assert_eq!(full.raw_os_error(), Some(libc::EMFILE), "{full}");
    let socket = format!("dial tcp 127.0.0.1:{port}: cannot create socket: too many open files");
    let expected = [
        socket.clone(),
        format!("Get \"http://127.0.0.1:{port}/\": {socket}"),
        format!("error: failed to connect service at \"127.0.0.1:{port}\": {socket}"),
        "could not create the output pipe: too many open files".to_string(),
    ];
    for (o, message) in outcomes.iter().zip(&expected) {
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Resource), "{o:?}");
        assert_eq!(&o.message, message);
    }

    // Descriptors free again: the same engine probes TCP and exec successfully.
    let again = run_all(&mut engine, &[specs[0].clone(), specs[3].clone()]);
    for o in &again {
        assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    }
}
