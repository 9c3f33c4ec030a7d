//! Reading from a hop's connection, shared by the HTTP/1.1, HTTP/2 and tunnel exchanges: how
//! much one read asks for, how many reads a turn makes, and the read itself. A leaf of the
//! probe's modules.

use prober_transport::{Transport, TransportError};

/// Bytes asked for in one `read`.
/// Bytes asked for per read, and the size of the per-thread buffer reads go into (see
/// `read_append`): what a probe usually gets (a head and a short body), not bulk transfer.
pub(super) const READ_CHUNK: usize = 4 * 1024;
/// Reads per call before the machine yields to the poll loop (64 KiB): a peer that streams
/// fast must not hold the engine thread, nor keep this probe past its deadline.
pub(super) const READS_PER_TURN: usize = 16;

/// Reads at most `room` bytes (and at most [`READ_CHUNK`]) from `conn`, appended to `buf`.
///
/// The read goes into one buffer per thread, zeroed once, and only the bytes that arrived are
/// copied out: zero-filling room in the probe's own buffer before every read (safe Rust cannot
/// hand uninitialised memory to `Read`) was 22 % of an HTTP probe's user-space instructions
/// (bench/profile.sh http_oneshot, callgrind).
pub(super) fn read_append(
    conn: &mut Transport,
    buf: &mut Vec<u8>,
    room: usize,
) -> Result<usize, TransportError> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Box<[u8]>> =
            std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
    }
    SCRATCH.with_borrow_mut(|scratch| {
        let room = room.min(scratch.len());
        let r = conn.read(&mut scratch[..room]);
        if let Ok(n) = r {
            buf.extend_from_slice(&scratch[..n]);
        }
        r
    })
}
