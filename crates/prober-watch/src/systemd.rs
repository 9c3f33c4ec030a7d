//! `prober watch` under systemd's `Type=notify`: the sd_notify protocol, written out (a
//! datagram of `KEY=VALUE` lines to the Unix socket named by `NOTIFY_SOCKET`; see
//! `sd_notify(3)`): a few dozen lines over the standard library's `UnixDatagram`, where a
//! crate would add a dependency to the size-limited binary for the same code.
//!
//! - `READY=1` once every target has its first verdict (see [`TargetState::has_verdict`]), with
//!   the first `STATUS=` that says so; units ordered after the watch start then, not before
//!   its answers mean anything.
//! - `STATUS=` with a one-line summary whenever it changes.
//! - `WATCHDOG=1` every half of `WATCHDOG_USEC` (when `WATCHDOG_PID` is unset or this
//!   process), sent from the watch loop itself and only when the engine made progress since
//!   the last one: a run ended, or the engine had nothing overdue. A loop that is stuck (its
//!   output blocked, the engine wedged) sends none, and systemd restarts the service.
//! - `STOPPING=1` when the watch ends.
//!
//! The socket is unbound, nonblocking and close-on-exec: a message systemd is too slow to take
//! is dropped rather than stall the watch. The three variables are removed from the
//! environment at start, as `sd_notify(3)` does with `unset_environment`, so that probe
//! commands and hooks cannot talk to systemd in the watch's name.

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::{Duration, Instant};

use crate::escape::escape_for_terminal;
use crate::target_state::TargetState;

/// The variables of the protocol, read once and removed.
const VARIABLES: [&str; 3] = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"];

/// How many targets a status line names.
const NAMES_IN_STATUS: usize = 3;

/// The longest status line sent, in bytes.
const MAX_STATUS: usize = 400;

/// The notifications of one watch.
#[derive(Debug)]
pub struct Notifier {
    socket: UnixDatagram,
    addr: SocketAddr,
    /// Half of `WATCHDOG_USEC`: how often `WATCHDOG=1` is due.
    watchdog: Option<Duration>,
    next_ping: Option<Instant>,
    /// A run ended, or the engine had nothing overdue, since the last ping.
    progressed: bool,
    ready_sent: bool,
    last_status: String,
    /// A send failed: said once on standard error.
    warned: bool,
}

/// What the environment asks for, read (and removed) before anything else runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Env {
    socket: Option<String>,
    watchdog_usec: Option<String>,
    watchdog_pid: Option<String>,
}

impl Env {
    /// Reads the protocol's variables and removes them from the environment.
    ///
    /// # Safety
    ///
    /// No other thread may run: the environment is changed.
    pub unsafe fn take() -> Env {
        let [socket, watchdog_usec, watchdog_pid] =
            VARIABLES.map(|v| std::env::var_os(v).and_then(|s| s.into_string().ok()));
        for v in VARIABLES {
            // SAFETY: the caller guarantees that no other thread runs, so none reads the
            // environment while it changes.
            unsafe { std::env::remove_var(v) };
        }
        Env { socket, watchdog_usec, watchdog_pid }
    }

    /// Half of `WATCHDOG_USEC` when the watchdog is this process's: `WATCHDOG_PID` unset or
    /// `pid`. `None` without one (or when it does not parse: systemd sets it, so a bad value
    /// is someone else's and asks for nothing).
    fn watchdog(&self, pid: u32) -> Option<Duration> {
        let usec: u64 = self.watchdog_usec.as_deref()?.parse().ok().filter(|&u| u > 0)?;
        if let Some(p) = &self.watchdog_pid {
            if p.parse::<u32>().ok() != Some(pid) {
                return None;
            }
        }
        Some(Duration::from_micros(usec / 2).max(Duration::from_millis(1)))
    }
}

