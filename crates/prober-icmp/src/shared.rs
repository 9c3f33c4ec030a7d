//! Echo sockets shared by the runs of one engine: one socket per address family, socket kind,
//! set of socket options and network namespace, however many targets are pinged, and every
//! received message handed to the run it is about.
//!
//! A message is a run's by its key, (echo id, sequence), which [`SharedSockets::join`] gives
//! each run from the socket's 16-bit spaces so that no two live runs of a socket hold the same
//! key: on a raw socket the id is the run's own (random) and the first sequence random; on an
//! unprivileged one the kernel puts the socket's port in every echo as its id, so the id is the
//! same for all runs and the sequences alone tell them apart. A reply must also come from the
//! run's address and carry its data (a random cookie at its start) exactly: replies that match
//! nothing, a `ping` beside us, a late reply to an ended run, are dropped here without waking
//! anyone. A run whose key block cannot be found (the sequence space of the socket is full)
//! gets no shared socket and opens its own, as a run outside an engine does.
//!
//! The socket's readiness is the engine's: [`SharedSockets::read`] reads up to a budget, puts
//! each matched message in its run's inbox and names the runs to wake, and each run then takes
//! its inbox ([`SharedSockets::drain_inbox`]). A socket closes when its last run leaves.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::net::IpAddr;
use std::time::Instant;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use prober_core::{IcmpError, IcmpSocket, IcmpSocketKind};

use crate::receive::{Received, receive};
use crate::socket::{EchoSocket, OpenError, Options};

/// What makes runs able to share a socket: the same family, socket choice, options and
/// namespace (its file's identity, so a re-created namespace gets a socket of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SocketKey {
    pub(crate) ipv6: bool,
    pub(crate) choice: IcmpSocket,
    pub(crate) options: Options,
    pub(crate) netns: Option<(u64, u64)>,
}

/// A message for a run, already matched to it (address and data checked for a reply).
#[derive(Debug)]
pub(crate) enum Inbound {
    Reply { from: IpAddr, id: u16, seq: u16, at: Instant, hop_limit: Option<u8> },
    Error { to: Option<IpAddr>, id: u16, seq: u16, error: IcmpError },
}

/// A run's place on a shared socket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Joined {
    pub(crate) socket: usize,
    pub(crate) kind: IcmpSocketKind,
    pub(crate) id: u16,
    pub(crate) first_seq: u16,
}

#[derive(Debug)]
struct Shared {
    socket: EchoSocket,
    key: SocketKey,
    /// (id << 16 | sequence) to the ticket of the run that holds it.
    keys: IntMap<u32, u64>,
    members: usize,
}

#[derive(Debug)]
struct Member {
    socket: usize,
    dst: IpAddr,
    data: Vec<u8>,
    id: u16,
    first_seq: u16,
    count: u16,
    inbox: Vec<Inbound>,
}

/// A multiplicative hash for the integer keys of the maps read per message (echo keys,
/// tickets). Not keyed: the keys stored are ours (random blocks, tickets), and a sender who
/// picks the keys it sends only makes lookups, so it cannot build long chains.
#[derive(Default)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// The receive buffer a shared socket asks for: room for a burst of some thousands of replies
/// (a raw socket also gets a copy of each request to a local address) between two reads.
const RECEIVE_BUFFER: usize = 4 << 20;

/// How many random places a run's key block is tried at before the run opens its own socket.
const TRIES: usize = 16;

fn key(id: u16, seq: u16) -> u32 {
    u32::from(id) << 16 | u32::from(seq)
}

/// The echo sockets an engine shares among its runs (lent to them through
/// [`prober_io::Ctx::with_shared`]).
#[derive(Debug)]
pub struct SharedSockets {
    token: fn(usize) -> Token,
    sockets: Vec<Option<Shared>>,
    free: Vec<usize>,
    by_key: HashMap<SocketKey, usize>,
    members: IntMap<u64, Member>,
    buf: Vec<u8>,
}

impl SharedSockets {
    /// A store whose `i`-th socket is registered under `token(i)`: the engine reads socket `i`
    /// ([`SharedSockets::read`]) when that token is ready.
    pub fn new(token: fn(usize) -> Token) -> SharedSockets {
        SharedSockets {
            token,
            sockets: Vec::new(),
            free: Vec::new(),
            by_key: HashMap::new(),
            members: IntMap::default(),
            buf: vec![0; 65_536],
        }
    }

    /// How many sockets are open.
    pub fn sockets(&self) -> usize {
        self.by_key.len()
    }

    /// How many runs hold a place on a socket.
    pub fn runs(&self) -> usize {
        self.members.len()
    }

    /// Reads socket `index` up to `budget` datagrams, and appends to `wake` the ticket of each
    /// run that got its first message of this read (its inbox was empty). Returns true when
    /// the budget ran out before the socket was empty: the caller reads it again next turn
    /// (readiness is edge-triggered, no new event would come).
    pub fn read(&mut self, index: usize, budget: usize, wake: &mut Vec<u64>) -> bool {
        let Some(Some(shared)) = self.sockets.get(index) else { return false };
        for _ in 0..budget {
            let msg = match receive(&shared.socket, &mut self.buf) {
                Ok(Some(msg)) => msg,
                Ok(None) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(_) => continue,
            };
            let (id, seq) = msg.id_seq();
            let Some(&ticket) = shared.keys.get(&key(id, seq)) else { continue };
            let Some(member) = self.members.get_mut(&ticket) else { continue };
            let inbound = match msg {
                Received::Reply { from, id, seq, data, at, hop_limit } => {
                    if from != member.dst || data != member.data.as_slice() {
                        continue;
                    }
                    Inbound::Reply { from, id, seq, at, hop_limit }
                }
                Received::Error { to, id, seq, error } => Inbound::Error { to, id, seq, error },
            };
            if member.inbox.is_empty() {
                wake.push(ticket);
            }
            // Bounded: one read's budget at most, taken by the run in the same turn.
            member.inbox.push(inbound);
        }
        true
    }

