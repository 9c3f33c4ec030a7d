//! A probe of a name that answers at once is not held up by many probes of names whose
//! lookups hang (red-team finding 4: 300 such probes made a probe of a name in `/etc/hosts`
//! time out, every resolver thread being blocked in `getaddrinfo`).
//!
//! Real lookups: the test runs its body again in a child of itself inside a network namespace
//! and a mount namespace of its own (`unshare`: root, as CI runs; without it the test fails,
//! saying so), where `/etc/hosts` names `fast.test`, `/etc/resolv.conf` sends every other
//! name to 127.0.0.1:53, and a UDP socket of the test receives those queries and never
//! answers: each such lookup hangs for the resolver's 30 s timeout.

mod common;

use std::collections::HashSet;
use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::*;
use parking_lot::{Condvar, Mutex};
use prober_core::{ProbeResult, ProbeSpec, Reason};
use prober_engine::Event;

const CHILD: &str = "PROBER_ENGINE_HUNG_LOOKUPS_CHILD";

/// The timeout of the probe of the fast name: what the test is about.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Distinct names whose lookups hang: more than the 16 threads the resolver used to have.
const HUNG_NAMES: usize = 20;
/// Probes of those names, in turn.
const HUNG_PROBES: usize = 300;

#[test]
fn a_name_in_etc_hosts_is_answered_while_300_lookups_hang() {
    if std::env::var_os(CHILD).is_some() {
        return in_child();
    }
    let dir = std::env::temp_dir().join(format!("prober-hung-lookups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = [
        ("hosts", "127.0.0.1 localhost fast.test\n::1 localhost\n"),
        // glibc allows 30 s at most; one attempt: each lookup hangs 30 s, not 60.
        ("resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n"),
        ("nsswitch.conf", "hosts: files dns\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let out = Command::new("unshare")
        .args(["--mount", "--net", "--propagation", "private", "sh", "-c"])
        .arg(
            r#"ip link set lo up && mount --bind "$0/hosts" /etc/hosts &&
               mount --bind "$0/resolv.conf" /etc/resolv.conf &&
               mount --bind "$0/nsswitch.conf" /etc/nsswitch.conf && exec "$@""#,
        )
        .arg(&dir)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "a_name_in_etc_hosts_is_answered_while_300_lookups_hang", "--nocapture"])
        .env(CHILD, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs `unshare` (util-linux): {e}; it does not skip")
        });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "the test's body, run in its own network and mount namespaces (needs root for unshare), \
         failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The child did run the body (a filter matching nothing would also succeed).
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "{out:?}");
}

/// A DNS server that reads queries and never answers, noting the names asked for.
struct SilentDns {
    names: Arc<(Mutex<HashSet<String>>, Condvar)>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SilentDns {
    fn start() -> SilentDns {
        let socket = UdpSocket::bind("127.0.0.1:53")
            .unwrap_or_else(|e| panic!("cannot listen on 127.0.0.1:53 in the namespace: {e}"));
        socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        let names = Arc::new((Mutex::new(HashSet::new()), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let (names, stop) = (names.clone(), stop.clone());
            move || {
                let mut buf = [0u8; 512];
                while !stop.load(Ordering::Acquire) {
                    let Ok(n) = socket.recv(&mut buf) else { continue };
                    if let Some(name) = query_name(&buf[..n]) {
                        names.0.lock().insert(name);
                        names.1.notify_all();
                    }
                }
            }
        });
        SilentDns { names, stop, thread: Some(thread) }
    }

    /// Waits until `n` distinct names have been asked for; false if not within `limit`.
    fn wait_for_names(&self, n: usize, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut names = self.names.0.lock();
        while names.len() < n {
            if self.names.1.wait_until(&mut names, deadline).timed_out() {
                return names.len() >= n;
            }
        }
        true
    }

    fn names(&self) -> usize {
        self.names.0.lock().len()
    }
}

impl Drop for SilentDns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The name of a DNS query (RFC 1035 4.1.2: labels after the 12-byte header), lowercased.
fn query_name(msg: &[u8]) -> Option<String> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = *msg.get(at)? as usize;
        if len == 0 {
            return Some(labels.join(".").to_ascii_lowercase());
        }
        labels.push(String::from_utf8_lossy(msg.get(at + 1..at + 1 + len)?).into_owned());
        at += 1 + len;
    }
}

fn in_child() {
    let dns = SilentDns::start();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut e = engine();
    // The hung probes outlive the test's wait (their lookups outlive them anyway).
    let hung_timeout = 20 * TIMEOUT;
    for i in 0..HUNG_PROBES {
        let name = format!("h{}.hung.test", i % HUNG_NAMES);
        let spec = ProbeSpec::tcp(&name, port.into()).unwrap().with_timeout(hung_timeout).unwrap();
        e.submit(spec, i as u64).unwrap();
    }
    // Lookups of hung names are under way: at least as many names asked for as the resolver
    // used to have threads (all of them blocked, then).
    assert!(dns.wait_for_names(16, 5 * TIMEOUT), "{} names asked for", dns.names());

    let fast_tag = 1_000_000;
    let spec = ProbeSpec::tcp("fast.test", port.into()).unwrap().with_timeout(TIMEOUT).unwrap();
    e.submit(spec, fast_tag).unwrap();
    let mut events = Vec::new();
    let limit = Instant::now() + 5 * TIMEOUT;
    let is_fast = |ev: &Event| matches!(ev, Event::Check { tag, .. } if *tag == fast_tag);
    while !events.iter().any(is_fast) && Instant::now() < limit {
        e.wait(Some(ms(50))).unwrap();
        e.drain(&mut events, usize::MAX);
    }
    let Some(Event::Check { outcome, .. }) = events.iter().find(|ev| is_fast(ev)) else {
        panic!("no answer for fast.test; events: {events:#?}")
    };
    assert_eq!(
        (outcome.result, outcome.reason),
        (ProbeResult::Success, Reason::None),
        "{outcome:?}"
    );
    // Every hung probe was still waiting for its lookup.
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(e.in_flight(), HUNG_PROBES);
    // And every hung name is being looked up at once, beside the fast one: more than the
    // resolver's former 16 threads, one each however many probes ask for it.
    assert!(dns.wait_for_names(HUNG_NAMES, 5 * TIMEOUT), "{} names asked for", dns.names());
}