impl Notifier {
    /// The notifier `env` asks for: `None` without `NOTIFY_SOCKET`.
    ///
    /// # Errors
    ///
    /// A message when the variable names no usable socket (not absolute, not `@abstract`), or
    /// a socket cannot be made.
    pub fn new(env: &Env) -> Result<Option<Notifier>, String> {
        let Some(name) = env.socket.as_deref().filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let addr = address(name)?;
        let socket = UnixDatagram::unbound()
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| format!("NOTIFY_SOCKET: cannot make a socket: {e}"))?;
        let watchdog = env.watchdog(std::process::id());
        Ok(Some(Notifier {
            socket,
            addr,
            watchdog,
            next_ping: watchdog.map(|w| Instant::now() + w),
            progressed: true,
            ready_sent: false,
            last_status: String::new(),
            warned: false,
        }))
    }

    fn send(&mut self, message: &str) {
        let result = loop {
            match self.socket.send_to_addr(message.as_bytes(), &self.addr) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r,
            }
        };
        match result {
            // systemd is behind: this message is dropped, the next says the same or newer.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if !self.warned => {
                self.warned = true;
                eprintln!("prober: note: NOTIFY_SOCKET: cannot notify: {e}");
            }
            _ => {}
        }
    }

    /// After a batch of events: `READY=1` when every target has its first verdict (`waiting`
    /// is how many have none), and `STATUS=` when the summary changed (`changed`: a published
    /// value or a verdict changed, the only things it shows).
    pub fn update(&mut self, states: &[TargetState], waiting: usize, changed: bool) {
        // The summary shows only published values and verdicts: without a change it is the
        // same (the first call always sends one).
        if !changed && !self.last_status.is_empty() {
            return;
        }
        let status = status_line(states, waiting);
        let ready = !self.ready_sent && waiting == 0;
        if !ready && status == self.last_status {
            return;
        }
        let message =
            if ready { format!("READY=1\nSTATUS={status}") } else { format!("STATUS={status}") };
        self.send(&message);
        self.ready_sent |= ready;
        self.last_status = status;
    }

    /// A run ended, or the engine is waiting with nothing overdue: it is making progress.
    pub fn progressed(&mut self) {
        self.progressed = true;
    }

    /// Sends `WATCHDOG=1` when one is due and the engine made progress since the last.
    pub fn tick(&mut self, now: Instant) {
        let (Some(every), Some(next)) = (self.watchdog, self.next_ping) else {
            return;
        };
        if now < next {
            return;
        }
        if self.progressed {
            self.send("WATCHDOG=1");
        }
        self.progressed = false;
        self.next_ping = Some(now + every);
    }

    /// How long until the next `WATCHDOG=1` is due (the watch loop wakes for it).
    pub fn timeout(&self, now: Instant) -> Option<Duration> {
        self.next_ping.map(|n| n.saturating_duration_since(now))
    }

    /// The watch ends.
    pub fn stopping(&mut self) {
        self.send("STOPPING=1");
    }
}

/// `NOTIFY_SOCKET`'s value as an address: an absolute path, or `@NAME` for an abstract one.
fn address(name: &str) -> Result<SocketAddr, String> {
    let bad = |e: io::Error| format!("NOTIFY_SOCKET: bad socket address {name:?}: {e}");
    if let Some(abstract_name) = name.strip_prefix('@') {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::linux::net::SocketAddrExt;
            return SocketAddr::from_abstract_name(abstract_name).map_err(bad);
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = abstract_name;
            return Err(format!("NOTIFY_SOCKET: abstract sockets ({name:?}) exist on Linux only"));
        }
    }
    if !name.starts_with('/') {
        return Err(format!("NOTIFY_SOCKET: {name:?} is neither an absolute path nor @abstract"));
    }
    SocketAddr::from_pathname(name).map_err(bad)
}

/// `2/3 ready, 3/3 live; not ready: db (readiness failure (refused))`, or while targets have
/// no verdict yet, `...; waiting for a first verdict: db`. Names are escaped onto the one line
/// (a newline would end the assignment), at most three of them (`NAMES_IN_STATUS`), and the
/// line is cut to 400 bytes (`MAX_STATUS`).
pub fn status_line(states: &[TargetState], waiting: usize) -> String {
    let n = states.len();
    let ready = states.iter().filter(|t| t.ready()).count();
    let live = states.iter().filter(|t| t.live()).count();
    let mut s = format!("{ready}/{n} ready, {live}/{n} live");
    let (label, mut names): (&str, Vec<String>) = if waiting > 0 {
        let names = states.iter().filter(|t| !t.has_verdict()).map(|t| name(t, None));
        ("waiting for a first verdict", names.take(NAMES_IN_STATUS).collect())
    } else {
        let not_ready = states.iter().filter_map(|t| t.why_not_ready().map(|w| (t, w)));
        ("not ready", not_ready.take(NAMES_IN_STATUS).map(|(t, w)| name(t, Some(w))).collect())
    };
    let count = if waiting > 0 { waiting } else { n - ready };
    if count > names.len() {
        names.push(format!("{} more", count - names.len()));
    }
    if !names.is_empty() {
        s.push_str(&format!("; {label}: {}", names.join(", ")));
    }
    if s.len() > MAX_STATUS {
        let mut end = MAX_STATUS - 3;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("...");
    }
    s
}

