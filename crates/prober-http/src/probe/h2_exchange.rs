//! The state of an HTTP/2 exchange in progress ([`H2Exchange`]), held in the probe's state
//! while `h2.rs` drives it, and whether a connection speaks HTTP/2 at all. A leaf of the
//! probe's modules.

use prober_core::Scheme;
use prober_h2::client::{Client, StreamId};
use prober_transport::Transport;

use crate::body::BodyReader;

/// An HTTP/2 exchange in progress: the connection's client and this run's stream on it.
#[derive(Debug)]
pub(super) struct H2Exchange {
    pub(super) client: Box<Client>,
    pub(super) stream: StreamId,
    /// The client reported the stream's end
    /// ([`Turn::Ended`](prober_h2::client::Turn::Ended) comes once).
    pub(super) ended: bool,
    /// The final response's status and body, once its head arrived.
    pub(super) body: Option<(u16, BodyReader)>,
}

impl H2Exchange {
    /// What was read of the final response's body, for a run that ends early.
    pub(super) fn take_body(&mut self) -> Option<(u64, Vec<u8>)> {
        self.body.take().map(|(_, r)| {
            let sink = r.into_sink();
            (sink.total(), sink.into_kept())
        })
    }

    /// Whether the final response's head arrived (a deadline now is a body timeout).
    pub(super) fn in_body(&self) -> bool {
        self.body.is_some()
    }
}

/// Whether a connection to `scheme` speaks HTTP/2: h2c by prior knowledge on `http`, or the
/// server chose `h2` by ALPN on `https`.
pub(super) fn speaks_h2(
    version: prober_core::HttpVersion,
    scheme: Scheme,
    conn: &Transport,
) -> bool {
    match scheme {
        Scheme::Http => version == prober_core::HttpVersion::H2c,
        Scheme::Https => conn.alpn_protocol() == Some(prober_transport::ALPN_H2),
    }
}
