//! What the test files of the `prober` binary share: running it and other commands to
//! completion within a bound, reading their output, temporary files, running watches whose
//! lines arrive one by one, scrapes of `--metrics` ([`scrape`]), TLS fixtures.
//!
//! No pass condition depends on wall-clock time, except generous "did not hang" bounds.
#![allow(dead_code, unused_imports)] // each test file uses its own part

pub use std::ffi::OsString;
pub use std::io::{BufRead, BufReader, Read, Write};
pub use std::net::SocketAddr;
pub use std::os::unix::ffi::OsStringExt;
pub use std::path::PathBuf;
pub use std::process::{Child, Command, ExitStatus, Stdio};
pub use std::sync::atomic::{AtomicUsize, Ordering};
pub use std::sync::mpsc::{Receiver, channel};
pub use std::time::{Duration, Instant};

pub use nix::sys::signal::{self, Signal};
pub use nix::unistd::Pid;
pub use prober_testkit::TargetServer;
pub use prober_testkit::tls::{Issued, TestCa, TlsServerOptions, TlsTargetServer, TlsVersions};
pub use serde_json::Value;

mod scrape;
pub use scrape::{Exposition, Response, http, scrape, scrape_until};

/// Bound for anything awaited: only there to turn a hang into a failure. The slowest command,
/// a watch file of a hundred thousand targets on a loaded machine, stays well inside it.
pub const HANG: Duration = Duration::from_secs(120);

/// The `prober` binary under test. With `PROBER_TEST_RUNNER` set (a command and its
/// arguments, split at spaces: `qemu-aarch64 -L /usr/aarch64-linux-gnu` in ci/arm64.sh), it
/// runs under that command, as cargo runs the test binaries under a target's runner: a binary
/// of another architecture cannot be executed directly without a binfmt_misc handler.
pub fn prober() -> Command {
    let mut argv = prober_argv().into_iter();
    let mut cmd = Command::new(argv.next().unwrap());
    cmd.args(argv);
    cmd
}

/// The words that start the `prober` binary under test: its path, after the runner's words
/// when `PROBER_TEST_RUNNER` is set (see [`prober`]).
pub fn prober_argv() -> Vec<String> {
    let exe = env!("CARGO_BIN_EXE_prober").to_string();
    let mut words: Vec<String> = match std::env::var("PROBER_TEST_RUNNER") {
        Ok(runner) => runner.split_whitespace().map(str::to_string).collect(),
        Err(_) => Vec::new(),
    };
    words.push(exe);
    words
}

/// `prober` (under the runner, as [`prober`]) in a private mount namespace whose `/etc/hosts`
/// is `hosts` ([`prober_testkit::netns::hosts_command`]). Add the arguments.
pub fn prober_with_hosts_file(hosts: &std::path::Path) -> Command {
    let argv = prober_argv();
    let mut cmd = prober_testkit::netns::hosts_command(hosts, &argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

/// How a finished command ended and what it printed.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `prober ARGS` to completion (within [`HANG`]).
pub fn run(args: &[&str]) -> Run {
    run_os(args.iter().map(OsString::from))
}

/// Runs `prober ARGS` with arguments that need not be UTF-8.
pub fn run_os(args: impl IntoIterator<Item = OsString>) -> Run {
    run_command(prober().args(args), None)
}

/// Runs `prober ARGS` with `stdin` as its standard input.
pub fn run_with_stdin(args: &[&str], stdin: Vec<u8>) -> Run {
    run_command(prober().args(args), Some(stdin))
}

/// Runs `cmd` to completion (within [`HANG`]), with `stdin` as its standard input (none: the
/// null device), and collects its output, which must be UTF-8.
pub fn run_command(cmd: &mut Command, stdin: Option<Vec<u8>>) -> Run {
    let mut child = cmd
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        // prober may stop reading at its limit: a broken pipe here is expected.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, HANG);
    Run {
        code: status.code().expect("the command ended by a signal"),
        stdout: out.recv().unwrap(),
        stderr: err.recv().unwrap(),
    }
}

/// Reads `r` to its end on a thread of its own; the text arrives on the channel.
pub fn reader(mut r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = r.read_to_end(&mut b);
        let _ = tx.send(String::from_utf8(b).expect("output is UTF-8"));
    });
    rx
}

