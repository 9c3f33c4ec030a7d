//! A hop through a proxy: the allow-list's check of the target, and for an `https` target the
//! `CONNECT` exchange that opens the tunnel the dial then shakes hands through (see
//! `crate::proxy` for the bytes and the rules). The proxy's answer is read as any response
//! head is, within [`MAX_HEAD`] and [`crate::response::MAX_INTERIM_BYTES`], under the run's
//! one deadline.

use super::*;

use prober_core::ProxyServer;

use super::tunnel_exchange::Tunnel;
use crate::proxy::{build_connect, proxy_for, target_refused};

impl HttpProbe {
    /// The proxy the current hop goes through, if any.
    pub(super) fn proxy(&self) -> Option<&ProxyServer> {
        proxy_for(&self.plan.spec, self.url())
    }

    /// The current hop is `https` through a proxy whose tunnel is not open yet.
    pub(super) fn tunnel_wanted(&self) -> bool {
        !self.tunneled && self.url().scheme() == Scheme::Https && self.proxy().is_some()
    }

    /// The current hop is `http` through a proxy: HTTP/1.1 in absolute form, never h2c.
    pub(super) fn proxied_plain(&self) -> bool {
        self.url().scheme() == Scheme::Http && self.proxy().is_some()
    }

    /// The allow-list's verdict on the target of a proxied hop (see
    /// [`crate::proxy::target_refused`]): a Failure with reason `denied` before anything is
    /// sent, else `None`.
    pub(super) fn proxy_refused(&mut self, cx: &mut Ctx<'_>) -> Option<Step> {
        let filter = self.plan.spec.connect.address_filter.as_ref()?;
        self.proxy()?;
        let why = target_refused(filter, self.url())?;
        let msg = format!("{}: not allowed: {why}", self.op_url());
        Some(self.fail(cx, None, Reason::Denied, msg, None))
    }

    /// Connected to the proxy for an `https` hop: ask for the tunnel.
    pub(super) fn start_tunnel(&mut self, cx: &mut Ctx<'_>, conn: Transport) -> Step {
        let (Some(proxy), Some(all)) = (self.proxy(), self.plan.spec.proxy.as_deref()) else {
            return self.fail(cx, Some(conn), Reason::Internal, "no proxy".into(), None);
        };
        let request = build_connect(proxy, all, self.url());
        self.buf.clear();
        let parser = HeadParser::new();
        self.state = State::Tunnel(Box::new(Tunnel { conn, request, written: 0, parser }));
        self.drive(cx)
    }

    /// Writes the `CONNECT`, then reads the proxy's answer until it is complete.
    pub(super) fn tunnel_turn(&mut self, cx: &mut Ctx<'_>, mut t: Box<Tunnel>) -> Next {
        while t.written < t.request.len() {
            match t.conn.write(&t.request[t.written..]) {
                Ok(0) => {
                    let e = io::Error::from(io::ErrorKind::WriteZero);
                    let e = TransportError::Io { op: "write", error: e };
                    return Next::Return(self.tunnel_failure(cx, t.conn, &e));
                }
                Ok(n) => t.written += n,
                Err(TransportError::WouldBlock) => {
                    t.conn.sync_interest(cx.registry);
                    self.state = State::Tunnel(t);
                    return Next::Return(Step::Pending);
                }
                Err(e) => return Next::Return(self.tunnel_failure(cx, t.conn, &e)),
            }
        }
        loop {
            match read_append(&mut t.conn, &mut self.buf, READ_CHUNK) {
                Ok(0) => {
                    let e = t.parser.eof(&self.buf);
                    return Next::Return(self.tunnel_refused(cx, t.conn, Reason::Protocol, &e));
                }
                Ok(n) => {
                    if !HeadParser::worth_parsing(&self.buf, n) {
                        continue;
                    }
                    loop {
                        match t.parser.parse(&self.buf) {
                            Ok(HeadStatus::Partial) => break,
                            Ok(HeadStatus::Interim { len, .. }) => {
                                self.buf.drain(..len);
                            }
                            Ok(HeadStatus::Complete(head)) => {
                                return Next::Return(self.on_connect_answer(cx, t.conn, &head));
                            }
                            Err(e) => {
                                let step = self.tunnel_refused(cx, t.conn, Reason::Protocol, &e);
                                return Next::Return(step);
                            }
                        }
                    }
                }
                Err(TransportError::WouldBlock) => {
                    t.conn.sync_interest(cx.registry);
                    self.state = State::Tunnel(t);
                    return Next::Return(Step::Pending);
                }
                Err(e) => return Next::Return(self.tunnel_failure(cx, t.conn, &e)),
            }
        }
    }

    /// The proxy's answer: 2xx opens the tunnel (the dial shakes hands inside it), anything
    /// else ends the run naming the proxy and its status.
    fn on_connect_answer(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        head: &crate::response::ResponseHead,
    ) -> Step {
        if !(200..300).contains(&head.status) {
            let why = format!("answered CONNECT with status {}", head.status);
            return self.tunnel_refused(cx, conn, Reason::Status, &why);
        }
        if self.buf.len() > head.len {
            let why = format!("sent {} bytes after its CONNECT answer", self.buf.len() - head.len);
            return self.tunnel_refused(cx, conn, Reason::Protocol, &why);
        }
        self.buf.clear();
        // Without TLS, `Plain` is the only variant: the match is kept for the build with it.
        #[cfg_attr(not(feature = "tls"), allow(clippy::infallible_destructuring_match))]
        let conn = match conn {
            Transport::Plain(conn) => conn,
            #[cfg(feature = "tls")]
            other => {
                let msg = "the connection to the proxy is not plain TCP".to_string();
                return self.fail(cx, Some(other), Reason::Internal, msg, None);
            }
        };
        self.tunneled = true;
        let ep = endpoint(&self.plan, self.hop.as_deref(), true);
        let step = self.dial.start_tls(cx, conn, &ep);
        self.on_dial(cx, step)
    }

    /// Ends the run for a proxy that did not open the tunnel: `Get "url": proxy ADDR WHY`.
    fn tunnel_refused(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        reason: Reason,
        why: &dyn std::fmt::Display,
    ) -> Step {
        let proxy = self.proxy().map(ProxyServer::address).unwrap_or_default();
        let msg = format!("{}: proxy {proxy} {why}", self.op_url());
        self.fail(cx, Some(conn), reason, msg, None)
    }

    /// A socket error on the connection to the proxy, in Go's words (`proxyconnect tcp: ...`).
    fn tunnel_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        e: &TransportError,
    ) -> Step {
        let (reason, detail) = e.describe(&mut conn);
        let msg = format!("{}: proxyconnect tcp: {detail}", self.op_url());
        self.fail(cx, Some(conn), reason, msg, None)
    }
}
