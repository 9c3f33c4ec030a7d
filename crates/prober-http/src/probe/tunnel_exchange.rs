//! The state of a `CONNECT` exchange with a proxy ([`Tunnel`]), held in the probe's state
//! while `tunnel.rs` drives it. A leaf of the probe's modules.

use prober_io::Ctx;
use prober_transport::Transport;

use crate::response::HeadParser;

/// The `CONNECT` exchange on the connection to the proxy.
#[derive(Debug)]
pub(super) struct Tunnel {
    pub(super) conn: Transport,
    pub(super) request: Vec<u8>,
    pub(super) written: usize,
    pub(super) parser: HeadParser,
}

impl Tunnel {
    pub(super) fn close(self, cx: &mut Ctx<'_>) {
        self.conn.close(cx);
    }
}
