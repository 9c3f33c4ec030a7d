//! A process in namespaces of its own, made by `unshare` (util-linux), for tests of exec
//! probes that run inside another process's namespaces.
//!
//! [`Namespaced::start`] needs root and `unshare`; without them it panics, saying so: the
//! namespace tests fail loudly rather than skip (CI runs them as root).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// What to make.
#[derive(Clone, Debug)]
pub struct Options {
    /// The namespace's host name (also names the marker directory).
    pub hostname: String,
    /// A user namespace too (`--user --map-root-user`): root inside, mapped to root outside.
    pub user: bool,
}

/// A process in new mount, UTS, IPC, network, PID (with its own `/proc`) and, if asked, user
/// namespaces: the init of its PID namespace, a `sleep`, with its own host name and a tmpfs on
/// [`Namespaced::dir`] holding a file `marker` ("only-inside") that exists only in its mount
/// namespace. Its network namespace has a loopback interface only, down. Killed and reaped on
/// drop, even when the test fails.
#[derive(Debug)]
pub struct Namespaced {
    unshare: Child,
    /// The PID of the namespaces' process, as the host sees it.
    pub pid: u32,
    /// The directory whose contents only the namespace sees.
    pub dir: PathBuf,
}

/// Panics unless this process runs as root.
pub fn need_root() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "the namespace tests need root (CI runs them as root); run them as root: they fail \
         rather than skip"
    );
}

impl Namespaced {
    /// Makes the namespaces and waits until the process in them is ready.
    pub fn start(opts: &Options) -> Namespaced {
        need_root();
        let dir = std::env::temp_dir().join(format!(
            "prober-ns-{}-{}",
            std::process::id(),
            opts.hostname
        ));
        std::fs::create_dir_all(&dir).expect("marker directory");
        let script = format!(
            "set -e; hostname {h}; mount -t tmpfs none {d}; echo only-inside > {d}/marker; \
             echo ready; exec sleep 1000000",
            h = opts.hostname,
            d = dir.display()
        );
        let mut cmd = Command::new("unshare");
        if opts.user {
            cmd.args(["--user", "--map-root-user"]);
        }
        cmd.args(["--mount", "--uts", "--ipc", "--net", "--pid", "--fork", "--mount-proc"])
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Kept for the failure message; unread otherwise (unshare complains to it when
            // its child is killed at the end).
            .stderr(Stdio::piped());
        let mut unshare = cmd.spawn().unwrap_or_else(|e| {
            panic!("the namespace tests need `unshare` (util-linux): {e}; they do not skip")
        });
        // The event waited for: the script's "ready", written once everything is in place.
        let mut line = String::new();
        let stdout = unshare.stdout.take().expect("piped");
        let _ = BufReader::new(stdout).read_line(&mut line);
        if line != "ready\n" {
            let _ = unshare.kill();
            let status = unshare.wait();
            let mut stderr = String::new();
            if let Some(mut e) = unshare.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
            }
            panic!(
                "unshare could not make the namespaces ({status:?}): {stderr}; the tests do not \
                 skip"
            );
        }
        let parent = unshare.id();
        let pid = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .ok()
            .and_then(|c| c.split_whitespace().next()?.parse().ok())
            .expect("unshare's child");
        Namespaced { unshare, pid, dir }
    }

    /// The marker file's path (as seen inside; absent on the host).
    pub fn marker(&self) -> PathBuf {
        self.dir.join("marker")
    }
}

impl Drop for Namespaced {
    fn drop(&mut self) {
        // Killing the PID namespace's init ends everything in it; then unshare exits.
        // SAFETY: kill with the pid of unshare's child: unshare has not been reaped, and it
        // does not reap its child before it exits itself, so the pid cannot have been reused.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
        let _ = self.unshare.wait();
        let _ = std::fs::remove_dir(&self.dir);
    }
}
