//! `basic_auth_users`: credentials checked against bcrypt hashes, off the server's loop.
//!
//! bcrypt is slow on purpose (tens of milliseconds at the usual cost of 10), so a check runs
//! on a thread of its own, never on the loop that serves everyone else: a client sending
//! wrong passwords keeps that thread busy, not the scrapes. As the exporter-toolkit does,
//! checked (user, password) pairs are cached, so a scraper sending the same credentials every
//! time costs one bcrypt check in all; the cache is bounded (cleared when full). A user that is
//! not configured is checked against a configured hash all the same, so that the time taken
//! does not tell which users exist.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;

/// How many checked pairs are remembered before the cache is cleared.
const CACHE_PAIRS: usize = 1024;

/// How many checks may wait for the checking thread; past that, requests needing a new check
/// are answered 503 (cached credentials are still answered at once).
const QUEUE: usize = 32;

/// A check to make: connection `conn` sent `user` and `password`.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) conn: usize,
    user: String,
    password: String,
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
}

type Cache = Arc<Mutex<HashMap<(String, String), bool>>>;

/// The users, the cache, and the way to the checking thread.
#[derive(Debug)]
pub(crate) struct Auth {
    cache: Cache,
    jobs: SyncSender<Job>,
    /// Checks done: connection and whether its credentials were right.
    pub(crate) results: Arc<Mutex<Vec<(usize, bool)>>>,
}

impl Auth {
    /// Starts the checking thread; `done` is called after each check (it wakes the loop).
    pub(crate) fn start(
        users: HashMap<String, String>,
        done: impl Fn() + Send + 'static,
    ) -> std::io::Result<Auth> {
        let users = Arc::new(users);
        let cache: Cache = Arc::default();
        let results: Arc<Mutex<Vec<(usize, bool)>>> = Arc::default();
        let (jobs, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let thread = Checker { users, cache: cache.clone(), results: results.clone() };
        std::thread::Builder::new()
            .name("http-auth".into())
            .spawn(move || thread.run(&rx, &done))?;
        Ok(Auth { cache, jobs, results })
    }

    /// The verdict on a request's `Authorization` header, for connection `conn`.
    pub(crate) fn check(&self, conn: usize, authorization: Option<&str>) -> Verdict {
        let Some((user, password)) = authorization.and_then(basic) else {
            return Verdict::Denied;
        };
        let key = (user, password);
        if let Some(&ok) = self.cache.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return if ok { Verdict::Allowed } else { Verdict::Denied };
        }
        let (user, password) = key;
        match self.jobs.try_send(Job { conn, user, password }) {
            Ok(()) => Verdict::Pending,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => Verdict::Busy,
        }
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
    cache: Cache,
    results: Arc<Mutex<Vec<(usize, bool)>>>,
}

impl Checker {
    fn run(&self, jobs: &Receiver<Job>, done: &dyn Fn()) {
        // Unknown users are checked against a configured hash: the same cost either way.
        let Some(decoy) = self.users.values().next().cloned() else { return };
        for job in jobs {
            let known = self.users.get(&job.user);
            let hash = known.unwrap_or(&decoy);
            let ok = bcrypt::verify(&job.password, hash).unwrap_or(false) && known.is_some();
            {
                let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
                if cache.len() >= CACHE_PAIRS {
                    cache.clear();
                }
                cache.insert((job.user, job.password), ok);
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
}
