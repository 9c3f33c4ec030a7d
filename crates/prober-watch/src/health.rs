//! `prober watch --health-listen ADDR`: one combined health endpoint over the watched
//! targets, answered as the Kubernetes API server answers `/readyz` and `/livez`.
//!
//! `GET /readyz` is 200 `ok` when every target is ready, else 503 with one line per target
//! (`[+]web ok`, `[-]db failed: readiness failure (refused)`) and `readyz check failed`;
//! `?verbose` lists the targets on success too, ending with `readyz check passed`.
//! `/readyz/TARGET` asks about one target (percent-encoded; 404 for an unknown one). `/livez`
//! is the same for liveness. The watch loop updates the table on every published change;
//! `prober_httpd`'s server (shared with `--metrics` when both name one address) reads it on
//! its own thread.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use prober_httpd::{Response, Server};

use crate::escape::escape_for_terminal;
use crate::target_state::{TargetState, Why};

/// What the endpoint knows of one target.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    /// `None` when ready; else why not (`readiness failure (refused)`).
    not_ready: Option<Why>,
    /// `None` when live; else why not.
    not_live: Option<Why>,
}

/// The table the watch loop writes and the server reads.
#[derive(Debug, Clone)]
pub struct Health(Arc<Mutex<Vec<Entry>>>);

/// Which question: `/readyz` or `/livez`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Ready,
    Live,
}

impl Health {
    /// A table of `states`, in their order (which the verbose answers keep).
    pub fn new(states: &[TargetState]) -> Health {
        Health(Arc::new(Mutex::new(states.iter().map(entry).collect())))
    }

    /// Target `i` changed, or ran: its state and reasons as they are now. Nothing is
    /// allocated: a run costs a lock and a few words copied.
    pub fn update(&self, i: usize, t: &TargetState) {
        let mut table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = table.get_mut(i) {
            e.not_ready = t.why_not_ready();
            e.not_live = t.why_not_live();
        }
    }

    /// Serves `/readyz` and `/livez` (and the paths under them) of `server` from this table.
    pub fn route(&self, server: &mut Server) {
        for path in ["/readyz", "/livez"] {
            let h = self.clone();
            server.route_tree(path, move |req| {
                match h.respond(req.path.as_bytes(), req.query.as_bytes()) {
                    Some((status, body)) => Response::text(status, body),
                    None => Response::text(404, "not found\n"),
                }
            });
        }
    }

    /// The answer to `path` (percent-encoded, without the query) with `query`: status and
    /// body; `None` for a path that is not the endpoint's.
    pub fn respond(&self, path: &[u8], query: &[u8]) -> Option<(u16, String)> {
        let (check, rest) = if let Some(rest) = path.strip_prefix(b"/readyz") {
            (Check::Ready, rest)
        } else if let Some(rest) = path.strip_prefix(b"/livez") {
            (Check::Live, rest)
        } else {
            return None;
        };
        let what = if check == Check::Ready { "readyz" } else { "livez" };
        let verbose =
            query.split(|&b| b == b'&').any(|p| p.split(|&b| b == b'=').next() == Some(b"verbose"));
        let table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let why = |e: &Entry| {
            if check == Check::Ready { e.not_ready } else { e.not_live }
        };
        let one = match rest {
            b"" | b"/" => None,
            r => match r.strip_prefix(b"/").map(percent_decode) {
                Some(Some(name)) => Some(name),
                _ => return Some((404, format!("not found: ask /{what} or /{what}/TARGET\n"))),
            },
        };
        if let Some(name) = one {
            let Some(e) = table.iter().find(|e| e.name == name) else {
                return Some((404, format!("no target {}\n", escape_for_terminal(&name))));
            };
            return Some(match why(e) {
                None => (200, "ok\n".into()),
                Some(w) => (
                    503,
                    format!(
                        "[-]{} failed: {w}\n{what} check failed\n",
                        escape_for_terminal(&e.name)
                    ),
                ),
            });
        }
        let failed = table.iter().any(|e| why(e).is_some());
        if !failed && !verbose {
            return Some((200, "ok\n".into()));
        }
        // As the API server: a failure lists every check, verbose or not.
        let mut body = String::new();
        for e in table.iter() {
            let name = escape_for_terminal(&e.name);
            let _ = match why(e) {
                None => writeln!(body, "[+]{name} ok"),
                Some(w) => writeln!(body, "[-]{name} failed: {w}"),
            };
        }
        let _ = writeln!(body, "{what} check {}", if failed { "failed" } else { "passed" });
        Some((if failed { 503 } else { 200 }, body))
    }
}

fn entry(t: &TargetState) -> Entry {
    Entry { name: t.name.clone(), not_ready: t.why_not_ready(), not_live: t.why_not_live() }
}

/// `%XX` decoded (the rest as it is); `None` when the result is not UTF-8 or an escape is bad.
fn percent_decode(s: &[u8]) -> Option<String> {
    String::from_utf8(prober::percent_decode(s)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::{ProbeResult, Reason, Role};

    fn target(name: &str, ready: bool) -> TargetState {
        let mut t = TargetState::new(name.into(), [false, true, true]);
        if ready {
            t.publish(Role::Readiness, ProbeResult::Success, Some(Reason::None));
        } else {
            t.publish(Role::Readiness, ProbeResult::Failure, Some(Reason::Refused));
        }
        t
    }

    #[test]
    fn answers() {
        let states = [target("web", true), target("db 1", false)];
        let h = Health::new(&states);
        let get = |p: &str, q: &str| h.respond(p.as_bytes(), q.as_bytes()).unwrap();
        assert_eq!(get("/livez", ""), (200, "ok\n".into()));
        assert_eq!(
            get("/livez", "verbose"),
            (200, "[+]web ok\n[+]db 1 ok\nlivez check passed\n".into())
        );
        let failed =
            "[+]web ok\n[-]db 1 failed: readiness failure (refused)\nreadyz check failed\n";
        assert_eq!(get("/readyz", ""), (503, failed.into()));
        assert_eq!(get("/readyz", "x=1&verbose=true"), (503, failed.into()));
        assert_eq!(get("/readyz/web", ""), (200, "ok\n".into()));
        assert_eq!(get("/readyz/db%201", "").0, 503);
        assert_eq!(get("/readyz/nope", ""), (404, "no target nope\n".into()));
        assert_eq!(get("/readyz/%zz", "").0, 404);
        // A sign is not a hex digit: the escape is bad, not the byte 0x01.
        let bad = (404, "not found: ask /readyz or /readyz/TARGET\n".to_string());
        assert_eq!(get("/readyz/%+1", ""), bad);
        assert_eq!(get("/readyz/%-1", ""), bad);
        assert_eq!(get("/readyz/%4", ""), bad);
        assert_eq!(get("/readyz/w%65b", ""), (200, "ok\n".into()));
        assert!(h.respond(b"/readyzz", b"").is_some_and(|r| r.0 == 404));
        assert!(h.respond(b"/metrics", b"").is_none());
        h.update(1, &target("db 1", true));
        assert_eq!(get("/readyz", ""), (200, "ok\n".into()));
    }
}
