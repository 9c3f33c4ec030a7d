//! The echo socket: opened unprivileged (`SOCK_DGRAM`, `IPPROTO_ICMP`/`IPPROTO_ICMPV6`, the
//! kernel's "ping sockets") where `net.ipv4.ping_group_range` admits the process's group, else
//! raw (`SOCK_RAW`, CAP_NET_RAW); its options; sending; and receiving a datagram with its
//! hop limit and, from the error queue, the ICMP errors the kernel matched to the socket.
//!
//! Every descriptor is made non-blocking and close-on-exec at once (socket2 passes
//! `SOCK_CLOEXEC`). Linux only: other systems get [`io::ErrorKind::Unsupported`].

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, RawFd};

use prober_core::{IcmpSocket as SocketChoice, IcmpSocketKind};
use socket2::{Domain, Protocol, Socket, Type};

/// The socket options of a run (runs share a socket only when theirs are equal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Options {
    pub(crate) ttl: Option<u8>,
    pub(crate) dont_fragment: bool,
    pub(crate) source: Option<IpAddr>,
}

/// An open echo socket of one family.
#[derive(Debug)]
pub(crate) struct EchoSocket {
    socket: Socket,
    pub(crate) kind: IcmpSocketKind,
    pub(crate) ipv6: bool,
    /// The echo id: ours on a raw socket, the socket's port on an unprivileged one.
    pub(crate) id: u16,
}

/// Why no socket could be opened.
#[derive(Debug)]
pub(crate) struct OpenError {
    pub(crate) error: io::Error,
    pub(crate) message: String,
}

/// Whether `e` is the kernel saying "not allowed" (ping_group_range, missing CAP_NET_RAW).
fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

