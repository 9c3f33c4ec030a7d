//! Reaping children that were killed but had not exited yet when their probe ended.
//!
//! A probe kills its command's process group with SIGKILL and normally reaps the child at once
//! (its pidfd turns readable within microseconds). When the child has not exited by then (a
//! cancelled probe, or a process stuck in uninterruptible sleep), it is handed here: one
//! process-wide thread, started on first use, polls exactly those pids with
//! `waitpid(pid, WNOHANG)`. It never calls `waitpid(-1)`, so children of the host process are
//! never touched.
//!
//! The same thread removes the cgroups of contained exec runs ([`remove_cgroup`]): the kernel
//! refuses to remove a cgroup until the processes killed in it have exited.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// What the thread still has to do.
#[derive(Debug, Default)]
struct Pending {
    pids: Vec<libc::pid_t>,
    /// Cgroup directories to remove once their killed processes have exited.
    cgroups: Vec<Leftover>,
}

/// A cgroup directory whose removal is retried, less often the longer it stays busy.
#[derive(Debug)]
struct Leftover {
    dir: PathBuf,
    next: Instant,
    delay: Duration,
    given_up_at: Instant,
}

/// The first retry of a busy cgroup; each later one waits twice as long, up to
/// [`CGROUP_RETRY_MAX`].
const CGROUP_RETRY_FIRST: Duration = Duration::from_millis(10);
const CGROUP_RETRY_MAX: Duration = Duration::from_secs(10);
/// A cgroup still busy this long after its kill (a process stuck in the kernel) is left where
/// it is: an empty cgroup later is harmless to the host, and the name of the next run's differs.
const CGROUP_GIVE_UP: Duration = Duration::from_secs(600);

#[derive(Debug, Default)]
struct Reaper {
    pending: Mutex<Pending>,
    cv: Condvar,
    /// False when the reaper thread could not be started.
    running: bool,
}

fn reaper() -> &'static Reaper {
    static REAPER: OnceLock<Reaper> = OnceLock::new();
    REAPER.get_or_init(|| {
        let running = std::thread::Builder::new()
            .name("prober-reaper".into())
            .stack_size(128 * 1024)
            .spawn(run)
            .is_ok();
        Reaper { running, ..Reaper::default() }
    })
}

/// Reaps `pid` once it exits. The caller must own `pid` (a child it spawned and has not reaped)
/// and should already have sent it SIGKILL.
pub fn adopt(pid: libc::pid_t) {
    if try_reap(pid) {
        return;
    }
    let r = reaper();
    if !r.running {
        // No thread to hand it to: wait here. The child has been sent SIGKILL, so this is short
        // unless it is stuck in the kernel; a zombie left behind would be worse.
        let _ = crate::sys::waitpid(pid, 0);
        return;
    }
    r.pending.lock().pids.push(pid);
    r.cv.notify_one();
}

/// How many adopted children are still waiting to be reaped (for tests and diagnostics).
pub fn pending() -> usize {
    reaper().pending.lock().pids.len()
}

/// Removes the cgroup directory `dir` once it is empty. The caller has killed everything in it
/// (`cgroup.kill`); killed processes leave it when they exit, which may be a moment later (or
/// much later for one stuck in the kernel), so the removal is retried here until the kernel
/// takes it. Any answer but "busy" ends the attempts (already gone, or not ours to remove).
pub fn remove_cgroup(dir: PathBuf) {
    if try_remove(&dir) {
        return;
    }
    let r = reaper();
    if !r.running {
        // No thread, and the caller may be a poll thread that must not wait: the cgroup is
        // left. A leftover cgroup is harmless to the host and named in nothing we report.
        return;
    }
    let now = Instant::now();
    let delay = CGROUP_RETRY_FIRST;
    let leftover = Leftover { dir, next: now + delay, delay, given_up_at: now + CGROUP_GIVE_UP };
    r.pending.lock().cgroups.push(leftover);
    r.cv.notify_one();
}

/// How many cgroups are still waiting to be removed (for tests and diagnostics).
pub fn pending_cgroups() -> usize {
    reaper().pending.lock().cgroups.len()
}

/// True when `dir` is removed or cannot be (anything but EBUSY).
fn try_remove(dir: &std::path::Path) -> bool {
    match std::fs::remove_dir(dir) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() != Some(libc::EBUSY),
    }
}

/// Reaps `pid` if it has exited. True when reaped (or when it is not our child any more).
pub fn try_reap(pid: libc::pid_t) -> bool {
    // Ok(pid): reaped; Err (ECHILD): already gone; Ok(0): still running.
    !matches!(crate::sys::waitpid(pid, libc::WNOHANG), Ok(0))
}

fn run() {
    let r = reaper();
    let mut pending = r.pending.lock();
    loop {
        if pending.pids.is_empty() && pending.cgroups.is_empty() {
            r.cv.wait(&mut pending);
            continue;
        }
        pending.pids.retain(|&pid| !try_reap(pid));
        let now = Instant::now();
        pending.cgroups.retain_mut(|c| {
            if c.next > now {
                return true;
            }
            if try_remove(&c.dir) || now >= c.given_up_at {
                return false;
            }
            c.delay = (c.delay * 2).min(CGROUP_RETRY_MAX);
            c.next = now + c.delay;
            true
        });
        // Children are polled every 10 ms; cgroups when their next retry is due.
        let mut wait = pending.cgroups.iter().map(|c| c.next.saturating_duration_since(now)).min();
        if !pending.pids.is_empty() {
            wait = Some(wait.map_or(CGROUP_RETRY_FIRST, |w| w.min(CGROUP_RETRY_FIRST)));
        }
        if let Some(wait) = wait {
            r.cv.wait_for(&mut pending, wait.max(Duration::from_millis(1)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn reaps_a_killed_child() {
        let child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as libc::pid_t;
        // SAFETY: pid is our own unreaped child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        adopt(pid);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && std::path::Path::new(&format!("/proc/{pid}")).exists() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "child {pid} not reaped");
        std::mem::forget(child);
    }

    #[test]
    fn remove_cgroup_removes_now_or_gives_up_on_anything_but_busy() {
        let base = std::env::temp_dir().join(format!("prober-reaper-{}", std::process::id()));
        let empty = base.join("empty");
        let full = base.join("full");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(full.join("inside")).unwrap();
        remove_cgroup(empty.clone());
        assert!(!empty.exists());
        // ENOTEMPTY is not a cgroup waiting for its processes to exit: nothing is queued.
        remove_cgroup(full.clone());
        assert!(full.exists());
        assert_eq!(pending_cgroups(), 0);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
