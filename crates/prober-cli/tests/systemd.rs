//! `prober watch` under systemd's `Type=notify`, with a real Unix datagram socket standing in
//! for systemd's (`NOTIFY_SOCKET`): `READY=1` once every target has its first verdict and not
//! before, `STATUS=` on change, `WATCHDOG=1` only while the watch makes progress (a watch whose
//! output is blocked stops it, and resumes when unblocked), `STOPPING=1` at the end, abstract
//! socket names, and probe commands that do not inherit the variables.

mod common;

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

use common::{
    Command, Duration, HANG, Instant, Stdio, TargetServer, TempDir, Watch, pid_of, signal,
    wait_bounded, write_file,
};

/// A socket bound where the watch is told to send, as systemd's.
struct Systemd {
    socket: UnixDatagram,
    _dir: TempDir,
    path: PathBuf,
    /// Every message received so far.
    seen: Vec<String>,
}

impl Systemd {
    fn listen() -> Systemd {
        let dir = TempDir::new("notify");
        let path = dir.0.join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket.set_read_timeout(Some(HANG)).unwrap();
        Systemd { socket, _dir: dir, path, seen: Vec::new() }
    }

    fn env(&self) -> String {
        self.path.to_str().unwrap().to_string()
    }

    fn next(&mut self) -> String {
        let mut buf = [0u8; 4096];
        let n = recv(&self.socket, &mut buf).unwrap_or_else(|e| {
            panic!("no message from the watch ({e}); so far: {:#?}", self.seen)
        });
        let m = String::from_utf8(buf[..n].to_vec()).unwrap();
        self.seen.push(m.clone());
        m
    }

    /// Reads messages up to the first that satisfies `want`; returns it.
    fn until(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        loop {
            let m = self.next();
            if want(&m) {
                return m;
            }
            assert!(self.seen.len() < 100_000, "never {what}: {:#?}", self.seen);
        }
    }
}

/// `web` (readiness over HTTP) and `late`, whose startup probe is a command that waits for a
/// line on `fifo`: its first verdict comes when the test writes one.
fn web_and_late(web: &TargetServer, fifo: &std::path::Path) -> common::TempFile {
    write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: web\n  readinessProbe:\n    httpGet: {{path: /health, port: {}}}\n    \
             periodMilliseconds: 100\n    failureThreshold: 1\n\
             - name: late\n  startupProbe:\n    exec: {{command: [sh, -c, 'read x < {}']}}\n    \
             timeoutSeconds: 600\n",
            web.port(),
            fifo.display()
        ),
    )
}

#[test]
fn ready_once_every_target_has_a_first_verdict_then_status_on_change() {
    let mut systemd = Systemd::listen();
    let web = TargetServer::start();
    let dir = TempDir::new("late");
    let fifo = dir.0.join("release");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let file = web_and_late(&web, &fifo);
    let mut w = Watch::start_with_env(&[file.path()], &[("NOTIFY_SOCKET", &systemd.env())]);

    // web has its verdict, late has none: a status saying so, and no READY=1 so far.
    let m = systemd.until("web's verdict", |m| m.ends_with("waiting for a first verdict: late"));
    assert_eq!(m, "STATUS=1/2 ready, 2/2 live; waiting for a first verdict: late");
    assert!(!systemd.seen.iter().any(|m| m.contains("READY=1")), "{:#?}", systemd.seen);

    std::fs::write(&fifo, "go\n").unwrap();
    let m = systemd.until("READY=1", |m| m.contains("READY=1"));
    assert_eq!(m, "READY=1\nSTATUS=2/2 ready, 2/2 live");

    web.set_healthy(false);
    let m = systemd.next();
    assert_eq!(m, "STATUS=1/2 ready, 2/2 live; not ready: web (readiness failure (status))");
    web.set_healthy(true);
    assert_eq!(systemd.next(), "STATUS=2/2 ready, 2/2 live");
    let (status, _) = w.stop();
    assert_eq!(status.code(), Some(0));
    assert_eq!(systemd.next(), "STOPPING=1");
    // One READY=1 in all, and no watchdog without WATCHDOG_USEC.
    assert_eq!(systemd.seen.iter().filter(|m| m.contains("READY=1")).count(), 1);
    assert!(!systemd.seen.iter().any(|m| m.contains("WATCHDOG")), "{:#?}", systemd.seen);
}

