//! ICMP echo probes ("ping") as a [`Machine`](prober_io::Machine): [`IcmpProbe`].
//!
//! # Sockets
//!
//! An unprivileged ICMP socket (`SOCK_DGRAM` with `IPPROTO_ICMP` or `IPPROTO_ICMPV6`) where
//! `net.ipv4.ping_group_range` admits the process's group (it governs IPv6 too), else a raw
//! socket, which needs CAP_NET_RAW; when neither is allowed the run is Unknown (reason `io`)
//! with a message naming both ways and the sysctl. [`IcmpSocket`] can insist on one kind.
//! Every descriptor is close-on-exec and non-blocking; no signal is touched.
//!
//! # Matching replies
//!
//! Each run picks a random echo id, a random first sequence number and a random 8-byte cookie
//! at the start of its data. A reply is the run's when it comes from the probed address and
//! carries the run's id, a sequence it sent and is still waiting on, and its data exactly, so
//! replies to other runs and to a `ping` beside us are ignored. On an unprivileged socket the
//! kernel replaces the id with the socket's port (and delivers only replies carrying it): the
//! socket binds the random id as its port when that is free, and the id matched is the port
//! the socket got.
//!
//! ICMP errors about a request (destination unreachable, time exceeded, packet too big) end
//! that request with reason `unreachable`, and the message says which error and who sent it
//! ("destination host prohibited (from 10.0.0.1)"); [`IcmpFacts::stats`] keeps the type and
//! code. On an unprivileged socket they come from the socket's error queue (`IP_RECVERR`,
//! `IPV6_RECVERR`), already matched to the socket by the kernel; a raw socket reads them as
//! the ICMP messages they are, and matches the echo they quote.
//!
//! # Phases and figures
//!
//! As blackbox_exporter v0.28.0's icmp prober: `resolve` (the name lookup), `setup` (opening
//! the socket, its options, the first request built) and `rtt` (the first request sent to its
//! reply), and the reply's TTL or hop limit (`IP_RECVTTL`, `IPV6_RECVHOPLIMIT`); see
//! [`IcmpFacts`]. Beyond blackbox, [`IcmpSpec::packets`] requests [`IcmpSpec::interval`] apart,
//! with loss ratio and min/avg/max/stddev of the round-trip time as `ping -c` and smokeping
//! report them ([`EchoStats`]); the run fails above [`IcmpSpec::max_loss_percent`]. The run ends as soon
//! as every request is answered or failed; requests still waiting at the deadline are lost.
//!
//! # Many targets: sharing sockets
//!
//! Outside an engine ([`prober_io::run_to_completion`]) each run opens its own socket. An
//! engine lends its runs a [`SharedSockets`] instead (through [`prober_io::Ctx::with_shared`]):
//! one socket per address family, socket choice, socket options and network namespace, opened
//! by the first run that needs it and closed when the last one leaves. The engine reads it
//! when it is ready (up to a budget a turn) and wakes the runs it has messages for
//! ([`SHARED_READY`]). A run takes a block of (id, sequence) keys no other live run of the
//! socket holds: on a raw socket a random id and first sequence, on an unprivileged one the
//! socket's port as id (the kernel's) and a random first sequence. A message goes to the run
//! its key names, and a reply must also come from the run's address and carry its data; what
//! matches nothing (a `ping` beside us, a late reply) wakes no one. The per-run state
//! (`Echoes`) takes replies and errors from whichever socket read them.
//!
//! Why: every raw ICMP socket of a family gets its own copy of every ICMP message the host
//! receives, so N runs in flight on raw sockets cost N copies of each reply, and a socket per
//! run costs its opening, options and closing. Measured with the `icmp_targets` example of
//! `prober-engine` (`cargo run -p prober-engine --example icmp_targets -- 10000`, a debug
//! build, as root on the 2-core CI machine under load; 10,000 loopback addresses, 200 in
//! flight): on raw sockets 110.8 µs CPU per echo and 200 descriptors held with a socket per
//! run, 22.0 µs and one descriptor shared; on unprivileged sockets (in a namespace that admits
//! them) 32.5 µs and 200 descriptors against 20.0 µs and one.
//!
//! A shared socket's pending error (an ICMP error about another run's echo sets the socket's
//! error, which the next send would return) is cleared before each send.
//!
//! # Network namespaces
//!
//! With [`IcmpSpec`]'s `connect.netns` the socket is made in that namespace by `prober-io`'s
//! namespace threads (of the kind the namespace's own `ping_group_range` allows), and shared
//! per namespace as it was when its thread last entered it.

#![warn(missing_docs)]

mod echoes;
mod packet;
mod probe;
mod receive;
mod shared;
mod socket;

pub use probe::{IcmpProbe, SHARED_READY};
pub use prober_core::{
    DEFAULT_PAYLOAD_SIZE, EchoStats, IcmpError, IcmpFacts, IcmpSocket, IcmpSocketKind, IcmpSpec,
    MAX_PACKETS, MAX_PAYLOAD_SIZE, MIN_INTERVAL,
};
pub use shared::SharedSockets;
