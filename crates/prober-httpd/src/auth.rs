//! `basic_auth_users`: credentials checked against bcrypt hashes, off the server's loop.
//!
//! bcrypt is slow on purpose (tens of milliseconds at the usual cost of 10), so a check runs
//! on a thread of its own, never on the loop that serves everyone else: a client sending
//! wrong passwords keeps that thread busy, not the scrapes. A user that is not configured is
//! checked against a configured hash all the same, so that the time taken does not tell which
//! users exist.
//!
//! A flood of wrong passwords must not lock out a scraper whose password is right, so:
//! - passwords verified right are remembered apart from wrong ones, a few per configured
//!   user, and only a right password of the same user takes one's place: a scraper sending the
//!   same credentials every time costs one bcrypt check in all, and is answered from memory,
//!   never queued, whatever wrong passwords arrive;
//! - wrong pairs are remembered too (a scraper with a stale password is not checked again
//!   every scrape), in a bounded set that is cleared when full, which forgets wrong pairs only;
//! - at most [`QUEUE`] checks wait, and at most [`PER_CLIENT`] of them from one client address
//!   (an IPv6 /64): past that the address is answered 429 at once, so one address flooding
//!   leaves room for the first check of another.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;

/// How many passwords verified right are remembered per configured user (bcrypt reads 72
/// bytes of a password, so several texts can be right; a rotation has two at once).
const GOOD_PER_USER: usize = 4;

/// How many wrong pairs are remembered before they are forgotten (those only).
const BAD_PAIRS: usize = 1024;

/// How many checks may wait for the checking thread; past that, requests needing a new check
/// are answered 503 (credentials verified before are still answered at once).
const QUEUE: usize = 32;

/// How many of the waiting checks may come from one client address; past that, its requests
/// needing a new check are answered 429.
const PER_CLIENT: usize = 4;

/// A check to make: connection `conn`, from `client`, sent `user` and `password`.
pub(crate) struct Job {
    pub(crate) conn: usize,
    client: Option<IpAddr>,
    user: String,
    password: String,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("conn", &self.conn)
            .field("client", &self.client)
            .field("user", &self.user)
            .field("password", &"<secret>")
            .finish()
    }
}

/// What the loop does with a request's credentials.
#[derive(Debug)]
pub(crate) enum Verdict {
    Allowed,
    Denied,
    /// Sent to the checking thread; its answer comes back through `Auth::results`.
    Pending,
    /// The checking thread is behind: 503.
    Busy,
    /// This client address already has [`PER_CLIENT`] checks waiting: 429.
    Throttled,
}

/// What the checks so far have shown.
#[derive(Default)]
struct Memory {
    /// Passwords verified right, by user: at most [`GOOD_PER_USER`] each, configured users only.
    good: HashMap<String, VecDeque<String>>,
    /// Pairs verified wrong: at most [`BAD_PAIRS`].
    bad: HashSet<(String, String)>,
    /// Checks waiting or running, by client address.
    pending: HashMap<Option<IpAddr>, usize>,
}

impl Memory {
    fn remember(&mut self, user: String, password: String, ok: bool) {
        if ok {
            let list = self.good.entry(user).or_default();
            if !list.contains(&password) {
                if list.len() >= GOOD_PER_USER {
                    list.pop_front();
                }
                list.push_back(password);
            }
        } else {
            if self.bad.len() >= BAD_PAIRS {
                self.bad.clear();
            }
            self.bad.insert((user, password));
        }
    }

    fn done(&mut self, client: Option<IpAddr>) {
        if let Some(n) = self.pending.get_mut(&client) {
            *n -= 1;
            if *n == 0 {
                self.pending.remove(&client);
            }
        }
    }
}

type Shared = Arc<Mutex<Memory>>;

