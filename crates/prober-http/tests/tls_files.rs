//! Hostile TLS input on loopback: a server certificate whose `notAfter` holds non-ASCII bytes,
//! and CA, certificate and key files that are FIFOs, devices, too large, or renewed between
//! runs. Real files, real FIFOs, real TLS servers (`prober_testkit::tls`).
#![cfg(feature = "tls")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, TlsOptions, TlsVerify};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::tls::{Issued, TestCa, TlsServerOptions, TlsTargetServer};

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit))
}

fn get_with(url: &str, timeout: Duration, tls: TlsOptions) -> Outcome {
    run(&ProbeSpec::http(url).unwrap().with_timeout(timeout).unwrap().with_tls(tls).unwrap())
}

fn verify_with(ca: &Path) -> TlsOptions {
    TlsOptions { verify: TlsVerify::CaFile(ca.to_path_buf()), ..TlsOptions::default() }
}

/// A fresh directory for this test's files.
fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-http-tls-files-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// PEM armour for a DER certificate.
fn pem(der: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = String::new();
    for chunk in der.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                b64.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                b64.push('=');
            }
        }
    }
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// A FIFO that nobody writes to, unless a test hangs on it: then, after `release_after`, a
/// writer opens it and sends a line that is no PEM, so that code which opened it blocking gets
/// unstuck and the test fails on its assertions instead of hanging.
struct Fifo {
    path: PathBuf,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Fifo {
    fn new(path: PathBuf, release_after: Duration) -> Fifo {
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
            .unwrap();
        let (stop, stopped) = mpsc::channel::<()>();
        let p = path.clone();
        let thread = std::thread::spawn(move || {
            if stopped.recv_timeout(release_after) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            eprintln!("releasing {p:?}: a reader has been blocked on it for {release_after:?}");
            loop {
                // ENXIO until a reader has it open.
                let w = std::fs::OpenOptions::new().write(true).custom_flags_nonblock().open(&p);
                if let Ok(mut w) = w {
                    let _ = w.write_all(b"released: no PEM here\n");
                    return;
                }
                if stopped.recv_timeout(Duration::from_millis(50)).is_ok() {
                    return;
                }
            }
        });
        Fifo { path, stop: Some(stop), thread: Some(thread) }
    }
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(nix::libc::O_NONBLOCK)
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[track_caller]
fn assert_unknown_tls(o: &Outcome, message: &str) {
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Unknown, Reason::Tls, message),
        "{o:?}"
    );
}

/// `cert` with its `notAfter` (UTCTime `310203000000Z`) replaced by text holding `é` where the
/// year is: still valid DER framing, the signature no longer matches.
fn with_non_ascii_not_after(cert: &Issued) -> Issued {
    let mut der = cert.cert_der.clone();
    let encoded = b"\x17\x0d310203000000Z";
    let at = der.windows(encoded.len()).position(|w| w == encoded).expect("notAfter") + 2;
    der[at..at + 13].copy_from_slice("3\u{e9}203000000Z".as_bytes());
    Issued { cert_pem: pem(&der), key_pem: cert.key_pem.clone(), cert_der: der }
}

#[test]
fn a_non_ascii_not_after_gives_an_ordinary_outcome() {
    let ca = TestCa::new("ca");
    let cert = with_non_ascii_not_after(&ca.issue_expiring(&["127.0.0.1"], (2031, 2, 3)));
    let server = TlsTargetServer::start(TlsServerOptions::new(cert));
    let url = server.url("/ok");
    let timeout = Duration::from_secs(5);

    // Not verifying: the handshake completes (the key, which signs it, is unchanged); the
    // expiry cannot be read, so none is reported.
    let o = get_with(&url, timeout, TlsOptions::default());
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(o.cert_not_after, None);

    // Verifying against the issuing CA: the certificate is refused, as a TLS failure.
    let d = dir("non-ascii");
    let ca_path = d.join("ca.pem");
    std::fs::write(&ca_path, &ca.cert().cert_pem).unwrap();
    let o = get_with(&url, timeout, verify_with(&ca_path));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    assert!(o.message.starts_with(&format!("Get \"{url}\": tls: ")), "{o:?}");
    assert_eq!(o.cert_not_after, None);
}

