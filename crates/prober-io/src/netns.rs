//! Sockets made in another network namespace, off the poll thread (issue 29).
//!
//! A socket belongs to the network namespace of the thread that created it and stays there,
//! so a probe of a container only needs its socket made there: connect, TLS and HTTP then run
//! on the poll thread as for any socket. Entering a namespace (`setns`) changes the calling
//! thread, so it is never done on a poll thread nor on a host's thread (a Go thread would carry
//! the namespace to other goroutines): a small process-wide pool of library-owned threads
//! (`prober-netns`, see `workers.rs`) enters the namespace and creates the sockets, and the
//! answer goes to the asking driver's [`Mailbox`] as a lookup's does.
//!
//! Those threads only ever make sockets, so they never go back to the host's namespace: a
//! thread stays in the namespace it last entered, and the next socket for that namespace costs
//! no `setns` at all. An idle thread exits after a while (`workers.rs`), which also lets go of
//! the namespace it was in. Host names are resolved before, on the resolver's pool, through the
//! host's resolver: `getaddrinfo` inside the namespace would send DNS queries from the
//! container's network while reading the host's `/etc/resolv.conf`, the worst of both.
//!
//! The namespace file is opened once per path (`O_RDONLY | O_CLOEXEC | O_NONBLOCK`: a FIFO
//! named by mistake does not block the open), checked (`fstat`: a namespace file is neither a
//! regular file, a directory nor a FIFO; the `NS_GET_NSTYPE` ioctl: a network namespace), and
//! kept in the [`NetNs`] that every spec naming the path shares, so it is closed when the last
//! of them is dropped. Each job `stat`s the path first: a file whose identity changed (a
//! restarted container's `/proc/PID/ns/net`, a re-created `/run/netns/NAME`) is opened again,
//! and a path that has gone is an error, never a silent probe of the old namespace. The answer
//! names the identity the sockets were made under ([`NsMade`]): a driver that keeps them for
//! later probes ([`crate::NsPools`]) keys them by it, and a job may only check that identity
//! ([`Mailbox::submit_netns_unless`]) when the driver keeps a socket made under it.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use prober_core::{NetNs, Reason, os_error_text};

use crate::mailbox::{Mailbox, Resolved, Sender};
use crate::resolver::Lookup;
use crate::workers::WorkPool;

/// At most this many threads make sockets in namespaces at once across the process.
const MAX_THREADS: usize = 4;

/// Why no socket could be made in a namespace: the reason ([`Reason::Namespace`] for the
/// namespace itself, [`Reason::Resource`] when this node ran out of something) and the message,
/// which names the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NsError {
    /// Why, for the outcome.
    pub reason: Reason,
    /// What happened, naming the path.
    pub message: String,
}

/// Which sockets a namespace job makes: TCP for connections (the default), UDP for datagram
/// probes (DNS), ICMP echo sockets (ping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NsSocketKind {
    /// `SOCK_STREAM`, TCP.
    #[default]
    Tcp,
    /// `SOCK_DGRAM`, UDP.
    Udp,
    /// An ICMP (or ICMPv6) echo socket: unprivileged (`SOCK_DGRAM`, where the namespace's own
    /// `net.ipv4.ping_group_range` admits the process) unless `raw`; when `fallback`, a raw
    /// socket (CAP_NET_RAW) where the unprivileged one is not allowed.
    Icmp {
        /// A raw socket only.
        raw: bool,
        /// Raw when unprivileged is refused.
        fallback: bool,
    },
}

/// Where the sockets of one [`Mailbox::submit_netns`] are left for the asking machine, one per
/// address in the order of the answer's addresses; the answer itself arrives as a lookup's.
pub type NsSockets = Arc<Mutex<Option<Result<NsMade, NsError>>>>;

/// The sockets a namespace job made, and where: the identity of the namespace file they were
/// made in, as checked (`stat` of the path) just before. A driver that keeps such sockets for
/// later probes ([`crate::NsPools`]) keys them by it.
#[derive(Debug)]
pub struct NsMade {
    /// One per address, in the order of the answer's addresses.
    pub sockets: Vec<OwnedFd>,
    /// (`st_dev`, `st_ino`) of the namespace file.
    pub id: (u64, u64),
}

fn pool() -> &'static WorkPool {
    static POOL: OnceLock<WorkPool> = OnceLock::new();
    POOL.get_or_init(|| WorkPool::new("prober-netns", MAX_THREADS))
}