/// Reads `r` line by line on a thread of its own; each line arrives on the channel.
pub fn line_reader(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for `child` to end; kills it and fails if it has not within `bound`.
pub fn wait_bounded(child: &mut Child, bound: Duration) -> ExitStatus {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command did not finish within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `prober ARGS` (its output discarded) until `requests()` reaches `want`, then kills
/// it; fails if it ends before, or if that takes longer than [`HANG`].
pub fn run_until_requests(args: &[&str], want: u64, requests: impl Fn() -> u64) {
    let mut child = prober()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn prober");
    let limit = Instant::now() + HANG;
    while requests() < want {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("prober ended early: {status}");
        }
        assert!(Instant::now() < limit, "only {} requests", requests());
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The one line of `prober check --json`, parsed.
pub fn json_line(r: &Run) -> Value {
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", r.stdout);
    serde_json::from_str(lines[0]).expect("stdout is one JSON object")
}

pub fn check_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert_eq!(r.stderr, "", "no stderr expected");
    (r.code, json_line(&r))
}

/// The fields every `check --json` line has, with their types.
pub fn assert_common_fields(v: &Value) {
    for key in ["result", "message", "output", "reason"] {
        assert!(v[key].is_string(), "{key} in {v}");
    }
    assert!(v["truncated"].is_boolean(), "{v}");
    assert!(v["duration_ms"].is_number(), "{v}");
    assert!(v["timings"]["total_ms"].is_number(), "{v}");
}

pub fn assert_usage_error(args: &[&str], needle: &str) {
    let r = run(args);
    assert_eq!(r.code, 64, "{args:?}: {}", r.stderr);
    assert_eq!(r.stdout, "", "{args:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line on stderr: {:?}", r.stderr);
    assert!(lines[0].starts_with("prober: "), "{args:?}: {}", lines[0]);
    assert!(lines[0].contains(needle), "{args:?}: {:?} lacks {needle:?}", lines[0]);
}

static FILES: AtomicUsize = AtomicUsize::new(0);

/// A file under the tests' temporary directory, removed when dropped.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn new(ext: &str) -> TempFile {
        let n = FILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("cli-{}-{n}.{ext}", std::process::id());
        TempFile(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name))
    }

    /// The path as an argument.
    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes `text` to a fresh temporary file.
pub fn write_file(ext: &str, text: &str) -> TempFile {
    let file = TempFile::new(ext);
    std::fs::write(&file.0, text).unwrap();
    file
}

/// A running `prober watch ARGS` whose standard output and error arrive line by line; killed
/// when dropped, so that a test that failed half-way leaves no watch behind.
pub struct Watch {
    child: Child,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    /// Every stdout line received so far, in order.
    pub seen: Vec<String>,
}

impl Watch {
    pub fn start(args: &[&str]) -> Watch {
        // A watch started by a user at a terminal has SIGINT at its default disposition. The
        // tests may themselves run with SIGINT ignored (a background job of a non-interactive
        // shell, which the child would inherit and, as shells expect, keep ignoring): give the
        // child the default, so that what is tested does not depend on how the tests started.
        Watch::start_with_sigint(args, signal::SigHandler::SigDfl)
    }

    /// [`Watch::start`] with SIGINT's disposition at start set to `sigint` (`SigDfl` or
    /// `SigIgn`).
    pub fn start_with_sigint(args: &[&str], sigint: signal::SigHandler) -> Watch {
        Watch::start_with(args, sigint, &[])
    }