fn name(t: &TargetState, why: Option<crate::target_state::Why>) -> String {
    let name = escape_for_terminal(&t.name);
    match why {
        Some(w) => format!("{name} ({w})"),
        None => name.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::{ProbeResult, Reason, Role};

    fn env(usec: Option<&str>, pid: Option<&str>) -> Env {
        Env {
            socket: Some("/run/x".into()),
            watchdog_usec: usec.map(String::from),
            watchdog_pid: pid.map(String::from),
        }
    }

    #[test]
    fn watchdog_is_half_the_interval_and_only_ours() {
        assert_eq!(env(Some("30000000"), None).watchdog(7), Some(Duration::from_secs(15)));
        assert_eq!(env(Some("30000000"), Some("7")).watchdog(7), Some(Duration::from_secs(15)));
        assert_eq!(env(Some("30000000"), Some("8")).watchdog(7), None);
        assert_eq!(env(Some("1"), None).watchdog(7), Some(Duration::from_millis(1)));
        for bad in [None, Some("0"), Some("x"), Some("-5")] {
            assert_eq!(env(bad, None).watchdog(7), None, "{bad:?}");
        }
    }

    #[test]
    fn addresses() {
        assert!(address("/run/systemd/notify").is_ok());
        assert!(address("run/notify").unwrap_err().contains("neither an absolute path"));
        #[cfg(target_os = "linux")]
        assert!(address("@/org/freedesktop/systemd1/notify").is_ok());
    }

    #[test]
    fn the_watchdog_is_fed_only_after_progress() {
        let dir = std::env::temp_dir().join(format!("prober-cli-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let systemd = UnixDatagram::bind(&path).unwrap();
        systemd.set_nonblocking(true).unwrap();
        let env = Env {
            socket: Some(path.to_str().unwrap().into()),
            watchdog_usec: Some("2000000".into()),
            watchdog_pid: None,
        };
        let mut n = Notifier::new(&env).unwrap().unwrap();
        let t0 = Instant::now();
        let second = Duration::from_secs(1);
        assert!(n.timeout(t0).is_some_and(|t| t <= second));
        n.tick(t0); // not due
        n.tick(t0 + second); // due, and nothing said otherwise since the start
        n.tick(t0 + 2 * second); // due, but no progress since the last
        n.progressed();
        n.tick(t0 + 3 * second);
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        while let Ok(len) = systemd.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..len]).into_owned());
        }
        assert_eq!(got, ["WATCHDOG=1", "WATCHDOG=1"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn status_lines() {
        let mut ts: Vec<TargetState> = ["web", "db\n1", "a", "b", "c"]
            .iter()
            .map(|n| TargetState::new(n.to_string(), [false, true, false]))
            .collect();
        assert_eq!(
            status_line(&ts, 5),
            "0/5 ready, 5/5 live; waiting for a first verdict: web, db\\n1, a, 2 more"
        );
        for t in &mut ts {
            t.publish(Role::Readiness, ProbeResult::Success, Some(Reason::None));
        }
        ts[1].publish(Role::Readiness, ProbeResult::Failure, Some(Reason::Refused));
        assert_eq!(
            status_line(&ts, 0),
            "4/5 ready, 5/5 live; not ready: db\\n1 (readiness failure (refused))"
        );
        ts[1].name = "x".repeat(1000);
        let s = status_line(&ts, 0);
        assert_eq!(s.len(), MAX_STATUS);
        assert!(s.ends_with("xx..."), "{s}");
    }
}