static OPENS: AtomicU64 = AtomicU64::new(0);

/// How many times a namespace file has been opened in this process, for tests and
/// diagnostics: a path is opened once however many probes name it, and again only when its
/// identity changes.
pub fn netns_opens() -> u64 {
    OPENS.load(Ordering::Relaxed)
}

static MADE: AtomicU64 = AtomicU64::new(0);

/// How many sockets the namespace threads have made in this process, for tests and
/// diagnostics: a probe that takes a pooled socket ([`crate::NsPools`]) makes none.
pub fn netns_sockets_made() -> u64 {
    MADE.load(Ordering::Relaxed)
}

impl Mailbox {
    /// Makes one TCP socket per address in `netns` (resolving `host` first, through the host's
    /// resolver, when it is given; `addrs` otherwise), leaves them in `sockets` and posts the
    /// addresses with `ticket` as a lookup's answer. A failure of the namespace is left in
    /// `sockets` (the addresses are still posted); a failed lookup is posted as its error.
    pub fn submit_netns(
        &self,
        ticket: u64,
        host: Option<&str>,
        addrs: Vec<SocketAddr>,
        port: u16,
        netns: &NetNs,
        sockets: NsSockets,
    ) -> Lookup {
        self.submit_netns_kind(ticket, host, addrs, port, netns, NsSocketKind::Tcp, sockets)
    }

    /// [`Mailbox::submit_netns`] for sockets of `kind`.
    #[allow(clippy::too_many_arguments)]
    pub fn submit_netns_kind(
        &self,
        ticket: u64,
        host: Option<&str>,
        addrs: Vec<SocketAddr>,
        port: u16,
        netns: &NetNs,
        kind: NsSocketKind,
        sockets: NsSockets,
    ) -> Lookup {
        let wanted = Arc::new(AtomicBool::new(true));
        let sender = self.sender();
        let netns = netns.clone();
        let job =
            NsJob { ticket, netns, kind, kept: None, sockets, sender, wanted: wanted.clone() };
        match host {
            None => job.submit(addrs),
            Some(host) => {
                // The lookup first, on the resolver's pool; the sockets after it, on ours.
                let host = host.to_string();
                self.submit_then(ticket, &host, port, wanted.clone(), move |addrs| match addrs {
                    Ok(addrs) => job.submit(addrs),
                    Err(e) => {
                        // As in `NsJob::answer`: the namespace is let go before the answer.
                        drop(job.netns);
                        job.sender.post_lookup(Resolved {
                            ticket: job.ticket,
                            addrs: Err(e),
                            took: std::time::Duration::ZERO,
                        });
                    }
                });
            }
        }
        Lookup::from_flag(wanted)
    }

    /// [`Mailbox::submit_netns`] for addresses already known, unless the path still names the
    /// namespace `kept` (the identity under which the driver keeps sockets of it,
    /// [`crate::NsPools`]): then the thread only checks that (a `stat` of the path, no `setns`,
    /// no socket) and the answer's [`NsMade`] has no sockets and that identity. Otherwise it
    /// has the sockets made in the namespace the path names now.
    pub fn submit_netns_unless(
        &self,
        ticket: u64,
        addrs: Vec<SocketAddr>,
        netns: &NetNs,
        kept: (u64, u64),
        sockets: NsSockets,
    ) -> Lookup {
        let wanted = Arc::new(AtomicBool::new(true));
        let sender = self.sender();
        let netns = netns.clone();
        let kind = NsSocketKind::Tcp;
        let kept = Some(kept);
        NsJob { ticket, netns, kind, kept, sockets, sender, wanted: wanted.clone() }.submit(addrs);
        Lookup::from_flag(wanted)
    }
}

/// One request for sockets in a namespace, on its way through the pools.
struct NsJob {
    ticket: u64,
    netns: NetNs,
    kind: NsSocketKind,
    /// No sockets if the path still names this namespace (see
    /// [`Mailbox::submit_netns_unless`]).
    kept: Option<(u64, u64)>,
    sockets: NsSockets,
    sender: Sender,
    wanted: Arc<AtomicBool>,
}

