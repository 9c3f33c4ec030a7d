//! Real network namespaces for tests (issue 29): [`TestNetns`] makes a named namespace with
//! `ip netns add` (a unique name per test), brings its `lo` up, runs servers inside it, and
//! deletes it when dropped, also when the test fails (the guard drops while the panic unwinds).
//!
//! Making namespaces needs root (CI runs as root). Without it [`TestNetns::new`] panics with a
//! message saying so: these tests fail loudly, they never skip.
//!
//! Three ways to put something inside:
//! - [`TestNetns::start_server`]: a [`TargetServer`] of this process listening inside (its
//!   listener is made by a short-lived thread that enters the namespace; the server's threads
//!   then serve it from anywhere, since a socket stays in its namespace);
//! - [`TestNetns::command`]: any program run inside with `ip netns exec` (which also mounts
//!   [`TestNetns::set_hosts`]'s file over `/etc/hosts` for it);
//! - [`TestNetns::run_in`]: any closure, on a thread inside.
//!
//! [`hosts_command`] runs a program in the host's network but with its own `/etc/hosts` (a
//! private mount namespace), for tests of what a name resolves to through the host's resolver.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::TargetServer;

/// A named network namespace that lives as long as this guard.
#[derive(Debug)]
pub struct TestNetns {
    name: String,
    path: PathBuf,
}

fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "ip {}: {} {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl TestNetns {
    /// A new namespace named `prober-TAG-PID-N`, with `lo` up (127.0.0.1 and ::1).
    ///
    /// # Panics
    ///
    /// When the namespace cannot be made (not root, no `ip`): loudly, so that a test needing
    /// namespaces fails rather than skips.
    pub fn new(tag: &str) -> TestNetns {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("prober-{tag}-{}-{n}", std::process::id());
        if let Err(e) = ip(&["netns", "add", &name]) {
            panic!(
                "cannot create network namespace {name}: {e}\n\
                 namespace tests need root and iproute2 (CI runs them as root); they never skip"
            );
        }
        // From here on the guard deletes the namespace, whatever happens next.
        let ns = TestNetns { path: PathBuf::from(format!("/run/netns/{name}")), name };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// The namespace's name (`ip netns` and `/etc/netns/NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace's file, `/run/netns/NAME`: what probes name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `ip -n NAME ARGS...` (e.g. `["addr", "add", "10.1.2.3/32", "dev", "lo"]`).
    ///
    /// # Panics
    ///
    /// When `ip` fails, with its message.
    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        if let Err(e) = ip(&all) {
            panic!("{e}");
        }
    }

    /// Adds an address (`10.1.2.3/32`, `fd00::1/128`) to the namespace's `lo`.
    ///
    /// # Panics
    ///
    /// As [`TestNetns::ip`].
    pub fn add_address(&self, cidr: &str) {
        let mut args = vec!["addr", "add", cidr, "dev", "lo"];
        if cidr.contains(':') {
            // No duplicate address detection: the address is usable at once.
            args.push("nodad");
        }
        self.ip(&args);
    }

    /// Runs `f` on a new thread that has entered the namespace, and returns what it returned.
    /// Sockets `f` makes stay in the namespace after the thread has ended.
    ///
    /// # Panics
    ///
    /// When the namespace cannot be entered, or `f` panics.
    pub fn run_in<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let file = std::fs::File::open(&self.path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", self.path.display()));
        std::thread::spawn(move || {
            // SAFETY: the descriptor is open for the whole call (`file` lives until the end of
            // the closure); setns changes only this thread, which ends after `f`.
            let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns: {}", io::Error::last_os_error());
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }

    /// A target server listening inside the namespace on `addr` (port 0: any free port).
    ///
    /// # Panics
    ///
    /// When it cannot listen there.
    pub fn start_server(&self, addr: SocketAddr) -> TargetServer {
        self.run_in(move || TargetServer::start_on(addr))
            .unwrap_or_else(|e| panic!("cannot listen on {addr} in the namespace: {e}"))
    }

    /// A listener inside on `addr` whose accept queue is full, so that connects to it hang
    /// (the kernel drops their SYNs): a path that never answers, for Happy Eyeballs. Keep both
    /// values alive as long as it should hang.
    ///
    /// # Panics
    ///
    /// When it cannot listen there.
    pub fn start_hanging(&self, addr: SocketAddr) -> (socket2::Socket, Vec<std::net::TcpStream>) {
        self.run_in(move || {
            use socket2::{Domain, Socket, Type};
            let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
            s.set_reuse_address(true)?;
            s.bind(&addr.into())?;
            s.listen(0)?;
            let bound = s.local_addr()?.as_socket().expect("an IP socket");
            let mut fillers = Vec::new();
            for _ in 0..8 {
                let t = std::time::Duration::from_millis(200);
                match std::net::TcpStream::connect_timeout(&bound, t) {
                    Ok(c) => fillers.push(c),
                    Err(_) => break,
                }
            }
            Ok::<_, io::Error>((s, fillers))
        })
        .unwrap_or_else(|e| panic!("cannot make a hanging listener on {addr}: {e}"))
    }

    /// `ip netns exec NAME PROGRAM`: a command that runs `program` inside (add its arguments).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Gives the programs of [`TestNetns::command`] this `/etc/hosts` (`ip netns exec` mounts
    /// `/etc/netns/NAME/hosts` over it); removed with the namespace.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn set_hosts(&self, contents: &str) {
        let dir = PathBuf::from(format!("/etc/netns/{}", self.name));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("hosts"), contents))
            .unwrap_or_else(|e| panic!("cannot write {}/hosts: {e}", dir.display()));
    }
}

impl Drop for TestNetns {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(format!("/etc/netns/{}", self.name));
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            // Not a panic: this may run while a failed test unwinds.
            eprintln!("warning: cannot delete network namespace {}: {e}", self.name);
        }
    }
}

/// A command that runs `program` in a private mount namespace where `hosts` is mounted over
/// `/etc/hosts` (`unshare --mount`, then a bind mount): the host's network, another
/// `/etc/hosts`. Add the program's arguments to the returned command.
pub fn hosts_command(hosts: &Path, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$0" /etc/hosts && exec "$@""#)
        .arg(hosts)
        .arg(program);
    c
}