#[test]
fn an_abstract_socket_and_probe_commands_that_do_not_inherit_the_variables() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("prober-cli-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
    let socket = UnixDatagram::bind_addr(&addr).unwrap();
    socket.set_read_timeout(Some(HANG)).unwrap();
    // Ready only when the probe's command sees none of the protocol's variables.
    let file = write_file(
        "yaml",
        "targets:\n- name: clean\n  readinessProbe:\n    exec: {command: [sh, -c, \
         'test -z \"$NOTIFY_SOCKET$WATCHDOG_USEC$WATCHDOG_PID\"']}\n",
    );
    let at = format!("@{name}");
    let env = [("NOTIFY_SOCKET", at.as_str()), ("WATCHDOG_USEC", "3600000000")];
    let mut w = Watch::start_with_env(&[file.path()], &env);
    let mut buf = [0u8; 4096];
    loop {
        let n = recv(&socket, &mut buf).expect("a message on the abstract socket");
        let m = std::str::from_utf8(&buf[..n]).unwrap();
        if m.contains("READY=1") {
            assert_eq!(m, "READY=1\nSTATUS=1/1 ready, 1/1 live");
            break;
        }
    }
    w.stop();
}

/// How many bytes wait in the pipe `fd`, and its capacity.
fn pipe_fill(fd: i32) -> (usize, usize) {
    let mut queued: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which points to a live one.
    let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut queued) };
    assert_eq!(r, 0, "FIONREAD");
    // SAFETY: F_GETPIPE_SZ reads no memory; `fd` is a pipe this test holds open.
    let size = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
    assert!(size > 0, "F_GETPIPE_SZ");
    (queued as usize, size as usize)
}

#[test]
fn the_watchdog_is_fed_only_while_the_watch_makes_progress() {
    let mut systemd = Systemd::listen();
    let web = TargetServer::start();
    let mut text = String::from("targets:\n");
    for i in 0..10 {
        text.push_str(&format!(
            "- name: t{i}\n  livenessProbe:\n    tcpSocket: {{port: {}}}\n    \
             periodMilliseconds: 10\n",
            web.port()
        ));
    }
    let file = write_file("yaml", &text);
    // 100 ms: a WATCHDOG=1 every 50 ms. The output is a pipe nobody reads yet: with a line
    // for every run it fills, and the watch blocks writing to it, as it would on a stuck
    // terminal or log pipe.
    let mut child = common::prober()
        .args(["watch", "--every-run", file.path()])
        .env("NOTIFY_SOCKET", systemd.env())
        .env("WATCHDOG_USEC", "100000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..3 {
        systemd.until("WATCHDOG=1", |m| m == "WATCHDOG=1");
    }
    let stdout = child.stdout.take().unwrap();
    let deadline = Instant::now() + HANG;
    loop {
        let (queued, size) = pipe_fill(stdout.as_raw_fd());
        // Lines are well under 1 KiB: with less room than that, the next write blocks.
        if queued + 1024 > size {
            break;
        }
        assert!(Instant::now() < deadline, "the output pipe never filled ({queued} of {size})");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Blocked (or about to be, at its next line). What was sent before is queued: drop it.
    let mut buf = [0u8; 4096];
    systemd.socket.set_nonblocking(true).unwrap();
    while systemd.socket.recv(&mut buf).is_ok() {}
    systemd.socket.set_nonblocking(false).unwrap();
    // Then at most what was sent just before the block, and nothing for 20 periods.
    systemd.socket.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut late = 0;
    while systemd.socket.recv(&mut buf).is_ok() {
        late += 1;
        assert!(late <= 2, "the watchdog was fed while the watch was blocked");
    }
    // Unblocked: fed again.
    let drain = common::reader(stdout);
    systemd.socket.set_read_timeout(Some(HANG)).unwrap();
    systemd.until("WATCHDOG=1 again", |m| m == "WATCHDOG=1");
    signal::kill(pid_of(&child), signal::Signal::SIGTERM).unwrap();
    assert_eq!(wait_bounded(&mut child, HANG).code(), Some(0));
    assert!(drain.recv().unwrap().contains("summary:"));
}

/// One datagram, the wait taken up again when a signal interrupts it (EINTR was seen once in
/// CI on the abstract-socket test: the test process's own `recv`, not the watch's).
fn recv(socket: &UnixDatagram, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match socket.recv(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}