#[test]
fn a_fifo_as_a_tls_file_is_refused_within_the_timeout() {
    let ca = TestCa::new("ca");
    let server = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["127.0.0.1"])));
    let url = server.url("/ok");
    let d = dir("fifo");
    let timeout = Duration::from_secs(1);
    let fifo = Fifo::new(d.join("ca.fifo"), timeout * 10);
    let started = Instant::now();
    let o = get_with(&url, timeout, verify_with(&fifo.path));
    let took = started.elapsed();
    assert_unknown_tls(
        &o,
        &format!("TLS setup failed: cannot read CA file {:?}: not a regular file", fifo.path),
    );
    assert!(took < timeout * 3, "took {took:?} with a {timeout:?} timeout");

    // The same for the client certificate and key files.
    let (cert, _) = ca.issue_client("c").write_files(&d, "client");
    let key_fifo = Fifo::new(d.join("key.fifo"), timeout * 10);
    let tls =
        TlsOptions { client_cert: Some((cert, key_fifo.path.clone())), ..TlsOptions::default() };
    let o = get_with(&url, timeout, tls);
    assert_unknown_tls(
        &o,
        &format!(
            "TLS setup failed: cannot read client key file {:?}: not a regular file",
            key_fifo.path
        ),
    );
}

#[test]
fn devices_and_files_over_the_limit_are_refused() {
    let ca = TestCa::new("ca");
    let server = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["127.0.0.1"])));
    let url = server.url("/ok");
    let timeout = Duration::from_secs(5);

    let o = get_with(&url, timeout, verify_with(Path::new("/dev/zero")));
    assert_unknown_tls(
        &o,
        "TLS setup failed: cannot read CA file \"/dev/zero\": not a regular file",
    );

    // A valid CA certificate padded past 1 MiB (PEM ignores text outside its armour).
    let d = dir("large");
    let large = d.join("ca.pem");
    let mut text = ca.cert().cert_pem.clone();
    text.push_str(&"# padding\n".repeat(110_000));
    std::fs::write(&large, &text).unwrap();
    let o = get_with(&url, timeout, verify_with(&large));
    assert_unknown_tls(
        &o,
        &format!(
            "TLS setup failed: cannot read CA file {large:?}: larger than the limit of 1048576 bytes ({} bytes)",
            text.len()
        ),
    );
    // Just under the limit it is used.
    text.truncate(1 << 20);
    std::fs::write(&large, &text).unwrap();
    let o = get_with(&url, timeout, verify_with(&large));
    assert_eq!((o.result, o.message.as_str()), (ProbeResult::Success, ""), "{o:?}");
}

#[test]
fn a_renewed_ca_file_is_used_by_the_next_run() {
    let old_ca = TestCa::new("old");
    let new_ca = TestCa::new("new");
    let server = TlsTargetServer::start(TlsServerOptions::new(new_ca.issue(&["127.0.0.1"])));
    let url = server.url("/ok");
    let timeout = Duration::from_secs(5);
    let d = dir("renewed");
    let path = d.join("ca.pem");
    // Both versions padded to the same size: only the modification time tells them apart.
    let (mut old_pem, mut new_pem) =
        (old_ca.cert().cert_pem.clone(), new_ca.cert().cert_pem.clone());
    let size = old_pem.len().max(new_pem.len()) + 1;
    for pem in [&mut old_pem, &mut new_pem] {
        while pem.len() < size {
            pem.push('\n');
        }
    }
    std::fs::write(&path, &old_pem).unwrap();
    let o = get_with(&url, timeout, verify_with(&path));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    assert!(o.message.contains("UnknownIssuer"), "{o:?}");

    // Rewritten in place (same inode, same size) with a new mtime.
    let f = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).unwrap();
    (&f).write_all(new_pem.as_bytes()).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(1)).unwrap();
    drop(f);
    let o = get_with(&url, timeout, verify_with(&path));
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
}
