//! TLS files are parsed once while they do not change, and again once they do. Alone in its
//! test binary: the parse counter is process-wide.
#![cfg(feature = "tls")]

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use prober_core::{ProbeKind, ProbeResult, ProbeSpec, TlsOptions, TlsVerify};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer};
use prober_transport::tls::material_parses;

#[test]
fn an_unchanged_file_is_parsed_once() {
    let ca = TestCa::new("ca");
    let server = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["127.0.0.1"])));
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-http-tls-cache-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join("ca.pem");
    std::fs::write(&path, &ca.cert().cert_pem).unwrap();
    let tls = TlsOptions { verify: TlsVerify::CaFile(path.clone()), ..TlsOptions::default() };
    let spec = ProbeSpec::http(&server.url("/ok"))
        .unwrap()
        .with_timeout(Duration::from_secs(5))
        .unwrap()
        .with_tls(tls)
        .unwrap();
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
    let run = || {
        let o = run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit));
        assert_eq!((o.result, o.message.as_str()), (ProbeResult::Success, ""), "{o:?}");
    };

    let before = material_parses();
    for _ in 0..20 {
        run();
    }
    assert_eq!(material_parses() - before, 1, "20 runs with an unchanged CA file");

    // A new mtime (same contents, size and inode): parsed again, once.
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(5)).unwrap();
    drop(f);
    for _ in 0..5 {
        run();
    }
    assert_eq!(material_parses() - before, 2, "after the file changed");
}
