//! What the tests of `prober watch`'s explanations and metrics share: a running watch whose
//! standard output and error arrive line by line, watch files, and a scrape of `/metrics` over
//! a real HTTP connection with a small parser of the text exposition.

#![allow(dead_code)] // each test file uses its own part

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// Bound for anything awaited: only there to turn a hang into a failure.
pub const HANG: Duration = Duration::from_secs(60);

/// A watch file in a fresh temporary file, removed on drop.
pub struct WatchFile(PathBuf);

static FILES: AtomicUsize = AtomicUsize::new(0);

impl WatchFile {
    pub fn new(yaml: &str) -> WatchFile {
        let n = FILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("watch-{}-{n}.yaml", std::process::id());
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&path, yaml).unwrap();
        WatchFile(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for WatchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A running `prober watch ARGS`.
pub struct Watch {
    child: Child,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    /// Every stdout line received so far, in order.
    pub seen: Vec<String>,
}

fn lines(r: impl Read + Send + 'static) -> Receiver<String> {
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

impl Watch {
    pub fn start(args: &[&str]) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_prober"))
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober watch");
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
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
            .strip_prefix("prober: metrics at http://")
            .and_then(|l| l.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"));
        addr.parse().unwrap()
    }

    /// Stops the watch with SIGTERM; returns its status and the rest of its stdout.
    pub fn stop(&mut self) -> (ExitStatus, Vec<String>) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("a pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("kill");
        self.wait()
    }

    /// Waits for the watch to end; returns its status and the rest of its stdout.
    pub fn wait(&mut self) -> (ExitStatus, Vec<String>) {
        let deadline = Instant::now() + HANG;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("prober watch did not end within {HANG:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest: Vec<String> = self.stdout.iter().collect();
        self.seen.extend(rest.iter().cloned());
        (status, rest)
    }
}

impl Drop for Watch {
    /// A test that failed half-way leaves no watch behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer of the metrics server.
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// Sends `request` (raw bytes) to `addr` and reads the whole answer.
pub fn http(addr: SocketAddr, request: &[u8]) -> Response {
    let mut s = TcpStream::connect(addr).expect("connect to the metrics server");
    s.set_read_timeout(Some(HANG)).unwrap();
    s.write_all(request).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read the answer");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head: {raw:?}"));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{head}"));
    Response { status, head: head.to_string(), body: body.to_string() }
}

/// `GET /metrics`, answered 200, parsed.
pub fn scrape(addr: SocketAddr) -> Exposition {
    let r = http(addr, b"GET /metrics HTTP/1.1\r\nHost: prober\r\nAccept: */*\r\n\r\n");
    assert_eq!(r.status, 200, "{}", r.head);
    assert!(
        r.head.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
        "{}",
        r.head
    );
    Exposition::parse(&r.body)
}

/// The samples of a text exposition: name, labels, value.
#[derive(Debug)]
pub struct Exposition {
    pub samples: Vec<(String, BTreeMap<String, String>, f64)>,
    pub text: String,
}

impl Exposition {
    /// Parses the text format; panics on anything it does not understand.
    pub fn parse(text: &str) -> Exposition {
        assert!(text.ends_with("# EOF\n"), "no EOF marker: {text}");
        let mut samples = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
            };
            let (name, labels) = match series.split_once('{') {
                None => (series, BTreeMap::new()),
                Some((name, rest)) => {
                    let rest = rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}"));
                    (name, parse_labels(rest))
                }
            };
            samples.push((name.to_string(), labels, value));
        }
        Exposition { samples, text: text.to_string() }
    }

    /// The value of the sample `name` whose labels include `labels`, if exactly one has them.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut found = self.samples.iter().filter(|(n, l, _)| {
            n == name && labels.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        });
        let first = found.next()?;
        assert!(found.next().is_none(), "more than one {name} {labels:?}:\n{}", self.text);
        Some(first.2)
    }

    /// Like [`Exposition::get`], 0 when absent (a counter not yet created).
    pub fn count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or(0.0)
    }
}

/// `a="x",b="y \"q\""` (the text format's escapes: `\\`, `\"`, `\n`).
fn parse_labels(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut chars = s.chars().peekable();
    loop {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        if key.is_empty() {
            return out;
        }
        assert_eq!(chars.next(), Some('"'), "label {key} in {s}");
        let mut value = String::new();
        loop {
            match chars.next().unwrap_or_else(|| panic!("unterminated value in {s}")) {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(c) => value.push(c),
                    None => panic!("bad escape in {s}"),
                },
                c => value.push(c),
            }
        }
        out.insert(key.trim_start_matches(',').to_string(), value);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
}

/// Scrapes until `cond` holds; returns that exposition.
pub fn scrape_until(
    addr: SocketAddr,
    what: &str,
    cond: impl Fn(&Exposition) -> bool,
) -> Exposition {
    let deadline = Instant::now() + HANG;
    loop {
        let e = scrape(addr);
        if cond(&e) {
            return e;
        }
        assert!(Instant::now() < deadline, "never: {what}; last scrape:\n{}", e.text);
        std::thread::sleep(Duration::from_millis(20));
    }
}
