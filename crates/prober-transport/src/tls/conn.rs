//! One TLS connection over a nonblocking socket, moved record by record.

use std::io::{self, Read, Write};

use crate::conn::Conn;
use mio::{Interest, Registry, Token};
use prober_core::{ClosePolicy, TlsVersion};
use prober_io::{Ctx, retry_interrupted};
use rustls::ClientConnection;

use crate::TransportError;

/// One TLS connection over a nonblocking socket.
#[derive(Debug)]
pub struct TlsConn {
    pub(super) conn: Conn,
    pub(super) tls: ClientConnection,
    pub(super) token: Token,
    pub(super) interest: Interest,
    pub(super) eof: bool,
    /// Whether the server's first five bytes have been seen (and were not `HTTP/`).
    pub(super) first_record_seen: bool,
    /// The versions this connection offers, as a message names them (`1.2 only`).
    pub(super) offered: &'static str,
    /// The name sessions are filed under, when resumption is on.
    pub(super) resume_name: Option<rustls::pki_types::ServerName<'static>>,
}

impl TlsConn {
    /// Advances the handshake as far as the socket allows: `Ok(true)` once it is complete.
    ///
    /// # Errors
    /// A socket error, a TLS failure (alert, verification), or the server closing first.
    pub fn handshake(&mut self) -> Result<bool, TransportError> {
        loop {
            match self.flush() {
                Ok(()) | Err(TransportError::WouldBlock) => {}
                Err(e) => return Err(e),
            }
            if !self.tls.is_handshaking() {
                return Ok(true);
            }
            if !self.tls.wants_read() {
                return Ok(false);
            }
            if !self.first_record_seen && !self.check_first_record()? {
                return Ok(false);
            }
            match retry_interrupted(|| self.tls.read_tls(self.conn.stream())) {
                Ok(0) => {
                    return Err(TransportError::Tls(
                        "the server closed the connection during the handshake (EOF)".into(),
                    ));
                }
                Ok(_) => self.process()?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(TransportError::io("read", e)),
            }
        }
    }

    /// Looks at the server's first bytes without consuming them, as Go's transport looks at
    /// the first record header: `HTTP/` there is a plain HTTP server. `Ok(false)` while
    /// nothing has arrived. A first segment shorter than five bytes is not looked at (an HTTP
    /// server writes its status line in one piece); EOF and socket errors are left to the read
    /// that follows.
    fn check_first_record(&mut self) -> Result<bool, TransportError> {
        let mut head = [0u8; 5];
        match retry_interrupted(|| self.conn.stream().peek(&mut head)) {
            Ok(5) if &head == b"HTTP/" => Err(TransportError::HttpResponseToHttps),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Ok(_) | Err(_) => {
                self.first_record_seen = true;
                Ok(true)
            }
        }
    }

    /// Processes received records; a TLS error is reported after trying to send the alert.
    fn process(&mut self) -> Result<(), TransportError> {
        if let Err(e) = self.tls.process_new_packets() {
            let _ = self.flush();
            // rustls's words for a version mismatch do not say which versions were offered,
            // and a `max_version`/`min_version` set long ago is what the reader must find.
            let version_refused = match &e {
                rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion) => true,
                rustls::Error::PeerIncompatible(p) => format!("{p:?}").contains("Version"),
                _ => false,
            };
            if version_refused {
                return Err(TransportError::Tls(format!(
                    "{e} (this probe offers TLS {})",
                    self.offered
                )));
            }
            return Err(TransportError::Tls(e.to_string()));
        }
        Ok(())
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, TransportError> {
        loop {
            match self.flush() {
                Ok(()) | Err(TransportError::WouldBlock) => {}
                Err(e) => return Err(e),
            }
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: an end of stream like any other here.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(TransportError::io("read", e)),
            }
            if self.eof {
                return Ok(0);
            }
            match retry_interrupted(|| self.tls.read_tls(self.conn.stream())) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) => return Err(TransportError::io("read", e)),
            }
            self.process()?;
        }
    }

    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, TransportError> {
        let n = self.tls.writer().write(buf).map_err(|e| TransportError::io("write", e))?;
        match self.flush() {
            Ok(()) | Err(TransportError::WouldBlock) if n > 0 || buf.is_empty() => Ok(n),
            // rustls's buffer is full: wait until records have gone out.
            Ok(()) | Err(TransportError::WouldBlock) => Err(TransportError::WouldBlock),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn flush(&mut self) -> Result<(), TransportError> {
        while self.tls.wants_write() {
            retry_interrupted(|| self.tls.write_tls(self.conn.stream()))
                .map_err(|e| TransportError::io("write", e))?;
        }
        Ok(())
    }

    /// Updates the registration's interest to what rustls wants next (see the module docs).
    pub fn sync_interest(&mut self, registry: &Registry) {
        let want = self.wanted_interest();
        if want != self.interest
            && registry.reregister(self.conn.stream(), self.token, want).is_ok()
        {
            self.interest = want;
        }
    }

    /// See [`crate::Transport::is_quiet`].
    pub(crate) fn is_quiet(&mut self) -> bool {
        self.holds_nothing() && crate::quiet::peer_is_quiet(&mut self.conn)
    }

    /// See [`crate::Transport::holds_nothing`].
    pub(crate) fn holds_nothing(&mut self) -> bool {
        if self.eof || self.tls.wants_write() {
            return false;
        }
        let mut byte = [0u8; 1];
        let buffered = match self.tls.reader().read(&mut byte) {
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
            // Data, or the peer's close_notify.
            Ok(_) => true,
        };
        !buffered
    }

    /// What rustls needs the socket for next.
    fn wanted_interest(&self) -> Interest {
        match (self.tls.wants_read(), self.tls.wants_write()) {
            (true, true) => Interest::READABLE | Interest::WRITABLE,
            (false, true) => Interest::WRITABLE,
            _ => Interest::READABLE,
        }
    }

    /// See [`crate::Transport::rearm`]. Registered for what rustls wants next, as
    /// [`TlsConn::sync_interest`] would leave it: for an idle connection that is reading only,
    /// so the first read of the run that takes it finds the interest it needs instead of
    /// re-registering a second time.
    pub(crate) fn rearm(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let interest = self.wanted_interest();
        registry.reregister(self.conn.stream(), token, interest)?;
        self.token = token;
        self.interest = interest;
        Ok(())
    }

    /// Whether the handshake resumed a session (see [`crate::TlsSessions`]).
    pub fn resumed(&self) -> bool {
        self.tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
    }

    /// The protocol the server chose by ALPN.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.tls.alpn_protocol()
    }

    /// The negotiated protocol version (after the handshake).
    pub fn protocol_version(&self) -> Option<TlsVersion> {
        match self.tls.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => Some(TlsVersion::Tls13),
            rustls::ProtocolVersion::TLSv1_2 => Some(TlsVersion::Tls12),
            _ => None,
        }
    }

    /// The TCP connection underneath.
    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// The TCP connection underneath, mutably.
    pub fn conn_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// Closes the connection; with an orderly close policy `close_notify` is sent first (as far
    /// as the socket takes it without blocking).
    pub fn close(mut self, cx: &mut Ctx<'_>) {
        if self.conn.close_policy() == ClosePolicy::Fin {
            self.tls.send_close_notify();
            let _ = self.flush();
        }
        self.conn.close(cx);
    }
}
