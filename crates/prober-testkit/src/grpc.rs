//! A gRPC health server nobody here wrote: grpc-go's own `grpc.health.v1` service, from the Go
//! module in `crates/prober-testkit/grpc-health-server`, for every test and benchmark that needs
//! a real gRPC peer (one copy of the server for prober-grpc's, prober-engine's and the command's
//! tests, and for `ci/bench.sh`'s `grpc_oneshot`, which builds the same module).
//!
//! The binary is built with `go build` once per process (Go's build cache makes later builds a
//! link), or taken from [`SERVER_ENV`] when that is set. Without Go, [`HealthServer::start`]
//! panics with a message saying what is missing: a test that needs the server fails, it never
//! skips.
//!
//! The server's flags (see `main.go`): `-status NAME=STATUS` (repeatable; `""` starts
//! `SERVING`), `-no-health`, `-delay DURATION` (before every answer), `-require-user-agent
//! PREFIX`, `-listen ADDR` (instead of `127.0.0.1:0`), `-tls-cert FILE -tls-key FILE`, `-client-ca FILE`, `-http1` (plain HTTP/1.1 `200 ok`
//! instead of gRPC). Commands while it runs ([`HealthServer::command`], for the keep-alive
//! tests): `conns` (connections accepted so far), `checks` (RPCs received so far), `goaway` (a graceful stop of the connections
//! open, new ones served on), `hang` / `answer` (Checks stop answering / answer again), `reset`
//! (every open connection reset).

use std::io::Write;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Environment variable naming an already built server binary: used instead of `go build`
/// (for machines that build the fixtures once, or run the tests without Go).
pub const SERVER_ENV: &str = "PROBER_GRPC_HEALTH_SERVER";

/// The Go module of the server, in this crate's source tree.
#[must_use]
pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("grpc-health-server")
}

/// The server's binary: [`SERVER_ENV`] if set, else built once per process with `go build`
/// next to the running executable (for tests, `target/<profile>/deps`), and that path returned
/// to every later call.
///
/// # Panics
///
/// When Go is missing or the build fails (the message says how to get Go; the module proxy
/// must be reachable the first time), or the executable's directory cannot be found.
pub fn binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        if let Some(prebuilt) = std::env::var_os(SERVER_ENV) {
            return PathBuf::from(prebuilt);
        }
        let exe = std::env::current_exe().expect("the path of the running executable");
        let dir = exe.parent().expect("the running executable's directory").to_path_buf();
        let out = dir.join("grpc-health-server");
        // Built under a unique name and renamed, so that test processes building at the same
        // time never run a half-written binary.
        let tmp = dir.join(format!("grpc-health-server.{}.tmp", std::process::id()));
        let src = source_dir();
        let status = Command::new("go")
            .arg("build")
            // No VCS stamping: the binary is a fixture, and stamping fails where git refuses
            // the checkout (ownership) or is missing.
            .arg("-buildvcs=false")
            .arg("-o")
            .arg(&tmp)
            .arg(".")
            .current_dir(&src)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "the gRPC tests need Go to build the grpc-go health server in {}: running \
                     `go build` failed: {e}. Install Go (https://go.dev/dl/) and put `go` in PATH \
                     (the module proxy must be reachable the first time, GOPROXY), or set {SERVER_ENV} \
                     to a built server.",
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

/// A running health server on `127.0.0.1`; dropping it closes its stdin, which ends it (killed
/// if it has not exited 5 s later).
#[derive(Debug)]
pub struct HealthServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

impl HealthServer {
    /// Starts the server with `args` (the flags in the module's documentation) and waits until
    /// it listens (it prints its port once bound).
    ///
    /// # Panics
    ///
    /// When the binary cannot be built or started, or exits without printing its port (bad
    /// flags: its own message is on stderr).
    #[must_use]
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
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        stdout.read_line(&mut line).expect("read the health server's port");
        let port = line.trim().parse().unwrap_or_else(|_| {
            let status = child.wait();
            panic!("the health server {args:?} did not print its port (got {line:?}, {status:?})")
        });
        HealthServer { child, stdin, stdout, port }
    }

    /// Sends `cmd` (see the module docs) and returns the server's one-line answer, once the
    /// server has done it.
    ///
    /// # Panics
    /// When the server has exited or does not answer.
    pub fn command(&mut self, cmd: &str) -> String {
        let stdin = self.stdin.as_mut().expect("the server's stdin");
        writeln!(stdin, "{cmd}").expect("write a command to the health server");
        stdin.flush().expect("flush the command");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read the health server's answer");
        assert!(!line.is_empty(), "the health server exited instead of answering {cmd:?}");
        line.trim().to_string()
    }

    /// How many RPCs the server has received so far (the `checks` command).
    pub fn checks(&mut self) -> u64 {
        let answer = self.command("checks");
        answer.parse().unwrap_or_else(|_| panic!("`checks` answered {answer:?}"))
    }

    /// How many connections the server has accepted so far (the `conns` command).
    pub fn connections(&mut self) -> u64 {
        let answer = self.command("conns");
        answer.parse().unwrap_or_else(|_| panic!("`conns` answered {answer:?}"))
    }

    /// The loopback port the server listens on (`127.0.0.1`).
    #[must_use]
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
