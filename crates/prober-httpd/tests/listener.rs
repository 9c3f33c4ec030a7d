//! The listening socket: its backlog is the system's `somaxconn` (as Go's servers listen), not
//! the standard library's 128, under which a burst of scrapes waits for SYN retransmits; and it
//! is close-on-exec. Read from the kernel's own report (`ss`, `/proc/self/fdinfo`).

mod common;

use std::process::Command;

use prober_httpd::Server;

/// The backlog the kernel reports for the listening socket on `port` (`ss` shows it as the
/// Send-Q of a listening socket).
fn kernel_backlog(port: u16) -> u32 {
    let out = Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("run ss (iproute2; this test needs it on PATH)");
    assert!(out.status.success(), "ss: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().next().unwrap_or_else(|| panic!("ss lists no listener on {port}"));
    // State, Recv-Q, Send-Q, local address, peer address.
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields.first(), Some(&"LISTEN"), "{line}");
    fields[2].parse().unwrap_or_else(|_| panic!("{line}"))
}

/// The `flags` of the descriptor of this process that is the listening socket on `port` (as
/// `/proc/self/fdinfo` shows them, octal), found by the socket's inode in `/proc/net/tcp`.
fn listener_flags(port: u16) -> u32 {
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    // sl, local address (hex IP:port), remote address, state (0A: listening), ..., inode.
    let inode = tcp
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f[1].ends_with(&format!(":{port:04X}")) && f[3] == "0A")
        .map(|f| f[9].to_string())
        .unwrap_or_else(|| panic!("no listener on {port} in /proc/net/tcp"));
    let socket = format!("socket:[{inode}]");
    let fd = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_str() == Some(socket.as_str())))
        .unwrap_or_else(|| panic!("no descriptor of {socket}"))
        .file_name();
    let info =
        std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.to_str().unwrap())).unwrap();
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).expect("flags");
    u32::from_str_radix(flags.trim(), 8).unwrap()
}

/// `O_CLOEXEC` and `O_NONBLOCK` on Linux (x86_64 and aarch64), as fdinfo shows them.
const O_CLOEXEC: u32 = 0o2_000_000;
const O_NONBLOCK: u32 = 0o4000;

#[test]
fn the_listener_is_close_on_exec_and_nonblocking() {
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let flags = listener_flags(server.local_addr().port());
    assert_eq!(flags & O_CLOEXEC, O_CLOEXEC, "flags {flags:o}");
    assert_eq!(flags & O_NONBLOCK, O_NONBLOCK, "flags {flags:o}");
}

#[test]
fn the_listen_backlog_is_somaxconn() {
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .expect("read somaxconn")
        .trim()
        .parse()
        .unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    assert_eq!(kernel_backlog(server.local_addr().port()), somaxconn);
    let running = server.spawn("test-http").unwrap();
    assert_eq!(kernel_backlog(running.local_addr().port()), somaxconn);
}