    /// Gives run `ticket` a place on the socket for `key` (opened with `open` and registered
    /// if there is none yet), with `count` consecutive sequences for requests to `dst` carrying
    /// `data`. `None` when no block of keys is free (the caller opens a socket of its own).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn join(
        &mut self,
        registry: &Registry,
        ticket: u64,
        key_of: SocketKey,
        open: impl FnOnce() -> Result<EchoSocket, OpenError>,
        dst: IpAddr,
        data: Vec<u8>,
        count: u16,
        mut random: impl FnMut() -> u64,
    ) -> Result<Option<Joined>, OpenError> {
        self.leave(registry, ticket);
        let index = match self.by_key.get(&key_of) {
            Some(&i) => i,
            None => self.insert(registry, key_of, open()?)?,
        };
        let Some(Some(shared)) = self.sockets.get_mut(index) else { return Ok(None) };
        let fixed_id =
            (shared.socket.kind == IcmpSocketKind::Unprivileged).then_some(shared.socket.id);
        for _ in 0..TRIES {
            let r = random();
            let id = fixed_id.unwrap_or(r as u16);
            let first_seq = (r >> 16) as u16;
            let block = (0..count).map(|k| key(id, first_seq.wrapping_add(k)));
            if block.clone().any(|k| shared.keys.contains_key(&k)) {
                continue;
            }
            shared.keys.extend(block.map(|k| (k, ticket)));
            shared.members += 1;
            let kind = shared.socket.kind;
            let member =
                Member { socket: index, dst, data, id, first_seq, count, inbox: Vec::new() };
            self.members.insert(ticket, member);
            return Ok(Some(Joined { socket: index, kind, id, first_seq }));
        }
        if shared.members == 0 {
            self.close(registry, index);
        }
        Ok(None)
    }

    fn insert(
        &mut self,
        registry: &Registry,
        key_of: SocketKey,
        socket: EchoSocket,
    ) -> Result<usize, OpenError> {
        let index = self.free.pop().unwrap_or(self.sockets.len());
        socket.grow_receive_buffer(RECEIVE_BUFFER);
        let fd = socket.raw_fd();
        if let Err(error) =
            registry.register(&mut SourceFd(&fd), (self.token)(index), Interest::READABLE)
        {
            self.free.push(index);
            return Err(OpenError { message: format!("epoll: {error}"), error });
        }
        let shared = Shared { socket, key: key_of, keys: IntMap::default(), members: 0 };
        if index == self.sockets.len() {
            self.sockets.push(Some(shared));
        } else {
            self.sockets[index] = Some(shared);
        }
        self.by_key.insert(key_of, index);
        Ok(index)
    }

    /// Sends `msg` to `dst` on socket `index`.
    ///
    /// An ICMP error about another run's echo also leaves a pending error on the socket (the
    /// kernel's `sk_err`, for raw sockets and ping sockets with `IP_RECVERR` alike), which the
    /// next send would return instead of sending: cleared first (that run still gets its error,
    /// from the error queue or as the ICMP message a raw socket reads), and a failed send is
    /// tried once more in case one arrived in between; an error of this send itself fails both.
    pub(crate) fn send(&self, index: usize, msg: &[u8], dst: IpAddr) -> io::Result<()> {
        let Some(Some(shared)) = self.sockets.get(index) else {
            return Err(io::Error::other("the shared ICMP socket is gone"));
        };
        shared.socket.clear_error();
        match shared.socket.send(msg, dst) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => shared.socket.send(msg, dst),
            r => r,
        }
    }

    /// Hands each message in run `ticket`'s inbox to `f`, emptying it.
    pub(crate) fn drain_inbox(&mut self, ticket: u64, mut f: impl FnMut(Inbound)) {
        if let Some(member) = self.members.get_mut(&ticket) {
            member.inbox.drain(..).for_each(&mut f);
        }
    }

    /// Run `ticket` has ended: its keys are free again, and the socket closes if it was the
    /// last run on it.
    pub(crate) fn leave(&mut self, registry: &Registry, ticket: u64) {
        let Some(member) = self.members.remove(&ticket) else { return };
        let Some(Some(shared)) = self.sockets.get_mut(member.socket) else { return };
        for k in 0..member.count {
            let k = key(member.id, member.first_seq.wrapping_add(k));
            if shared.keys.get(&k) == Some(&ticket) {
                shared.keys.remove(&k);
            }
        }
        shared.members -= 1;
        if shared.members == 0 {
            self.close(registry, member.socket);
        }
    }

    fn close(&mut self, registry: &Registry, index: usize) {
        if let Some(shared) = self.sockets.get_mut(index).and_then(Option::take) {
            let fd = shared.socket.raw_fd();
            let _ = registry.deregister(&mut SourceFd(&fd));
            self.by_key.remove(&shared.key);
            self.free.push(index);
        }
    }
}