impl EchoSocket {
    /// Opens a socket for echoes to `dst`'s family, as `choice` allows, with `options`
    /// applied. `want_id` is the id asked for (random): a raw socket uses it; an unprivileged
    /// one binds it as its port when it is free.
    pub(crate) fn open(
        dst: IpAddr,
        choice: SocketChoice,
        options: Options,
        want_id: u16,
    ) -> Result<EchoSocket, OpenError> {
        let ipv6 = dst.is_ipv6();
        let unprivileged = match choice {
            SocketChoice::Raw => None,
            _ => Some(new_socket(ipv6, Type::DGRAM)),
        };
        let (socket, kind) = match unprivileged {
            Some(Ok(s)) => (s, IcmpSocketKind::Unprivileged),
            Some(Err(e)) if choice == SocketChoice::Unprivileged || !denied(&e) => {
                let message = if denied(&e) {
                    format!(
                        "cannot open an unprivileged ICMP socket: {e} (net.ipv4.ping_group_range \
                         does not admit this process's group)"
                    )
                } else {
                    format!("cannot open an unprivileged ICMP socket: {e}")
                };
                return Err(OpenError { error: e, message });
            }
            _ => match new_socket(ipv6, Type::RAW) {
                Ok(s) => (s, IcmpSocketKind::Raw),
                Err(e) if denied(&e) => {
                    let message = if choice == SocketChoice::Raw {
                        format!("cannot open a raw ICMP socket: {e} (it needs CAP_NET_RAW)")
                    } else {
                        format!(
                            "cannot open an ICMP socket: neither an unprivileged one \
                             (net.ipv4.ping_group_range does not admit this process's group; \
                             `sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"` admits all) \
                             nor a raw one (it needs CAP_NET_RAW): {e}"
                        )
                    };
                    return Err(OpenError { error: e, message });
                }
                Err(e) => {
                    let message = format!("cannot open a raw ICMP socket: {e}");
                    return Err(OpenError { error: e, message });
                }
            },
        };
        let mut sock = EchoSocket { socket, kind, ipv6, id: want_id };
        sock.configure(options, want_id).map_err(|(what, error)| OpenError {
            message: format!("ICMP socket: {what}: {error}"),
            error,
        })?;
        Ok(sock)
    }

    /// Takes a socket made elsewhere (in a network namespace, by `prober-io`'s namespace
    /// threads) for echoes of the family, and applies `options` as [`EchoSocket::open`] does;
    /// its kind is read back from the socket.
    pub(crate) fn adopt(
        fd: std::os::fd::OwnedFd,
        ipv6: bool,
        options: Options,
        want_id: u16,
    ) -> Result<EchoSocket, OpenError> {
        let socket = Socket::from(fd);
        let fail = |what: &str, error: io::Error| OpenError {
            message: format!("ICMP socket: {what}: {error}"),
            error,
        };
        let kind = match socket.r#type() {
            Ok(t) if t == Type::RAW => IcmpSocketKind::Raw,
            Ok(_) => IcmpSocketKind::Unprivileged,
            Err(e) => return Err(fail("getsockopt", e)),
        };
        let mut sock = EchoSocket { socket, kind, ipv6, id: want_id };
        sock.configure(options, want_id).map_err(|(what, error)| fail(what, error))?;
        Ok(sock)
    }

    fn configure(
        &mut self,
        options: Options,
        want_id: u16,
    ) -> Result<(), (&'static str, io::Error)> {
        let fd = self.socket.as_raw_fd();
        if let Some(ttl) = options.ttl {
            let r = if self.ipv6 {
                self.socket.set_unicast_hops_v6(u32::from(ttl))
            } else {
                self.socket.set_ttl_v4(u32::from(ttl))
            };
            r.map_err(|e| ("setting the TTL", e))?;
        }
        sys::recv_hop_limit(self.socket.as_fd(), self.ipv6)
            .map_err(|e| ("asking for the reply's hop limit", e))?;
        if self.kind == IcmpSocketKind::Unprivileged {
            // Errors about our echoes come through the error queue; a raw socket reads them
            // as the ICMP messages they are.
            sys::recv_errors(self.socket.as_fd(), self.ipv6)
                .map_err(|e| ("asking for ICMP errors", e))?;
        }
        if options.dont_fragment && !self.ipv6 {
            // IP_PMTUDISC_DO: DF on every packet, and a packet over the path MTU fails at
            // send with EMSGSIZE. Unlike blackbox_exporter, which needs a raw socket and its
            // own IP header for DF, this works on an unprivileged socket too.
            sys::dont_fragment(fd).map_err(|e| ("setting don't-fragment", e))?;
        }
        let unspecified = if self.ipv6 {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        };
        let source = options.source.unwrap_or(unspecified);
        match self.kind {
            IcmpSocketKind::Raw => {
                if options.source.is_some() {
                    self.socket
                        .bind(&SocketAddr::new(source, 0).into())
                        .map_err(|e| ("bind", e))?;
                }
            }
            IcmpSocketKind::Unprivileged => {
                // The port of a ping socket is its echo id: ask for ours, else any free one.
                let wanted = self.socket.bind(&SocketAddr::new(source, want_id.max(1)).into());
                match wanted {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) => {
                        self.socket
                            .bind(&SocketAddr::new(source, 0).into())
                            .map_err(|e| ("bind", e))?;
                    }
                    Err(e) => return Err(("bind", e)),
                }
                let local = self.socket.local_addr().map_err(|e| ("getsockname", e))?;
                self.id = local.as_socket().map_or(want_id, |a| a.port());
            }
        }
        Ok(())
    }

    /// Asks for a receive buffer of `bytes` (a socket shared by many runs takes a burst of
    /// their replies between two reads): beyond `net.core.rmem_max` where CAP_NET_ADMIN allows
    /// (`SO_RCVBUFFORCE`), else as much as that limit allows. Best effort: a smaller buffer
    /// only loses replies to bursts larger than it.
    pub(crate) fn grow_receive_buffer(&self, bytes: usize) {
        if sys::force_receive_buffer(self.socket.as_raw_fd(), bytes).is_err() {
            let _ = self.socket.set_recv_buffer_size(bytes);
        }
    }

    /// Sends one message to `dst`.
    pub(crate) fn send(&self, msg: &[u8], dst: IpAddr) -> io::Result<()> {
        let n = prober_io::retry_interrupted(|| {
            self.socket.send_to(msg, &SocketAddr::new(dst, 0).into())
        })?;
        if n == msg.len() { Ok(()) } else { Err(io::Error::other("short send")) }
    }

    /// Drops the socket's pending error (`SO_ERROR`), if any.
    pub(crate) fn clear_error(&self) {
        let _ = self.socket.take_error();
    }

    /// The descriptor, for registration with the poll loop.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Reads one datagram into `buf` (`WouldBlock` when there is none).
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<sys::Datagram> {
        sys::recv(self.socket.as_raw_fd(), buf, false)
    }

    /// Reads one entry of the error queue into `buf` (`WouldBlock` when it is empty).
    pub(crate) fn recv_error(&self, buf: &mut [u8]) -> io::Result<sys::Datagram> {
        sys::recv(self.socket.as_raw_fd(), buf, true)
    }
}

/// A new non-blocking, close-on-exec ICMP socket of the family.
fn new_socket(ipv6: bool, ty: Type) -> io::Result<Socket> {
    let (domain, protocol) =
        if ipv6 { (Domain::IPV6, Protocol::ICMPV6) } else { (Domain::IPV4, Protocol::ICMPV4) };
    Socket::new(domain, ty.nonblocking(), Some(protocol))
}

#[cfg(target_os = "linux")]
mod sys {
    //! The calls socket2 does not make: control messages and the error queue (nix), and
    //! IP_MTU_DISCOVER.

    use std::io;
    use std::io::IoSliceMut;
    use std::net::IpAddr;
    use std::os::fd::{BorrowedFd, RawFd};

    use nix::sys::socket::{
        ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg, setsockopt, sockopt,
    };

    /// One datagram as received.
    #[derive(Debug)]
    pub(crate) struct Datagram {
        /// Its length in the buffer.
        pub(crate) len: usize,
        /// Its source (the replier); for an error queue entry, the failed packet's destination.
        pub(crate) from: Option<IpAddr>,
        /// The received packet's TTL or hop limit.
        pub(crate) hop_limit: Option<u8>,
        /// For an error queue entry of ICMP origin: the error's type and code, and who sent it
        /// (the offender), when the kernel says.
        pub(crate) icmp: Option<(u8, u8, Option<IpAddr>)>,
    }

    pub(super) fn recv_hop_limit(fd: BorrowedFd<'_>, ipv6: bool) -> io::Result<()> {
        let r = if ipv6 {
            setsockopt(&fd, sockopt::Ipv6RecvHopLimit, &true)
        } else {
            setsockopt(&fd, sockopt::Ipv4RecvTtl, &true)
        };
        r.map_err(io::Error::from)
    }

    pub(super) fn recv_errors(fd: BorrowedFd<'_>, ipv6: bool) -> io::Result<()> {
        let r = if ipv6 {
            setsockopt(&fd, sockopt::Ipv6RecvErr, &true)
        } else {
            setsockopt(&fd, sockopt::Ipv4RecvErr, &true)
        };
        r.map_err(io::Error::from)
    }

    pub(super) fn dont_fragment(fd: RawFd) -> io::Result<()> {
        let value: libc::c_int = libc::IP_PMTUDISC_DO;
        // SAFETY: the descriptor is open for the call (owned by the caller), and `value` is a
        // c_int the kernel reads `size_of::<c_int>()` bytes of.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_IP,
                libc::IP_MTU_DISCOVER,
                std::ptr::from_ref(&value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        prober_io::os_result(r).map(drop)
    }

    pub(super) fn force_receive_buffer(fd: RawFd, bytes: usize) -> io::Result<()> {
        let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // SAFETY: the descriptor is open for the call (owned by the caller), and `value` is a
        // c_int the kernel reads `size_of::<c_int>()` bytes of.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                std::ptr::from_ref(&value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        prober_io::os_result(r).map(drop)
    }

    pub(super) fn recv(fd: RawFd, buf: &mut [u8], errqueue: bool) -> io::Result<Datagram> {
        let mut cmsg = nix::cmsg_space!(libc::c_int, libc::sock_extended_err, libc::sockaddr_in6);
        let flags = if errqueue { MsgFlags::MSG_ERRQUEUE } else { MsgFlags::empty() };
        let mut iov = [IoSliceMut::new(buf)];
        let msg = loop {
            match recvmsg::<SockaddrStorage>(fd, &mut iov, Some(&mut cmsg), flags) {
                Err(nix::errno::Errno::EINTR) => {}
                r => break r.map_err(io::Error::from)?,
            }
        };
        let mut dgram = Datagram {
            len: msg.bytes,
            from: msg.address.as_ref().and_then(ip_of),
            hop_limit: None,
            icmp: None,
        };
        for c in msg.cmsgs().map_err(io::Error::from)? {
            match c {
                ControlMessageOwned::Ipv4Ttl(ttl) | ControlMessageOwned::Ipv6HopLimit(ttl) => {
                    dgram.hop_limit = u8::try_from(ttl).ok();
                }
                ControlMessageOwned::Ipv4RecvErr(e, offender)
                    if e.ee_origin == libc::SO_EE_ORIGIN_ICMP =>
                {
                    let by = offender.map(|a| {
                        IpAddr::V4(std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)))
                    });
                    dgram.icmp = Some((e.ee_type, e.ee_code, by));
                }
                ControlMessageOwned::Ipv6RecvErr(e, offender)
                    if e.ee_origin == libc::SO_EE_ORIGIN_ICMP6 =>
                {
                    let by =
                        offender.map(|a| IpAddr::V6(std::net::Ipv6Addr::from(a.sin6_addr.s6_addr)));
                    dgram.icmp = Some((e.ee_type, e.ee_code, by));
                }
                _ => {}
            }
        }
        Ok(dgram)
    }

    fn ip_of(addr: &SockaddrStorage) -> Option<IpAddr> {
        if let Some(a) = addr.as_sockaddr_in() {
            return Some(IpAddr::V4(a.ip()));
        }
        addr.as_sockaddr_in6().map(|a| IpAddr::V6(a.ip()))
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! ICMP probes are Linux's only for now: every call says so.

    use std::io;
    use std::net::IpAddr;
    use std::os::fd::{BorrowedFd, RawFd};

    /// One datagram as received (see the Linux version).
    #[derive(Debug)]
    pub(crate) struct Datagram {
        pub(crate) len: usize,
        pub(crate) from: Option<IpAddr>,
        pub(crate) hop_limit: Option<u8>,
        pub(crate) icmp: Option<(u8, u8, Option<IpAddr>)>,
    }

    fn unsupported() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "ICMP probes are supported on Linux only")
    }

    pub(super) fn recv_hop_limit(_: BorrowedFd<'_>, _: bool) -> io::Result<()> {
        Err(unsupported())
    }
    pub(super) fn recv_errors(_: BorrowedFd<'_>, _: bool) -> io::Result<()> {
        Err(unsupported())
    }
    pub(super) fn dont_fragment(_: RawFd) -> io::Result<()> {
        Err(unsupported())
    }
    pub(super) fn force_receive_buffer(_: RawFd, _: usize) -> io::Result<()> {
        Err(unsupported())
    }
    pub(super) fn recv(_: RawFd, _: &mut [u8], _: bool) -> io::Result<Datagram> {
        Err(unsupported())
    }
}
