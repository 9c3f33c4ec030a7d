//! Basic authentication under a flood of wrong passwords, on a real server with real bcrypt
//! hashes: credentials already verified keep being answered (never 503), and one client
//! address flooding cannot keep another's first check out of the queue.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use base64::Engine as _;
use common::{HANG, read_answer, start, temp_dir};
use prober_httpd::{Limits, WebConfig};

/// More distinct wrong passwords than the server ever remembered (1,024) before it forgot
/// every checked pair, the scraper's too.
const FLOOD: usize = 1_100;

/// Wrong passwords checked in the flood from one address: long enough for another's check.
const FAIR_FLOOD: usize = 300;

/// Connections the flood keeps busy at once: more than the 32 checks that may wait.
const FLOODERS: u8 = 48;

/// A request for `/metrics` with `user:password`.
fn scrape(user: &str, password: &str) -> String {
    let creds = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("GET /metrics HTTP/1.1\r\nHost: t\r\nAuthorization: Basic {creds}\r\n\r\n")
}

/// A kept connection to `addr` from the loopback address `from`.
fn connect_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&addr.into()).unwrap();
    let s: TcpStream = sock.into();
    s.set_read_timeout(Some(HANG)).unwrap();
    s
}

/// A web config with two users, `prometheus` and `backup`, whose hashes are of cost 4 (the
/// lowest, so the flood takes a second or two).
fn server(name: &str) -> prober_httpd::Running {
    let dir = temp_dir(name);
    let scraper = bcrypt::hash("right", 4).unwrap();
    let backup = bcrypt::hash("other", 4).unwrap();
    std::fs::write(
        dir.join("web.yml"),
        format!("basic_auth_users:\n  prometheus: '{scraper}'\n  backup: '{backup}'\n"),
    )
    .unwrap();
    start(Limits::default(), Some(WebConfig::load(&dir.join("web.yml")).unwrap()))
}

/// Runs the flood: `FLOODERS` kept connections, the `t`th from the loopback address
/// `from(t)`, sending distinct wrong passwords for `prometheus` until `until` of them were
/// answered 401 (each one a bcrypt check and, before the fix, a pair remembered). The loop is
/// bounded by the attempts.
fn flood(
    from: fn(u8) -> [u8; 4],
    until: usize,
    addr: SocketAddr,
    denied: &Arc<AtomicUsize>,
    started: &Arc<Barrier>,
) -> Vec<std::thread::JoinHandle<usize>> {
    (0..FLOODERS)
        .map(|t| {
            let (denied, started) = (denied.clone(), started.clone());
            std::thread::spawn(move || {
                let mut s = connect_from(from(t), addr);
                started.wait();
                let mut others = 0;
                for i in 0..until * 100 {
                    if denied.load(Ordering::SeqCst) >= until {
                        break;
                    }
                    s.write_all(scrape("prometheus", &format!("wrong-{t}-{i}")).as_bytes())
                        .unwrap();
                    match read_answer(&mut s).status {
                        401 => {
                            denied.fetch_add(1, Ordering::SeqCst);
                        }
                        // Turned away without a check: the flood tries again.
                        _ => others += 1,
                    }
                }
                others
            })
        })
        .collect()
}

#[test]
fn verified_credentials_keep_working_under_a_flood_of_wrong_passwords() {
    let server = server("flood");
    let addr = server.local_addr();
    let mut scraper = connect_from([127, 0, 0, 1], addr);
    let right = scrape("prometheus", "right");
    scraper.write_all(right.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut scraper).status, 200, "verified once");

    let denied = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(Barrier::new(usize::from(FLOODERS) + 1));
    // Each flooder from an address of its own: the 32 checks that may wait are all taken.
    let flooders = flood(|t| [127, 0, 1, t + 1], FLOOD, addr, &denied, &started);
    started.wait();
    // The scraper keeps scraping for as long as the flood lasts, and once after it.
    // (The flooders stop by themselves: at `FLOOD` denials or their bound of attempts.)
    let mut statuses = Vec::new();
    let mut over = false;
    while !over {
        over = flooders.iter().all(std::thread::JoinHandle::is_finished);
        scraper.write_all(right.as_bytes()).unwrap();
        statuses.push(read_answer(&mut scraper).status);
    }
    for f in flooders {
        f.join().unwrap();
    }
    assert!(denied.load(Ordering::SeqCst) >= FLOOD);
    let refused: Vec<u16> = statuses.iter().copied().filter(|s| *s != 200).collect();
    assert!(
        refused.is_empty(),
        "{} of {} scrapes refused: {refused:?}",
        refused.len(),
        statuses.len()
    );
}

#[test]
fn a_flooding_address_leaves_room_for_another_addresss_first_check() {
    let server = server("fair");
    let addr = server.local_addr();
    let denied = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(Barrier::new(usize::from(FLOODERS) + 1));
    let flooders = flood(|_| [127, 0, 0, 3], FAIR_FLOOD, addr, &denied, &started);
    started.wait();
    // Wait for the flood to be under way: its first wrong passwords checked.
    let mut spins = 0u64;
    while denied.load(Ordering::SeqCst) < 64 && spins < 1 << 40 {
        std::thread::yield_now();
        spins += 1;
    }
    // `backup` was never verified: its first check needs the queue the flood is filling.
    let mut backup = connect_from([127, 0, 0, 1], addr);
    backup.write_all(scrape("backup", "other").as_bytes()).unwrap();
    let status = read_answer(&mut backup).status;
    let flood_was_on = denied.load(Ordering::SeqCst) < FAIR_FLOOD;
    for f in flooders {
        f.join().unwrap();
    }
    assert!(flood_was_on, "the flood ended before the check: the test proves nothing");
    assert_eq!(status, 200, "a new user's first check during another address's flood");
}
