//! The grpc-go health server of `crates/prober-grpc/testdata/health-server`, built once per test
//! process with `go build` into the cargo target directory. A gRPC server nobody here wrote.
//!
//! Shared by prober-grpc's tests and prober-engine's (through `#[path]`). Without Go the tests
//! fail with a message saying so: they are never skipped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The Go module of the server (relative to the crate that includes this file).
fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../prober-grpc/testdata/health-server")
}

/// Builds the server once per process; later calls return its path.
pub fn binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(&dir).expect("create the cargo target tmp directory");
        let out = dir.join("grpc-health-server");
        // Built under a unique name and renamed, so that test processes building at the same
        // time never run a half-written binary.
        let tmp = dir.join(format!("grpc-health-server.{}.tmp", std::process::id()));
        let src = source_dir();
        let status = Command::new("go")
            .arg("build")
            // No VCS stamping: the binary is a test fixture, and stamping fails where git
            // refuses the checkout (ownership) or is missing.
            .arg("-buildvcs=false")
            .arg("-o")
            .arg(&tmp)
            .arg(".")
            .current_dir(&src)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "the gRPC tests need Go to build the grpc-go health server in {}: running \
                     `go build` failed: {e}. Install Go (https://go.dev/dl/) and put `go` in PATH; \
                     the module proxy must be reachable the first time (GOPROXY).",
                    src.display()
                )
            });
        assert!(
            status.success(),
            "`go build` of the grpc-go health server in {} failed ({status}); see its output above",
            src.display()
        );
        std::fs::rename(&tmp, &out).expect("move the health server into place");
        out
    })
}

/// A running health server; dropping it closes its stdin, which ends it.
#[derive(Debug)]
pub struct HealthServer {
    child: Child,
    stdin: Option<ChildStdin>,
    port: u16,
}

impl HealthServer {
    /// Starts the server with `args` (see `main.go` for the flags).
    pub fn start(args: &[&str]) -> HealthServer {
        let mut child = Command::new(binary())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the health server");
        let stdin = child.stdin.take();
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut line).expect("read the health server's port");
        let port = line.trim().parse().unwrap_or_else(|_| {
            let status = child.wait();
            panic!("the health server {args:?} did not print its port (got {line:?}, {status:?})")
        });
        HealthServer { child, stdin, port }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for HealthServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
