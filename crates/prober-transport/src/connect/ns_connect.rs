//! The state of a connection made in another network namespace (`netns.rs` drives it). On
//! its own so that the connector can hold it without importing the code that drives it.

use std::time::Instant;

use mio::net::TcpStream;
use prober_core::NetNs;
use prober_io::NsSockets;

/// A connection made in another network namespace: the sockets come from the `prober-netns`
/// pool (one per address, made before the race) instead of `socket()` on the poll thread, or
/// one kept by the driver for that namespace ([`prober_io::NsPools`]).
#[derive(Debug)]
pub(super) struct NsConnect {
    pub(super) netns: NetNs,
    /// Where the pool leaves the sockets.
    pub(super) answer: NsSockets,
    /// The sockets, by index in the address list, taken as the race uses them.
    pub(super) sockets: Vec<Option<std::os::fd::OwnedFd>>,
    /// A socket kept by the driver for this namespace, for the one address of an IP literal.
    pub(super) kept: Option<TcpStream>,
    /// The identity of the namespace file the sockets were made under: where they go back.
    pub(super) id: Option<(u64, u64)>,
    /// When the sockets were asked of a thread (its check of the path is no older).
    pub(super) asked_at: Option<Instant>,
    /// The thread was asked only to check the path, for a kept socket (no socket made when
    /// it still names the kept sockets' namespace).
    pub(super) checking: bool,
}

impl NsConnect {
    pub(super) fn new(netns: &NetNs) -> NsConnect {
        NsConnect {
            netns: netns.clone(),
            answer: NsSockets::default(),
            sockets: Vec::new(),
            kept: None,
            id: None,
            asked_at: None,
            checking: false,
        }
    }
}
