//! A cgroup v2 per run ([`ExecSpec::cgroup`](prober_core::ExecSpec::cgroup)): what contains the
//! processes that leave the command's process group.
//!
//! The process group kill reaches every process that stayed in the group; one that called
//! `setsid` (or `setpgid`) left it, and nothing but its own exit ends it. A cgroup is left only
//! by writing oneself into another one (write access there: root, unless the cgroup file system
//! is read-only), and every process forked inside it is born inside it, so killing the cgroup (`cgroup.kill`, Linux 5.14: SIGKILL to every process in it, including
//! those forking at that moment) ends everything the command started.
//!
//! The command must be born in the cgroup, or it could fork before being moved: the child
//! writes `0` (itself) to the cgroup's `cgroup.procs` between fork and exec, through a
//! descriptor opened here (see `command_spawn` and `nsenter`). The cgroup is created before the
//! spawn and removed after the kill, once the kernel accepts it (it refuses while a killed
//! process has not exited): by [`prober_io::reaper::remove_cgroup`].

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use prober_io::{os_result, reaper};

/// The cgroup of one run, made in the spec's directory.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    dir: PathBuf,
    /// `cgroup.procs`, for the child to move itself in.
    procs: OwnedFd,
    /// `cgroup.kill`, opened up front: a kernel without it (before 5.14) fails the run before
    /// the command starts, never after it ran uncontained.
    kill: std::fs::File,
}

/// Makes the names unique within this process.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// `prober-PID-T`: the pid makes the names unique on the node while this process lives, `T`
/// (the time of the first run, hex seconds) against a crashed earlier process with the same pid
/// whose cgroups were left behind.
fn prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        format!("prober-{}-{:x}", std::process::id(), since.as_secs())
    })
}

impl RunCgroup {
    /// Creates `prober-PID-T-N` in `parent` and opens its control files.
    pub(crate) fn create(parent: &Path) -> io::Result<RunCgroup> {
        let dir = new_dir(parent)?;
        let open = |name: &str| {
            OpenOptions::new().write(true).custom_flags(libc::O_CLOEXEC).open(dir.join(name))
        };
        match (open("cgroup.procs"), open("cgroup.kill")) {
            (Ok(procs), Ok(kill)) => Ok(RunCgroup { dir, procs: procs.into(), kill }),
            (Err(e), _) | (_, Err(e)) => {
                // Not a cgroup v2 directory (a plain directory, or cgroup v1), or a kernel
                // without cgroup.kill: undo the mkdir.
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The descriptor the child writes `0` to, between fork and exec.
    pub(crate) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// SIGKILL to every process in the cgroup.
    pub(crate) fn kill(&mut self) {
        // Fails only if the cgroup is gone (ENODEV), which means it is empty.
        let _ = self.kill.write_all(b"1");
    }

    /// Closes the control files and removes the cgroup once it is empty (now, or by the
    /// reaper thread). The caller has called [`RunCgroup::kill`] after the command's last
    /// chance to start anything.
    pub(crate) fn remove(self) {
        let RunCgroup { dir, procs, kill } = self;
        drop((procs, kill));
        reaper::remove_cgroup(dir);
    }
}

/// Makes the next free `prober-PID-T-N` in `parent`. A name taken (a leftover) is skipped, a few
/// times at most.
fn new_dir(parent: &Path) -> io::Result<PathBuf> {
    let mut attempts = 0;
    loop {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{}-{n}", prefix()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}

/// In a forked child, before exec: moves the calling process into the cgroup whose
/// `cgroup.procs` is `procs`. Async-signal-safe (one `write`; the error is errno, allocated
/// nowhere), and errno stays set on failure for a caller that reports it by number.
pub(crate) fn join(procs: RawFd) -> io::Result<()> {
    // SAFETY: write of one byte from a static string to a descriptor the caller holds.
    os_result(unsafe { libc::write(procs, c"0".as_ptr().cast(), 1) }).map(drop)
}