impl NsJob {
    /// Queues the socket making on the namespace pool; answers at once when no thread can run
    /// it.
    fn submit(self, addrs: Vec<SocketAddr>) {
        let wanted = self.wanted.clone();
        let job = Arc::new(Mutex::new(Some((self, addrs))));
        let run = {
            let job = job.clone();
            Box::new(move || {
                if let Some((job, addrs)) = job.lock().take() {
                    job.run(addrs);
                }
            })
        };
        if let Err((_, e)) = pool().submit(run, wanted) {
            if let Some((job, addrs)) = job.lock().take() {
                let what = format!(
                    "cannot start a thread for network namespace {:?}: {}",
                    job.netns.path(),
                    os_error_text(&e)
                );
                job.answer(addrs, Err(NsError { reason: Reason::Resource, message: what }));
            }
        }
    }

    fn run(self, addrs: Vec<SocketAddr>) {
        if self.sender.abandoned() {
            return;
        }
        let made = match self.kept {
            Some(kept) if still_names(&self.netns, kept) => {
                Ok(NsMade { sockets: Vec::new(), id: kept })
            }
            _ => make_sockets(&self.netns, self.kind, &addrs),
        };
        self.answer(addrs, made);
    }

    fn answer(self, addrs: Vec<SocketAddr>, made: Result<NsMade, NsError>) {
        let NsJob { ticket, netns, kind: _, kept: _, sockets, sender, wanted: _ } = self;
        *sockets.lock() = Some(made);
        // Let go of the namespace before answering: once the answer is read, the last spec
        // naming the path may be dropped, and its descriptor must then close at once, not
        // when this pool thread gets round to dropping the job.
        drop(netns);
        let took = std::time::Duration::ZERO;
        sender.post_lookup(Resolved { ticket, addrs: Ok(addrs), took });
    }
}

/// Whether `netns`'s path still names the namespace of identity `kept` (which its cached file
/// then is: a path found naming another is opened again, as for any use).
fn still_names(netns: &NetNs, kept: (u64, u64)) -> bool {
    #[cfg(target_os = "linux")]
    {
        open_checked(netns).is_ok_and(|open| (open.dev, open.ino) == kept)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (netns, kept);
        false
    }
}

/// The sockets for `addrs`, made in `netns` on this (pool) thread.
fn make_sockets(
    netns: &NetNs,
    kind: NsSocketKind,
    addrs: &[SocketAddr],
) -> Result<NsMade, NsError> {
    let path = netns.path();
    let fail = |reason: Reason, why: String| NsError {
        reason,
        message: format!("cannot use network namespace {path:?}: {why}"),
    };
    let id = enter(netns).map_err(|e| fail(Reason::Namespace, e))?;
    MADE.fetch_add(addrs.len() as u64, Ordering::Relaxed);
    let sockets = addrs
        .iter()
        .map(|a| {
            let made = match kind {
                NsSocketKind::Tcp | NsSocketKind::Udp => {
                    crate::sys::inet_socket(a.is_ipv6(), kind == NsSocketKind::Udp)
                }
                NsSocketKind::Icmp { raw, fallback } => {
                    return icmp_socket(a.is_ipv6(), raw, fallback).map_err(|(e, why)| {
                        let reason = if Reason::is_local_resource(&e) {
                            Reason::Resource
                        } else {
                            Reason::Io
                        };
                        fail(reason, why)
                    });
                }
            };
            made.map_err(|e| {
                let reason =
                    if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Io };
                fail(reason, format!("cannot create socket: {}", os_error_text(&e)))
            })
        })
        .collect::<Result<Vec<OwnedFd>, NsError>>()?;
    Ok(NsMade { sockets, id })
}

/// An ICMP echo socket of the family, in this thread's namespace: unprivileged unless `raw`,
/// raw after a refused unprivileged one when `fallback`; the error says which ways were refused
/// and why (the namespace's own `ping_group_range`, CAP_NET_RAW).
fn icmp_socket(ipv6: bool, raw: bool, fallback: bool) -> Result<OwnedFd, (std::io::Error, String)> {
    let denied = |e: &std::io::Error| matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM));
    if !raw {
        match crate::sys::icmp_socket(ipv6, false) {
            Ok(fd) => return Ok(fd),
            Err(e) if !(fallback && denied(&e)) => {
                let why = if denied(&e) {
                    format!(
                        "cannot create an unprivileged ICMP socket: {} (the namespace's \
                         net.ipv4.ping_group_range does not admit this process's group)",
                        os_error_text(&e)
                    )
                } else {
                    format!("cannot create an unprivileged ICMP socket: {}", os_error_text(&e))
                };
                return Err((e, why));
            }
            Err(_) => {}
        }
    }
    crate::sys::icmp_socket(ipv6, true).map_err(|e| {
        let why = match (denied(&e), raw) {
            (true, true) => {
                format!(
                    "cannot create a raw ICMP socket: {} (it needs CAP_NET_RAW)",
                    os_error_text(&e)
                )
            }
            (true, false) => format!(
                "cannot create an ICMP socket: neither an unprivileged one (the namespace's \
                 net.ipv4.ping_group_range does not admit this process's group) nor a raw one \
                 (it needs CAP_NET_RAW): {}",
                os_error_text(&e)
            ),
            (false, _) => format!("cannot create a raw ICMP socket: {}", os_error_text(&e)),
        };
        (e, why)
    })
}

