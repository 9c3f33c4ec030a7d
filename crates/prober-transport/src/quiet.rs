//! Whether an idle connection's peer has been quiet: shared by plain and TLS connections.

use std::io;

use crate::conn::Conn;
use prober_io::retry_interrupted;

/// Whether a non-blocking peek at `conn` would block: nothing received, no FIN, no error.
pub(crate) fn peer_is_quiet(conn: &mut Conn) -> bool {
    let mut byte = [0u8; 1];
    let peeked = retry_interrupted(|| conn.stream().peek(&mut byte));
    matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}