    /// [`Watch::start`] with `env` added to the watch's environment.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Watch {
        Watch::start_with(args, signal::SigHandler::SigDfl, env)
    }

    fn start_with(args: &[&str], sigint: signal::SigHandler, env: &[(&str, &str)]) -> Watch {
        let mut cmd = prober();
        cmd.envs(env.iter().copied());
        // SAFETY: signal(2) is async-signal-safe, and the closure touches nothing else; the
        // dispositions set (default or ignore) run no handler code.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                signal::signal(Signal::SIGINT, sigint)?;
                Ok(())
            });
        }
        let mut child = cmd
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober watch");
        let stdout = line_reader(child.stdout.take().unwrap());
        let stderr = line_reader(child.stderr.take().unwrap());
        Watch { child, stdout, stderr, seen: Vec::new() }
    }

    /// The next stdout line.
    pub fn next(&mut self) -> String {
        let line = self.stdout.recv_timeout(HANG).unwrap_or_else(|_| {
            panic!("prober watch printed no further line in time; so far: {:#?}", self.seen)
        });
        self.seen.push(line.clone());
        line
    }

    /// The next stdout line, parsed as JSON.
    pub fn next_json(&mut self) -> Value {
        let line = self.next();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
    }

    /// The next state line of `target` and `role` (`--json`), skipping others.
    pub fn next_state(&mut self, target: &str, role: &str) -> Value {
        loop {
            let v = self.next_json();
            assert!(v.get("summary").is_none(), "watch ended before the expected state: {v}");
            if v["target"] == target && v["role"] == role {
                return v;
            }
        }
    }

    /// Reads stdout up to the first line that satisfies `want`, and returns it.
    pub fn until(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self.next();
            assert!(
                !line.starts_with("summary") && !line.contains("\"summary\""),
                "watch ended before {what}: {:#?}",
                self.seen
            );
            if want(&line) {
                return line;
            }
        }
    }

    /// The process id of the watch.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The address of `--metrics`, from the line the watch prints on standard error.
    pub fn metrics_addr(&self) -> SocketAddr {
        let line = self.stderr.recv_timeout(HANG).expect("no metrics line on stderr");
        let addr = line
            .strip_prefix("prober: metrics at ")
            .and_then(|l| l.strip_prefix("http://").or_else(|| l.strip_prefix("https://")))
            .and_then(|l| l.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"));
        addr.parse().unwrap()
    }

    /// The address of `--health-listen`, from the next line the watch prints on standard
    /// error (after the metrics line, when both are asked for).
    pub fn health_addr(&self) -> SocketAddr {
        let line = self.stderr.recv_timeout(HANG).expect("no health line on stderr");
        let addr = line
            .strip_prefix("prober: health at ")
            .and_then(|l| l.strip_prefix("http://").or_else(|| l.strip_prefix("https://")))
            .and_then(|l| l.strip_suffix("/readyz"))
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"));
        addr.parse().unwrap()
    }

    /// Sends `sig` to the watch (our own child, not reaped yet, so the pid is its).
    pub fn signal(&self, sig: Signal) {
        signal::kill(pid_of(&self.child), sig).expect("kill");
    }

    /// Stops the watch with SIGTERM; returns its status and the rest of its stdout.
    pub fn stop(&mut self) -> (ExitStatus, Vec<String>) {
        self.signal(Signal::SIGTERM);
        self.wait()
    }

    /// Waits for the watch to end (within [`HANG`]); returns its status and the rest of its
    /// stdout.
    pub fn wait(&mut self) -> (ExitStatus, Vec<String>) {
        let status = wait_bounded(&mut self.child, HANG);
        let rest: Vec<String> = self.stdout.iter().collect();
        self.seen.extend(rest.iter().cloned());
        (status, rest)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A watch file of one target, `name`, with one probe: `role` (such as `readinessProbe`), its
/// handler `probe` on one line (such as `httpGet: {path: /, port: 80}`) and its other fields
/// `settings`, one `key: value` each.
pub fn one_probe_file(name: &str, role: &str, probe: &str, settings: &[&str]) -> TempFile {
    let mut text = format!("targets:\n- name: {name}\n  {role}:\n    {probe}\n");
    for setting in settings {
        text.push_str(&format!("    {setting}\n"));
    }
    write_file("yaml", &text)
}

pub fn health_watch_file(server: &TargetServer) -> TempFile {
    one_probe_file(
        "web",
        "readinessProbe",
        &format!("httpGet: {{path: /health, port: {}}}", server.port()),
        &["periodMilliseconds: 100", "timeoutMilliseconds: 500", "failureThreshold: 1"],
    )
}

/// `prober watch` on `text` is refused: exit 64, nothing on stdout, one error line on stderr
/// that names the file and contains every needle.
pub fn assert_bad_file(args: &[&str], text: &str, ext: &str, needles: &[&str]) {
    let file = write_file(ext, text);
    let mut all: Vec<&str> = vec!["watch", "--for", "1s"];
    all.extend_from_slice(args);
    all.push(file.path());
    let r = run(&all);
    assert_eq!(r.code, 64, "{text}\nstdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "", "nothing runs on bad input");
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.starts_with("prober: note: ")).collect();
    assert_eq!(lines.len(), 1, "one error line: {:?}", r.stderr);
    assert!(lines[0].starts_with(&format!("prober: {}: ", file.display())), "{}", lines[0]);
    for n in needles {
        assert!(lines[0].contains(n), "{:?} lacks {n:?}", lines[0]);
    }
}

/// Waits for `/bin/sh -c 'echo $$$$ > FILE; exec ...'` to have written its pid.
pub fn wait_for_pid(path: &std::path::Path) -> i32 {
    let deadline = Instant::now() + HANG;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if let Some(line) = s.strip_suffix('\n') {
                return line.parse().expect("a pid");
            }
        }
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until process `pid` has ended (gone, or a zombie left to whoever adopted it).
pub fn assert_process_ends(pid: i32) {
    let deadline = Instant::now() + HANG;
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return,
            Ok(stat) => {
                let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
                if state == Some(Some('Z')) {
                    return;
                }
            }
        }
        assert!(Instant::now() < deadline, "process {pid} outlived prober");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Where a command writes its pid (the file does not exist yet).
pub fn pid_file() -> TempFile {
    TempFile::new("pid")
}

/// `not_after` of the server certificates below: 2031-02-03T00:00:00Z.
pub const CERT_NOT_AFTER: i64 = 1_927_843_200;

/// A directory under the tests' temporary directory, removed with its files when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let n = FILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("cli-{}-{n}-{tag}", std::process::id());
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA, a server certificate it signed (expiring at [`CERT_NOT_AFTER`]) and another CA, as
/// files: `ca.crt`, `server.crt`, `server.key`, `other-ca.crt`.
pub struct Pki {
    pub dir: TempDir,
    pub server: Issued,
    pub ca_file: String,
    pub other_ca_file: String,
    pub cert: String,
    pub key: String,
}

pub fn pki(tag: &str, names: &[&str]) -> Pki {
    let dir = TempDir::new(tag);
    let ca = TestCa::new("prober-cli test CA");
    let server = ca.issue_expiring(names, (2031, 2, 3));
    let (ca_file, _) = ca.cert().write_files(&dir.0, "ca");
    let (cert, key) = server.write_files(&dir.0, "server");
    let (other_ca_file, _) = TestCa::new("another CA").cert().write_files(&dir.0, "other-ca");
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    Pki {
        ca_file: s(ca_file),
        other_ca_file: s(other_ca_file),
        cert: s(cert),
        key: s(key),
        dir,
        server,
    }
}

pub fn grpc_target(port: u16, service: &str) -> String {
    format!("grpc://127.0.0.1:{port}/{service}")
}

/// The state lines of a finished `watch --json` run as `TARGET ROLE RESULT`, and the lines.
pub fn states_of(stdout: &str) -> (Vec<String>, Vec<Value>) {
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let states = lines
        .iter()
        .filter(|v| v.get("role").is_some())
        .map(|v| {
            format!(
                "{} {} {}",
                v["target"].as_str().unwrap(),
                v["role"].as_str().unwrap(),
                v["result"].as_str().unwrap()
            )
        })
        .collect();
    (states, lines)
}

/// The pid of our own child, for kill(2).
pub fn pid_of(child: &Child) -> Pid {
    Pid::from_raw(i32::try_from(child.id()).expect("a pid fits in i32"))
}
