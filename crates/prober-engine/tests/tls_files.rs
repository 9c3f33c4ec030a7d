//! TLS files are loaded off the engine thread: a FIFO named as a CA file ends its own runs
//! (Unknown, reason `tls`) and never holds up the other targets of the engine, and good files
//! come back through the engine's waker to the probe that asked.

mod common;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role, TlsOptions, TlsVerify};
use prober_engine::Event;
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer};

/// A FIFO nobody writes to, unless something hangs reading it: after `release_after` writers
/// keep sending a line of non-PEM, so that a blocking reader comes back and the test fails on its
/// assertions instead of hanging.
fn fifo(path: &PathBuf, release_after: Duration) -> mpsc::Sender<()> {
    use std::os::unix::fs::OpenOptionsExt;
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
        .unwrap();
    let (stop, stopped) = mpsc::channel::<()>();
    let p = path.clone();
    std::thread::spawn(move || {
        if stopped.recv_timeout(release_after) != Err(mpsc::RecvTimeoutError::Timeout) {
            return;
        }
        eprintln!("releasing {p:?}: a reader has been blocked on it for {release_after:?}");
        // Every run opens it again: keep releasing until the test ends.
        loop {
            let w = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&p);
            if let Ok(mut w) = w {
                let _ = std::io::Write::write_all(&mut w, b"released: no PEM here\n");
            }
            if stopped.recv_timeout(ms(10)) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
        }
    });
    stop
}

#[test]
fn a_fifo_ca_does_not_hold_up_the_engine() {
    let ca = TestCa::new("ca");
    let server = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["127.0.0.1"])));
    let plain = prober_testkit::TargetServer::start();
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-engine-tls-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let fifo_path = d.join("ca.fifo");
    let timeout = ms(1000);
    let _release = fifo(&fifo_path, timeout * 10);
    let good_path = d.join("ca.pem");
    std::fs::write(&good_path, &ca.cert().cert_pem).unwrap();
    let https = |ca: &PathBuf| {
        let tls = TlsOptions { verify: TlsVerify::CaFile(ca.clone()), ..TlsOptions::default() };
        ProbeSpec::http(&server.url("/ok"))
            .unwrap()
            .with_timeout(timeout)
            .unwrap()
            .with_tls(tls)
            .unwrap()
    };

    let mut e = engine();
    // From here: setting a probe may start its first run at once.
    let started = Instant::now();
    let stuck = e.add_target();
    e.set_probe(stuck, Role::Readiness, https(&fifo_path), schedule(100, 1, 1)).unwrap();
    let verified = e.add_target();
    e.set_probe(verified, Role::Readiness, https(&good_path), schedule(100, 1, 1)).unwrap();
    let beside = e.add_target();
    let tcp =
        ProbeSpec::tcp("127.0.0.1", plain.port().into()).unwrap().with_timeout(timeout).unwrap();
    e.set_probe(beside, Role::Readiness, tcp, schedule(50, 1, 1)).unwrap();
    e.submit(https(&fifo_path), 1).unwrap();

    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        runs(ev, beside, Role::Readiness) >= 20
            && runs(ev, stuck, Role::Readiness) >= 3
            && states(ev, verified).contains(&(Role::Readiness, ProbeResult::Success))
            && ev.iter().any(|x| matches!(x, Event::Check { tag: 1, .. }))
    });
    // Twenty runs 50 ms apart next to the FIFO target: far less than the 10 s after which the
    // FIFO is released, which is how long a blocked engine thread would have stalled them.
    let took = started.elapsed();
    assert!(took < timeout * 5, "took {took:?}");

    let message =
        format!("TLS setup failed: cannot read CA file {fifo_path:?}: not a regular file");
    for ev in &events {
        let outcome = match ev {
            Event::Run { target, outcome, .. } if *target == stuck => outcome,
            Event::Check { tag: 1, outcome } => outcome,
            _ => continue,
        };
        assert_eq!(
            (outcome.result, outcome.reason, outcome.message.as_str()),
            (ProbeResult::Unknown, Reason::Tls, message.as_str())
        );
    }
    assert_eq!(
        trace(&events, beside, Role::Readiness).iter().filter(|t| *t == "F" || *t == "U").count(),
        0
    );
}
