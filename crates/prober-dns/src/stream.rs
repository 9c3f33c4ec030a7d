//! The query over a byte stream: TCP, or TLS over TCP (DNS over TLS, RFC 7858). Both are
//! dialed by prober-transport's [`Dial`], the connect phase HTTP and gRPC share (the socket
//! made in the spec's network namespace, TLS files loaded off the poll thread, the
//! handshake), so this crate has no TCP or TLS driver of its own; over the connection, one
//! query goes out with its two-byte length prefix and replies come back the same way
//! (RFC 1035 4.2.2, RFC 7766).

use std::net::IpAddr;

use prober_core::{ClosePolicy, IpFamily, NetNs, Outcome, Reason, TlsOptions};
use prober_io::Ctx;
use prober_transport::dial::{DialError, Endpoint};
use prober_transport::{Transport, TransportError};

/// Replies read in one call before yielding to the driver's other work.
const READ_BUDGET: usize = 64;

/// Where a stream attempt connects: the chosen address (as text, for [`Endpoint::host`]) and
/// what the dial needs from the spec.
#[derive(Debug)]
pub(crate) struct Target {
    /// The server's address chosen for the run, an IP literal: the dial resolves nothing.
    pub host: String,
    pub port: u16,
    /// The TLS options for DNS over TLS (`None`: plain TCP).
    pub tls: Option<TlsOptions>,
    /// The target's TLS sessions, when its options ask for resumption.
    pub tls_sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    pub netns: Option<NetNs>,
    /// The local address the socket is bound to (the spec's source address).
    pub source: Option<IpAddr>,
}

impl Target {
    /// The dial's endpoint. The allow-list was checked on the chosen address already.
    pub fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            host: &self.host,
            port: self.port,
            tls: self.tls.as_ref(),
            tls_sessions: self.tls_sessions.as_deref(),
            // RFC 7858 3.2 names no ALPN for DoT (RFC 9461 would add `dot`); miekg sends none.
            alpn: &[],
            // An orderly close, as miekg/dns (and every resolver) closes its connection.
            close: ClosePolicy::Fin,
            nodelay: true,
            keep_alive: false,
            unix: None,
            filter: None,
            netns: self.netns.as_ref(),
            ip_family: IpFamily::Any,
            source: self.source,
        }
    }
}

/// One connected exchange: the query's bytes out, replies in.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub io: Transport,
    out: Vec<u8>,
    written: usize,
    /// Bytes of replies read and not yet taken (at most one 2 + 65535-byte message).
    inbuf: Vec<u8>,
}

/// What [`Exchange::drive`] came to.
#[derive(Debug)]
pub(crate) enum Drive {
    /// Waiting for readiness (interest synced).
    Pending,
    /// The read budget is spent: call again on `resume`.
    Yield,
    /// One whole message (without its length prefix).
    Message(Vec<u8>),
    /// The connection failed: reason and Go's text.
    Failed(Reason, String),
}

impl Exchange {
    /// An exchange on `io` that sends `query` (its length prefix added here).
    pub fn new(io: Transport, query: &[u8]) -> Exchange {
        let mut out = Vec::with_capacity(query.len() + 2);
        out.extend_from_slice(&(query.len() as u16).to_be_bytes());
        out.extend_from_slice(query);
        Exchange { io, out, written: 0, inbuf: Vec::new() }
    }

    /// Writes what is left of the query, then reads until one whole message is there.
    pub fn drive(&mut self, cx: &mut Ctx<'_>) -> Drive {
        while self.written < self.out.len() {
            match self.io.write(&self.out[self.written..]) {
                Ok(n) => self.written += n,
                Err(e) => return self.blocked_or_failed(cx, &e),
            }
        }
        if let Err(e) = self.io.flush() {
            return self.blocked_or_failed(cx, &e);
        }
        for _ in 0..READ_BUDGET {
            // Read at most up to the end of the message under way: never more than one
            // message (2 + 65535 bytes) is held.
            let want = match self.inbuf.get(..2) {
                Some(len) => 2 + usize::from(u16::from_be_bytes([len[0], len[1]])),
                None => 2,
            };
            if self.inbuf.len() == want {
                let message = self.inbuf.split_off(2);
                self.inbuf.clear();
                return Drive::Message(message);
            }
            let have = self.inbuf.len();
            self.inbuf.resize(want, 0);
            let read = self.io.read(&mut self.inbuf[have..]);
            match read {
                Ok(0) => {
                    self.inbuf.truncate(have);
                    let e = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                    let text = prober_transport::op_error_text(&mut self.io, "read", &e);
                    return Drive::Failed(Reason::Reset, text);
                }
                Ok(n) => self.inbuf.truncate(have + n),
                Err(e) => {
                    self.inbuf.truncate(have);
                    return self.blocked_or_failed(cx, &e);
                }
            }
        }
        Drive::Yield
    }

    fn blocked_or_failed(&mut self, cx: &mut Ctx<'_>, e: &TransportError) -> Drive {
        if matches!(e, TransportError::WouldBlock) {
            self.io.sync_interest(cx.registry);
            return Drive::Pending;
        }
        let (reason, text) = e.describe(&mut self.io);
        Drive::Failed(reason, text)
    }

    /// The local address as Go prints it, for messages.
    pub fn local_addr(&mut self) -> Option<String> {
        self.io.local_addr()
    }
}

/// The outcome of a dial that failed, in the words of the probe (`server` is the address).
pub(crate) fn dial_failure(server: &str, e: DialError) -> Outcome {
    match e {
        DialError::TlsNotBuiltIn => Outcome::unknown(
            Reason::Unsupported,
            format!("TLS not built in: cannot query {server} over TLS"),
        ),
        // TLS files that cannot be read are this node's matter, not the server's.
        DialError::Setup { reason, message } => Outcome::unknown(reason, message),
        DialError::Connect { reason, detail } => {
            Outcome::new(reason.failed_result(), reason, detail)
        }
    }
}
