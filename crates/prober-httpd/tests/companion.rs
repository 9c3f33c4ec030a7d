//! A companion on the server's thread (an engine, in `prober serve`): turned when its
//! descriptor is readable or its timeout passes, and the answers it gives there reach their
//! clients although nothing wakes the loop for them.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{connect, read_answer};
use prober_httpd::{Companion, Reply, Response, Running, Server};

/// Replies handed to the companion, each with the time it may answer from.
type Held = Arc<Mutex<Vec<(Instant, Reply)>>>;

/// Answers each held reply once its time has come, with the name of the thread it runs on;
/// readable when a handler has written a byte to its socket pair.
struct Answerer {
    held: Held,
    bell: UnixStream,
    turns: Arc<Mutex<usize>>,
}

impl Companion for Answerer {
    fn fd(&self) -> RawFd {
        self.bell.as_raw_fd()
    }

    fn timeout(&self) -> Option<Duration> {
        let now = Instant::now();
        self.held.lock().unwrap().iter().map(|(at, _)| at.saturating_duration_since(now)).min()
    }

    fn turn(&mut self) -> std::io::Result<()> {
        *self.turns.lock().unwrap() += 1;
        let mut buf = [0u8; 64];
        loop {
            match self.bell.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        let now = Instant::now();
        let mut held = self.held.lock().unwrap();
        let (due, later): (Vec<_>, Vec<_>) = held.drain(..).partition(|(at, _)| *at <= now);
        *held = later;
        drop(held);
        for (_, reply) in due {
            let name = std::thread::current().name().unwrap_or("?").to_string();
            reply.send(Response::text(200, name));
        }
        Ok(())
    }
}

/// A server whose `/now` is answered by the companion at its next turn (the handler rings
/// it), and `/after?ms=N` once N milliseconds have passed (nothing rings: only the timeout
/// turns it). Also returns how many turns the companion had.
fn start() -> (Running, Arc<Mutex<usize>>) {
    let held: Held = Arc::default();
    let (bell, ringer) = UnixStream::pair().unwrap();
    bell.set_nonblocking(true).unwrap();
    let turns = Arc::new(Mutex::new(0));
    let companion = Answerer { held: held.clone(), bell, turns: turns.clone() };
    let mut s =
        Server::bind("127.0.0.1:0".parse().unwrap()).unwrap().with_companion(Box::new(companion));
    let (h, ringer) = (held.clone(), Mutex::new(ringer));
    s.route_deferred("/now", move |_, reply| {
        h.lock().unwrap().push((Instant::now(), reply));
        ringer.lock().unwrap().write_all(b"!").unwrap();
    });
    s.route_deferred("/after", move |req, reply| {
        let ms: u64 = req.query.strip_prefix("ms=").unwrap().parse().unwrap();
        held.lock().unwrap().push((Instant::now() + Duration::from_millis(ms), reply));
    });
    (s.spawn("test-http").unwrap(), turns)
}

#[test]
fn answers_given_on_the_server_thread_reach_every_client() {
    let (server, _) = start();
    let addr = server.local_addr();
    let mut clients: Vec<_> = (0..20).map(|_| connect(addr)).collect();
    for round in 0..3 {
        for c in &mut clients {
            c.write_all(b"GET /now HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        }
        for c in &mut clients {
            let a = read_answer(c);
            assert_eq!((a.status, a.body.as_str()), (200, "test-http"), "round {round}: {a:?}");
        }
    }
}

#[test]
fn a_companion_is_turned_when_its_timeout_passes() {
    let (server, turns) = start();
    let mut c = connect(server.local_addr());
    c.write_all(b"GET /after?ms=50 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let a = read_answer(&mut c);
    assert_eq!((a.status, a.body.as_str()), (200, "test-http"));
    assert!(*turns.lock().unwrap() >= 1);
}