/// The users' memory and the way to the checking thread.
pub(crate) struct Auth {
    memory: Shared,
    jobs: SyncSender<Job>,
    /// Checks done: connection and whether its credentials were right.
    pub(crate) results: Arc<Mutex<Vec<(usize, bool)>>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The remembered passwords are never printed.
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

impl Auth {
    /// Starts the checking thread; `done` is called after each check (it wakes the loop).
    pub(crate) fn start(
        users: HashMap<String, String>,
        done: impl Fn() + Send + 'static,
    ) -> std::io::Result<Auth> {
        let users = Arc::new(users);
        let memory: Shared = Arc::default();
        let results: Arc<Mutex<Vec<(usize, bool)>>> = Arc::default();
        let (jobs, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let thread = Checker { users, memory: memory.clone(), results: results.clone() };
        std::thread::Builder::new()
            .name("http-auth".into())
            // The checks of every later request depend on this thread: should it die, the
            // process is aborted as when the server thread dies (see `abort::or_abort`).
            .spawn(move || {
                crate::abort::or_abort("http-auth", || {
                    thread.run(&rx, &done);
                    Ok(())
                })
            })?;
        Ok(Auth { memory, jobs, results })
    }

    /// The verdict on a request's `Authorization` header, for connection `conn` from
    /// `client`.
    pub(crate) fn check(
        &self,
        conn: usize,
        client: Option<IpAddr>,
        authorization: Option<&str>,
    ) -> Verdict {
        let Some((user, password)) = authorization.and_then(basic) else {
            return Verdict::Denied;
        };
        let mut memory = self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        if memory.good.get(&user).is_some_and(|list| list.contains(&password)) {
            return Verdict::Allowed;
        }
        let key = (user, password);
        if memory.bad.contains(&key) {
            return Verdict::Denied;
        }
        let client = client.map(network);
        if memory.pending.get(&client).copied().unwrap_or(0) >= PER_CLIENT {
            return Verdict::Throttled;
        }
        let (user, password) = key;
        // Counted under the lock, which the checking thread takes before it counts the check
        // done.
        match self.jobs.try_send(Job { conn, client, user, password }) {
            Ok(()) => {
                *memory.pending.entry(client).or_default() += 1;
                Verdict::Pending
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => Verdict::Busy,
        }
    }
}

/// The network a client address counts for: an IPv6 address's /64 (one host is commonly
/// given a whole /64, so its addresses are one client), an IPv4 address itself.
fn network(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// `Basic BASE64(user:password)`: the user and password of an `Authorization` header.
pub fn basic(header: &str) -> Option<(String, String)> {
    let (scheme, creds) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(creds.trim()).ok()?;
    let raw = String::from_utf8(raw).ok()?;
    let (user, password) = raw.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

struct Checker {
    users: Arc<HashMap<String, String>>,
    memory: Shared,
    results: Arc<Mutex<Vec<(usize, bool)>>>,
}

impl Checker {
    fn run(&self, jobs: &Receiver<Job>, done: &dyn Fn()) {
        // Unknown users are checked against a configured hash: the same cost either way.
        let Some(decoy) = self.users.values().next().cloned() else { return };
        for job in jobs {
            let known = self.users.get(&job.user);
            let hash = known.unwrap_or(&decoy);
            // A panic in the hash check is a denial of this pair, not the end of the thread.
            let verified = catch_unwind(AssertUnwindSafe(|| bcrypt::verify(&job.password, hash)));
            let ok = matches!(verified, Ok(Ok(true))) && known.is_some();
            {
                let mut memory = self.memory.lock().unwrap_or_else(PoisonError::into_inner);
                memory.remember(job.user, job.password, ok);
                memory.done(job.client);
            }
            self.results.lock().unwrap_or_else(PoisonError::into_inner).push((job.conn, ok));
            done();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials() {
        assert_eq!(basic("Basic dXNlcjpwYTpzcw=="), Some(("user".into(), "pa:ss".into())));
        assert_eq!(basic("basic  dXNlcjo= "), Some(("user".into(), String::new())));
        assert_eq!(basic("Bearer dXNlcjpwYXNz"), None);
        assert_eq!(basic("Basic !!"), None);
        assert_eq!(basic("Basic dXNlcg=="), None);
    }

    /// A request or a check printed with `{:?}` does not show the client's credentials.
    #[test]
    fn credentials_are_not_printed() {
        let req = crate::Request {
            method: "GET".into(),
            path: "/metrics".into(),
            query: String::new(),
            headers: vec![
                ("authorization".into(), "Basic dXNlcjpodW50ZXIy".into()),
                ("Cookie".into(), "id=hunter2".into()),
                ("Accept".into(), "text/plain".into()),
            ],
        };
        let job = Job { conn: 1, client: None, user: "user".into(), password: "hunter2".into() };
        for shown in [format!("{req:?}"), format!("{req:#?}"), format!("{job:?}")] {
            assert!(!shown.contains("hunter2") && !shown.contains("dXNlcjpodW50ZXIy"), "{shown}");
            assert!(shown.contains("<secret>"), "{shown}");
        }
        assert!(format!("{req:?}").contains("text/plain"));
    }

    #[test]
    fn clients_count_by_address_and_ipv6_64() {
        let n = |s: &str| network(s.parse().unwrap());
        assert_eq!(n("192.0.2.7"), n("192.0.2.7"));
        assert_ne!(n("192.0.2.7"), n("192.0.2.8"));
        assert_eq!(n("::ffff:192.0.2.7"), n("192.0.2.7"));
        assert_eq!(n("2001:db8:1:2::1"), n("2001:db8:1:2:ffff::9"));
        assert_ne!(n("2001:db8:1:2::1"), n("2001:db8:1:3::1"));
    }

    /// Wrong pairs never take the place of right ones, and right ones are bounded per user.
    #[test]
    fn wrong_pairs_never_displace_right_ones() {
        let mut m = Memory::default();
        m.remember("scraper".into(), "right".into(), true);
        for i in 0..3 * BAD_PAIRS {
            m.remember("scraper".into(), format!("wrong-{i}"), false);
        }
        assert!(m.bad.len() <= BAD_PAIRS);
        assert_eq!(m.good["scraper"], ["right"]);
        for i in 0..2 * GOOD_PER_USER {
            m.remember("scraper".into(), format!("right-{i}"), true);
        }
        assert_eq!(m.good["scraper"].len(), GOOD_PER_USER);
        // The right one seen again is not added twice.
        m.remember("scraper".into(), format!("right-{}", 2 * GOOD_PER_USER - 1), true);
        assert_eq!(m.good["scraper"].len(), GOOD_PER_USER);
    }
}
