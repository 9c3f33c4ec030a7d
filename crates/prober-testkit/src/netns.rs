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

use crate::hanging::HangingListener;
use crate::server::TargetServer;

/// A named network namespace that lives as long as this guard.
#[derive(Debug)]
pub struct TestNetns {
    name: String,
    path: PathBuf,
    /// Deleted by a [`NetnsSet`] (all at once) rather than by this guard.
    in_set: bool,
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
        let ns =
            TestNetns { path: PathBuf::from(format!("/run/netns/{name}")), name, in_set: false };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// `n` namespaces made at once (`ip -batch`: one process for all), each with `lo` up, for
    /// tests at scale; deleted together when the set is dropped.
    ///
    /// # Panics
    ///
    /// As [`TestNetns::new`].
    pub fn many(tag: &str, n: usize) -> NetnsSet {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let batch = SEQ.fetch_add(1, Ordering::Relaxed);
        let names: Vec<String> =
            (0..n).map(|i| format!("prober-{tag}-{}-{batch}-{i}", std::process::id())).collect();
        let script: String = names.iter().map(|n| format!("netns add {n}\n")).collect();
        // The set deletes whatever exists of it, even when the batch stopped half-way.
        let set = NetnsSet {
            list: names
                .into_iter()
                .map(|name| TestNetns {
                    path: PathBuf::from(format!("/run/netns/{name}")),
                    name,
                    in_set: true,
                })
                .collect(),
        };
        if let Err(e) = ip_batch(&script) {
            panic!(
                "cannot create {n} network namespaces: {e}\n\
                 namespace tests need root and iproute2 (CI runs them as root); they never skip"
            );
        }
        for ns in &set.list {
            ns.run_in(lo_up).unwrap_or_else(|e| panic!("lo up in {}: {e}", ns.name));
        }
        set
    }

    /// Deletes the namespace and makes a new one of the same name (`lo` up): the path stays,
    /// its identity changes, as `/proc/PID/ns/net` does when a container restarts. Whatever
    /// ran inside stays with the old namespace.
    ///
    /// # Panics
    ///
    /// When `ip` fails.
    pub fn recreate(&self) {
        for args in [["netns", "del", &self.name], ["netns", "add", &self.name]] {
            if let Err(e) = ip(&args) {
                panic!("{e}");
            }
        }
        self.ip(&["link", "set", "lo", "up"]);
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

    /// A [`HangingListener`] inside on `addr`: connects to it hang (the kernel drops their
    /// SYNs), a path that never answers, for Happy Eyeballs. Keep it alive as long as it
    /// should hang.
    ///
    /// # Panics
    ///
    /// When it cannot listen there.
    pub fn start_hanging(&self, addr: SocketAddr) -> HangingListener {
        self.run_in(move || HangingListener::bind(addr))
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
        if self.in_set {
            return;
        }
        let _ = std::fs::remove_dir_all(format!("/etc/netns/{}", self.name));
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            // Not a panic: this may run while a failed test unwinds.
            eprintln!("warning: cannot delete network namespace {}: {e}", self.name);
        }
    }
}

/// Namespaces made together by [`TestNetns::many`], deleted together when dropped.
#[derive(Debug)]
pub struct NetnsSet {
    list: Vec<TestNetns>,
}

impl std::ops::Deref for NetnsSet {
    type Target = [TestNetns];
    fn deref(&self) -> &[TestNetns] {
        &self.list
    }
}

impl Drop for NetnsSet {
    fn drop(&mut self) {
        let script: String = self.list.iter().map(|n| format!("netns del {}\n", n.name)).collect();
        // -force: go on past a namespace that was never made (a batch that stopped half-way).
        if let Err(e) = ip_batch_force(&script) {
            eprintln!("warning: cannot delete the test's network namespaces: {e}");
        }
    }
}

fn ip_batch(script: &str) -> io::Result<()> {
    run_batch(&["-batch", "-"], script)
}

fn ip_batch_force(script: &str) -> io::Result<()> {
    run_batch(&["-force", "-batch", "-"], script)
}

fn run_batch(args: &[&str], script: &str) -> io::Result<()> {
    use std::io::Write;
    let mut child = Command::new("ip")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().expect("piped").write_all(script.as_bytes())?;
    let out = child.wait_with_output()?;
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

/// Brings up `lo` of the calling thread's network namespace (`SIOCSIFFLAGS`), without a
/// process: what `ip link set lo up` does, for many namespaces at once.
fn lo_up() -> io::Result<()> {
    // SAFETY: socket() takes no pointers; the descriptor is owned by `fd` below.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` was just returned by socket() and nothing else owns it.
    let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
    // SAFETY: an all-zero ifreq is a valid value of this plain C struct.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: `fd` is open for the whole call and `req` is a valid ifreq the kernel fills.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: as above; the kernel only reads `req`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCSIFFLAGS, &req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
