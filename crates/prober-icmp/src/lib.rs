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
//! Today each run opens its own socket. What that costs, measured by the `socket_cost` example
//! (`cargo run --release -p prober-icmp --example socket_cost`, as root: CPU time per echo to
//! 127.0.0.1 on a raw socket, 5,000 rounds, on the 2-core CI machine): opening, setting up and
//! closing the socket alone 4.9 µs; one echo and its reply on a socket kept open 6.6 µs; a
//! whole `IcmpProbe` run through `run_to_completion` (its own socket, and that driver's own
//! epoll) 24.0 µs. So a socket per probe nearly doubles the kernel's share of an echo; and
//! worse at scale, every raw ICMP socket of a family gets its own copy of every ICMP message
//! the host receives, so N runs in flight on raw sockets cost N copies of each reply
//! (unprivileged sockets are matched by the kernel on their id and escape this). For ten
//! thousand targets the engine is meant to hold one socket per address family and network
//! namespace instead, and to hand every received message to the run it names:
//!
//! - the per-run state is already apart from the socket: a run's requests, what became of
//!   them and the matching rules live in one value (`Echoes`), which takes replies and errors
//!   from whatever socket read them;
//! - a shared raw socket sees every echo reply of its family, so the engine keys its runs by
//!   (id, sequence): each run takes a random id as now, and the engine gives it a block of
//!   sequence numbers no other live run of that id holds; on a shared unprivileged socket the
//!   id is the socket's port, the same for every run, so the sequence alone is the key, and
//!   the engine hands out sequence blocks from one 16-bit space per socket (a run's block is
//!   free again when it ends; a run that cannot get one waits a turn);
//! - the reply still has to carry the run's cookie and come from its address, so a reply that
//!   reaches the wrong run by a sequence reused after a late reply is not counted;
//! - the socket's readiness is the engine's, not a run's: the engine reads up to a budget per
//!   turn and dispatches; the run's timer (next request, deadline) stays the run's own.
//!
//! The probe does not resolve through a network namespace of its own yet: it makes its socket
//! in the namespace of the thread that drives it.

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
