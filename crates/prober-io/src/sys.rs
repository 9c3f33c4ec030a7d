//! prober-io's system calls, behind one door: reaping one specific child, and making sockets in
//! another network namespace (Linux only for the namespace calls). Portable across
//! Unix systems (Linux is tested by running, FreeBSD compile-checked in CI).

use std::io;

/// `waitpid(pid, flags)` on one specific pid, its status discarded. Retried when a signal
/// interrupts it: an EINTR taken for "gone" would leave a zombie. Never `waitpid(-1)`: no other
/// child of the host process is touched.
pub(crate) fn waitpid(pid: libc::pid_t, flags: libc::c_int) -> io::Result<libc::pid_t> {
    crate::retry_interrupted(|| {
        let mut status = 0;
        // SAFETY: waitpid on a specific pid (never -1: no other child of the host is touched)
        // with a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        crate::os_result(r)
    })
}

/// A new TCP (or UDP) socket of the family, non-blocking and close-on-exec from its creation,
/// in the calling thread's network namespace.
pub(crate) fn inet_socket(ipv6: bool, udp: bool) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let domain = if ipv6 { libc::AF_INET6 } else { libc::AF_INET };
    let (ty, proto) = if udp {
        (libc::SOCK_DGRAM, libc::IPPROTO_UDP)
    } else {
        (libc::SOCK_STREAM, libc::IPPROTO_TCP)
    };
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    let ty = ty | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: socket() takes no pointers; a non-negative return is a new descriptor that
    // nothing else owns, so OwnedFd may take it.
    let fd = crate::os_result(unsafe { libc::socket(domain, ty, proto) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// A new non-blocking, close-on-exec ICMP (ICMPv6) echo socket: raw or unprivileged
/// (`SOCK_DGRAM`).
pub(crate) fn icmp_socket(ipv6: bool, raw: bool) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let (domain, proto) = if ipv6 {
        (libc::AF_INET6, libc::IPPROTO_ICMPV6)
    } else {
        (libc::AF_INET, libc::IPPROTO_ICMP)
    };
    let ty = if raw { libc::SOCK_RAW } else { libc::SOCK_DGRAM };
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    let ty = ty | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: socket() takes no pointers; a non-negative return is a new descriptor that
    // nothing else owns, so OwnedFd may take it.
    let fd = crate::os_result(unsafe { libc::socket(domain, ty, proto) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(target_os = "linux")]
/// `stat(path)`'s identity: (device, inode), following symbolic links (`/proc/PID/ns/net` is
/// one, to the namespace itself).
pub(crate) fn stat_id(path: &std::path::Path) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(target_os = "linux")]
/// Opens `path` read-only, close-on-exec and non-blocking (a FIFO does not wait for a writer;
/// no terminal becomes ours), and says what it is: `Some(kind)` for a file that cannot be a
/// namespace (regular file, directory, FIFO, socket, device), with its identity.
pub(crate) fn open_nonblocking(
    path: &std::path::Path,
) -> io::Result<(std::os::fd::OwnedFd, Option<&'static str>, u64, u64)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    let t = meta.file_type();
    let kind = if on_nsfs(&file)? {
        // Namespace files say S_IFREG; what tells them apart is their file system.
        None
    } else if t.is_file() {
        Some("regular file")
    } else if t.is_dir() {
        Some("directory")
    } else if t.is_fifo() {
        Some("FIFO")
    } else if t.is_socket() {
        Some("socket")
    } else if t.is_block_device() || t.is_char_device() {
        Some("device")
    } else {
        Some("file of another kind")
    };
    Ok((file.into(), kind, meta.dev(), meta.ino()))
}

/// Whether `file` is on nsfs, the file system of namespace files (`NSFS_MAGIC`).
#[cfg(target_os = "linux")]
fn on_nsfs(file: &std::fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    const NSFS_MAGIC: i64 = 0x6e73_6673;
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the whole call (borrowed from `file`), and `st` is a
    // valid statfs for the kernel to fill.
    crate::os_result(unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) })?;
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between C libraries
    Ok(st.f_type as i64 == NSFS_MAGIC)
}

/// The type of the namespace `fd` refers to (`NS_GET_NSTYPE`, Linux 4.11): a `CLONE_NEW*`
/// value; ENOTTY for a file that is not a namespace.
#[cfg(target_os = "linux")]
pub(crate) fn ns_type(fd: &std::os::fd::OwnedFd) -> io::Result<libc::c_int> {
    use std::os::fd::AsRawFd;
    /// `_IO(0xb7, 0x3)` from `<linux/nsfs.h>` (not in the libc crate).
    const NS_GET_NSTYPE: libc::c_ulong = 0xb703;
    // SAFETY: the descriptor is open for the whole call (borrowed); NS_GET_NSTYPE takes no
    // argument and returns the type as the call's value.
    crate::os_result(unsafe { libc::ioctl(fd.as_raw_fd(), NS_GET_NSTYPE as _) })
}

/// Moves the calling thread into the network namespace `fd` refers to. Only ever called on a
/// `prober-netns` pool thread, never on a poll thread or a host's thread.
#[cfg(target_os = "linux")]
pub(crate) fn setns_net(fd: &std::os::fd::OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the whole call (borrowed); setns changes only the
    // calling thread's network namespace and reads no memory of ours.
    crate::os_result(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
}
