//! Reaping children that were killed but had not exited yet when their probe ended.
//!
//! A probe kills its command's process group with SIGKILL and normally reaps the child at once
//! (its pidfd turns readable within microseconds). When the child has not exited by then (a
//! cancelled probe, or a process stuck in uninterruptible sleep), it is handed here: one
//! process-wide thread, started on first use, polls exactly those pids with
//! `waitpid(pid, WNOHANG)`. It never calls `waitpid(-1)`, so children of the host process are
//! never touched.

use std::sync::OnceLock;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

#[derive(Debug, Default)]
struct Reaper {
    pids: Mutex<Vec<libc::pid_t>>,
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
    r.pids.lock().push(pid);
    r.cv.notify_one();
}

/// How many adopted children are still waiting to be reaped (for tests and diagnostics).
pub fn pending() -> usize {
    reaper().pids.lock().len()
}

/// Reaps `pid` if it has exited. True when reaped (or when it is not our child any more).
pub fn try_reap(pid: libc::pid_t) -> bool {
    // Ok(pid): reaped; Err (ECHILD): already gone; Ok(0): still running.
    !matches!(crate::sys::waitpid(pid, libc::WNOHANG), Ok(0))
}

fn run() {
    let r = reaper();
    let mut pids = r.pids.lock();
    loop {
        if pids.is_empty() {
            r.cv.wait(&mut pids);
            continue;
        }
        pids.retain(|&pid| !try_reap(pid));
        if !pids.is_empty() {
            r.cv.wait_for(&mut pids, Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Instant;

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
}