#[cfg(target_os = "linux")]
thread_local! {
    /// The identity (device, inode) of the namespace this pool thread is in, once it has
    /// entered one: sockets for the same namespace then need no `setns`.
    static CURRENT: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

#[cfg(target_os = "linux")]
/// Moves this pool thread into `netns` (opening or re-opening its file as needed); the
/// namespace file's identity.
fn enter(netns: &NetNs) -> Result<(u64, u64), String> {
    let open = open_checked(netns)?;
    if CURRENT.get() == Some((open.dev, open.ino)) {
        return Ok((open.dev, open.ino));
    }
    crate::sys::setns_net(&open.fd).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => format!(
            "cannot enter it: {} (entering a namespace needs CAP_SYS_ADMIN)",
            os_error_text(&e)
        ),
        _ => format!("cannot enter it: {}", os_error_text(&e)),
    })?;
    CURRENT.set(Some((open.dev, open.ino)));
    Ok((open.dev, open.ino))
}

/// Network namespaces are Linux's own: elsewhere every path is refused, at run time (the spec
/// is the same data everywhere).
#[cfg(not(target_os = "linux"))]
fn enter(_netns: &NetNs) -> Result<(u64, u64), String> {
    Err("network namespaces exist on Linux only".into())
}

#[cfg(target_os = "linux")]
/// The namespace's open file: the cached one while the path still names the same file, else
/// opened and checked now.
fn open_checked(netns: &NetNs) -> Result<prober_core::OpenNetNs, String> {
    let path = netns.path();
    let slot = netns.open_slot();
    let id = match crate::sys::stat_id(path) {
        Ok(id) => id,
        Err(e) => {
            // Gone (the container has stopped): let go of the old namespace too.
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
            return Err(os_error_text(&e));
        }
    };
    // The lock is held across the open: pool threads serving the first probes of one path
    // at once would otherwise each open it (the open cannot block: O_NONBLOCK).
    let mut cached = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(open) = cached.as_ref() {
        if (open.dev, open.ino) == id {
            return Ok(open.clone());
        }
    }
    let open = open_namespace(path)?;
    *cached = Some(open.clone());
    Ok(open)
}

#[cfg(target_os = "linux")]
fn open_namespace(path: &std::path::Path) -> Result<prober_core::OpenNetNs, String> {
    let (fd, kind, dev, ino) = crate::sys::open_nonblocking(path).map_err(|e| os_error_text(&e))?;
    OPENS.fetch_add(1, Ordering::Relaxed);
    if let Some(kind) = kind {
        return Err(format!("not a namespace file (a {kind})"));
    }
    match crate::sys::ns_type(&fd) {
        Ok(t) if t == libc::CLONE_NEWNET => {}
        Ok(t) => {
            return Err(format!("a {} namespace, not a network namespace", ns_type_name(t)));
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTTY | libc::EINVAL)) => {
            return Err("not a namespace file".into());
        }
        Err(e) => return Err(os_error_text(&e)),
    }
    Ok(prober_core::OpenNetNs { dev, ino, fd: Arc::new(fd) })
}

#[cfg(target_os = "linux")]
fn ns_type_name(t: libc::c_int) -> &'static str {
    match t {
        libc::CLONE_NEWNS => "mount",
        libc::CLONE_NEWUTS => "UTS",
        libc::CLONE_NEWIPC => "IPC",
        libc::CLONE_NEWUSER => "user",
        libc::CLONE_NEWPID => "PID",
        libc::CLONE_NEWCGROUP => "cgroup",
        0x80 => "time", // CLONE_NEWTIME
        _ => "other",
    }
}
