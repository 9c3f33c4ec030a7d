//! Scrapes of `prober watch --metrics` over a real HTTP connection, and a small parser of the
//! text exposition.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::HANG;

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
    // Nothing more: the server closes the connection after its answer (it keeps connections
    // for further requests otherwise).
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read the answer");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head: {raw:?}"));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{head}"));
    Response { status, head: head.to_string(), body: body.to_string() }
}

/// `GET /metrics` asking for OpenMetrics (as Prometheus does), answered 200, parsed.
pub fn scrape(addr: SocketAddr) -> Exposition {
    let r = http(
        addr,
        b"GET /metrics HTTP/1.1\r\nHost: prober\r\nConnection: close\r\n\
          Accept: application/openmetrics-text;version=1.0.0\r\n\r\n",
    );
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

    /// The sum of every sample `name` whose labels include `labels` (0 when none has them):
    /// a counter over the labels not given (`prober_probe_total` over its reasons).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|(n, l, _)| {
                n == name && labels.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.2)
            .sum()
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
