//! TLS files that are not loaded within the run's deadline: the run ends as any run that times
//! out before the response head. The blocking-job pool is made as busy as a hung file system
//! would make it (every thread held by a job that does not return); alone in its test binary,
//! since the pool is process-wide.
#![cfg(feature = "tls")]

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mio::{Poll, Token};
use prober_core::{ProbeKind, ProbeResult, ProbeSpec, Reason, TlsOptions, TlsVerify};
use prober_http::HttpProbe;
use prober_io::blocking::MAX_THREADS;
use prober_io::{Answer, Mailbox, run_to_completion};
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer};

#[test]
fn files_not_loaded_in_time_are_a_timeout() {
    let ca = TestCa::new("ca");
    let server = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["127.0.0.1"])));
    let url = server.url("/ok");
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-http-tls-slow-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join("ca.pem");
    std::fs::write(&path, &ca.cert().cert_pem).unwrap();
    let timeout = Duration::from_millis(500);
    let spec = ProbeSpec::http(&url)
        .unwrap()
        .with_timeout(timeout)
        .unwrap()
        .with_tls(TlsOptions { verify: TlsVerify::CaFile(path), ..TlsOptions::default() })
        .unwrap();
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };

    // Hold every pool thread until the probe has timed out.
    let poll = Poll::new().unwrap();
    let waker = Arc::new(mio::Waker::new(poll.registry(), Token(1)).unwrap());
    let holder = Mailbox::new(waker);
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
    let held: Vec<_> = (0..MAX_THREADS as u64)
        .map(|t| {
            let (started, release) = (started_tx.clone(), release_rx.clone());
            holder.submit_blocking(t, move || {
                started.send(()).unwrap();
                let _ = release.lock().unwrap().recv();
                Box::new(()) as Answer
            })
        })
        .collect();
    for _ in 0..MAX_THREADS {
        started_rx.recv_timeout(Duration::from_secs(30)).expect("a pool thread started");
    }

    let began = Instant::now();
    let o = run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit));
    let took = began.elapsed();
    for _ in 0..MAX_THREADS {
        release_tx.send(()).unwrap();
    }
    drop(held);
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (
            ProbeResult::Failure,
            Reason::Timeout,
            format!(
                "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            )
            .as_str()
        ),
        "{o:?}"
    );
    assert!(took < timeout * 10, "took {took:?}");

    // With the pool free again, the same probe goes through.
    let o = run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit));
    assert_eq!((o.result, o.message.as_str()), (ProbeResult::Success, ""), "{o:?}");
}
