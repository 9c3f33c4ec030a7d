//! The HTTP/2 side of [`HttpProbe`]: one request on stream 1 of a connection that negotiated
//! `h2` by ALPN (HTTPS) or speaks h2c with prior knowledge ([`HttpVersion::H2c`]), driven
//! through prober-h2's sans-I/O client. Status, redirects, the body limit, expectations and
//! the deadline are the HTTP/1.1 path's own (`on_head`'s decisions, `respond`, `fail`): only the
//! framing differs, as in Go's transport, where both versions end in the same `http.Response`.
//!
//! One connection carries one request: a followed redirect dials again (as the kubelet's
//! transport does with keep-alives disabled), and the connection is closed once the response
//! is read. Messages follow Go's HTTP/2 client (`stream error: stream ID 1; CODE; received
//! from peer`).
//!
//! [`HttpVersion::H2c`]: prober_core::HttpVersion::H2c

use std::io;
use std::time::Instant;

use prober_core::{HttpResponseVersion, Reason};
use prober_h2::client::{Budget, Client, H2Error, Turn};
use prober_h2::frame::error_code_name;
use prober_io::{Ctx, Step};
use prober_transport::{Transport, TransportError};

use super::h2_exchange::H2Exchange;
use super::{HttpProbe, Next, State};
use crate::body::{BodyProgress, BodyReader, Framing};
use crate::cookies::with_cookies;
use crate::redirect::Decision;
use crate::request::build_h2_request;

/// Reads per call before the machine yields to the poll loop, as on HTTP/1.1.
const READS_PER_TURN: usize = super::READS_PER_TURN;
/// Frames queued for the server beyond which we wait for it to read (a server that sends
/// PINGs or SETTINGS without reading our answers must not grow our buffer).
const MAX_PENDING_OUTPUT: usize = 64 * 1024;

impl HttpProbe {
    /// The connection speaks HTTP/2: open the current hop's request on it, on a new client
    /// (preface first) or on the client a keep-alive run kept with the connection.
    pub(super) fn start_h2(&mut self, cx: &mut Ctx<'_>, conn: Transport) -> Step {
        let (url, host_override, referer) = match &self.hop {
            Some(hop) => (&hop.url, hop.host_override.as_deref(), hop.referer.as_deref()),
            None => (&self.plan.spec.url, self.plan.host_override.as_deref(), None),
        };
        let request = build_h2_request(
            url,
            &with_cookies(&self.plan.spec.headers, self.jar.as_deref(), url),
            &self.plan.spec.user_agent,
            host_override,
            referer,
            self.message(),
        );
        let mut client = if self.dial.reused() {
            match self.dial.take_session().and_then(|s| s.downcast::<Client>().ok()) {
                Some(client) => client,
                // A kept connection without its client cannot go on: a fresh one.
                None => return self.retry(cx, conn),
            }
        } else {
            Box::new(Client::new())
        };
        let stream = match client.open(request) {
            Ok(id) => id,
            // A kept connection that went away while idle (GOAWAY, error): a fresh one.
            Err(_) if self.dial.reused() => return self.retry(cx, conn),
            Err(e) => {
                let mut x = H2Exchange { client, stream: 0, ended: false, body: None };
                return self.h2_failure(cx, conn, &mut x, &e);
            }
        };
        let x = H2Exchange { client, stream, ended: false, body: None };
        self.state = State::H2 { conn, x: Box::new(x) };
        self.drive(cx)
    }

    /// Runs the HTTP/2 connection until it would block, the budget of this turn is spent, or
    /// the run (or hop) ends.
    pub(super) fn h2_turn(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        mut x: Box<H2Exchange>,
    ) -> Next {
        let mut reads = 0;
        let mut budget = Budget::PER_TURN;
        loop {
            let stream = x.stream;
            let spent = match x.client.process(&mut budget) {
                Ok(Turn::Pending) => false,
                Ok(Turn::Budget) => true,
                Ok(Turn::Ended(id)) if id == stream => {
                    x.ended = true;
                    false
                }
                // Not ours (none other is opened on this connection): forgotten.
                Ok(Turn::Ended(id)) => {
                    x.client.finish(id);
                    false
                }
                Err(e) => return Next::Return(self.h2_failure(cx, conn, &mut x, &e)),
            };
            if self.first_byte.is_none() && x.client.has_response_head(stream) {
                self.first_byte = Some(self.since_start(Instant::now()));
            }
            if x.body.is_none() {
                if x.client.has_response_head(stream) {
                    return self.h2_head(cx, conn, x);
                }
                if x.ended {
                    // Ended without a response: reset, or left out by a GOAWAY.
                    let e = match x.client.finish(stream) {
                        Some(Err(e)) => e,
                        _ => x.client.eof(),
                    };
                    if e.unprocessed(stream) && self.dial.reused() {
                        return Next::Return(self.retry(cx, conn));
                    }
                    return Next::Return(self.h2_failure(cx, conn, &mut x, &e));
                }
            }
            match body_next(&mut x) {
                BodyNext::More => {}
                BodyNext::Done { truncated } => {
                    return Next::Return(self.h2_done(cx, conn, *x, truncated));
                }
                BodyNext::Failed(e) => return Next::Return(self.h2_failure(cx, conn, &mut x, &e)),
                BodyNext::Broken(e) => {
                    let Some((_, reader)) = x.body.take() else { unreachable!("in the body") };
                    return Next::Return(self.body_failure(cx, conn, reader, &e));
                }
            }
            while !x.client.pending_output().is_empty() {
                match conn.write(x.client.pending_output()) {
                    Ok(0) => {
                        let error = io::Error::from(io::ErrorKind::WriteZero);
                        let e = TransportError::Io { op: "write", error };
                        return Next::Return(self.h2_transport_failure(cx, conn, &mut x, &e));
                    }
                    Ok(n) => x.client.consume_output(n),
                    Err(TransportError::WouldBlock) => break,
                    Err(e) => return Next::Return(self.h2_transport_failure(cx, conn, &mut x, &e)),
                }
            }
            if x.client.pending_output().len() > MAX_PENDING_OUTPUT {
                conn.sync_interest(cx.registry);
                self.state = State::H2 { conn, x };
                return Next::Return(Step::Pending);
            }
            if x.body.as_ref().is_some_and(|(_, r)| r.has_work()) {
                // Decoded bytes left to produce: that is this step's work, not a read (which
                // could wait for data the body does not need).
                if reads == READS_PER_TURN {
                    self.state = State::H2 { conn, x };
                    return Next::Return(Step::Yield);
                }
                reads += 1;
                continue;
            }
            if spent || reads == READS_PER_TURN {
                // Let other work have its turn; the driver resumes right after its poll.
                self.state = State::H2 { conn, x };
                return Next::Return(Step::Yield);
            }
            reads += 1;
            self.buf.clear();
            match super::read_append(&mut conn, &mut self.buf, super::READ_CHUNK) {
                Ok(0) => {
                    let e = x.client.eof();
                    return Next::Return(self.h2_failure(cx, conn, &mut x, &e));
                }
                Ok(_) => x.client.push(&self.buf),
                Err(TransportError::WouldBlock) => {
                    conn.sync_interest(cx.registry);
                    self.state = State::H2 { conn, x };
                    return Next::Return(Step::Pending);
                }
                Err(e) => return Next::Return(self.h2_transport_failure(cx, conn, &mut x, &e)),
            }
        }
    }

    /// The final response's body is complete (or past the limit): the verdict, and the
    /// connection released.
    fn h2_done(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        mut x: H2Exchange,
        truncated: bool,
    ) -> Step {
        let Some((status, reader)) = x.body.take() else { unreachable!("in the body") };
        if x.ended {
            x.client.finish(x.stream);
        } else {
            // Stopped at the limit: the stream is given up, the connection may still serve.
            x.client.cancel(x.stream);
        }
        self.h2_release(cx, conn, x.client);
        self.respond(status, reader, truncated)
    }

    /// Ends this run's use of the connection: kept with its client for the next run when the
    /// spec keeps connections, the client is idle and what it queued could be written; else
    /// closed. A connection through a proxy is never kept (as in `release`).
    fn h2_release(&mut self, cx: &mut Ctx<'_>, mut conn: Transport, mut client: Box<Client>) {
        if !self.plan.keep_alive || self.proxy().is_some() || !client.is_idle() {
            conn.close(cx);
            return;
        }
        while !client.pending_output().is_empty() {
            match conn.write(client.pending_output()) {
                Ok(n) if n > 0 => client.consume_output(n),
                _ => {
                    conn.close(cx);
                    return;
                }
            }
        }
        let ep = super::endpoint(&self.plan, self.hop.as_deref(), self.tunneled);
        self.dial.keep_session(cx, conn, &ep, client);
    }

    /// The response head arrived: the redirect decision of the HTTP/1.1 path. The final
    /// response's body is read next ([`Next::Continue`]); a followed redirect dials the next hop.
    fn h2_head(&mut self, cx: &mut Ctx<'_>, conn: Transport, mut x: Box<H2Exchange>) -> Next {
        let response = x.client.response(x.stream);
        let status = response.and_then(|r| r.status());
        let location = response
            .and_then(|r| prober_h2::client::header(&r.headers, "location"))
            .map(str::to_string);
        // Set here for HTTP/2 as `on_head` sets them for HTTP/1: an earlier HTTP/1.1 hop's
        // values must not stand for this response.
        self.last_version = Some(HttpResponseVersion::Http2);
        self.last_length = response
            .and_then(|r| prober_h2::client::header(&r.headers, "content-length"))
            .and_then(|v| v.trim().parse().ok());
        let Some(status) = status else {
            let msg = format!("{}: http2: response lacks :status", self.op_url());
            return Next::Return(self.fail(cx, Some(conn), Reason::Protocol, msg, None));
        };
        self.last_status = Some(status);
        let (current, host_override) = match &self.hop {
            Some(hop) => (&hop.url, hop.host_override.as_deref()),
            None => (&self.plan.spec.url, self.plan.host_override.as_deref()),
        };
        if let (Some(jar), Some(r)) = (&mut self.jar, response) {
            let set = r.headers.iter().filter(|(n, _)| n == "set-cookie").map(|(_, v)| &**v);
            jar.store(current, set);
        }
        let decision = self.redirects.decide(
            &self.plan.spec.url,
            current,
            host_override,
            &self.plan.spec.method,
            status,
            location.as_deref(),
        );
        match decision {
            Decision::Follow(mut hop) => {
                hop.as_get |= self.hop.as_ref().is_some_and(|h| h.as_get);
                // The redirect's body is not read: its connection carries nothing more.
                Next::Return(self.follow(cx, conn, hop))
            }
            Decision::BadLocation(msg) => {
                Next::Return(self.fail(cx, Some(conn), Reason::Protocol, msg, None))
            }
            Decision::TooMany(msg) => {
                Next::Return(self.fail(cx, Some(conn), Reason::TooManyRedirects, msg, None))
            }
            Decision::Final => {
                // HTTP/2 frames the body itself: it ends with the stream.
                let coding = self.plan.spec.compression;
                x.body = Some((
                    status,
                    BodyReader::with_coding(Framing::Close, self.output_limit, coding),
                ));
                self.state = State::H2 { conn, x };
                Next::Continue
            }
        }
    }

    /// An HTTP/2 error, worded as Go's HTTP/2 client words it.
    fn h2_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        x: &mut H2Exchange,
        e: &H2Error,
    ) -> Step {
        if self.first_byte.is_none() && self.dial.reused() && self.replayable() {
            // A kept connection the server closed or went away from as it was reused: once
            // more on a new connection, within the same deadline (as on HTTP/1.1).
            return self.retry(cx, conn);
        }
        let in_body = x.in_body();
        let detail = match e {
            H2Error::Reset(code) => format!(
                "stream error: stream ID {}; {}; received from peer",
                x.stream,
                error_code_name(*code)
            ),
            H2Error::GoAway { last_stream, code, debug } => format!(
                "http2: server sent GOAWAY and closed the connection; LastStreamID={last_stream}, ErrCode={}, debug={debug:?}",
                error_code_name(*code)
            ),
            H2Error::Eof { .. } if in_body => "unexpected EOF".to_string(),
            H2Error::Eof { .. } => "http2: client connection lost".to_string(),
            // Go's framer reads "HTTP/1.1 " as a frame header whose length is far too large,
            // and says what it looked like.
            H2Error::NotHttp2(what) if what.starts_with("it answered with HTTP/1") => {
                "http2: failed reading the frame payload: http2: frame too large, note that the \
                 frame header looked like an HTTP/1.1 header"
                    .to_string()
            }
            other => other.to_string(),
        };
        let reason = if in_body { Reason::BrokenBody } else { Reason::Protocol };
        let msg = format!("{}: {detail}", self.op_url());
        let body = x.take_body();
        self.fail(cx, Some(conn), reason, msg, body)
    }

    /// A socket or TLS error during the HTTP/2 exchange.
    fn h2_transport_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        x: &mut H2Exchange,
        e: &TransportError,
    ) -> Step {
        let body = x.take_body();
        self.transport_failure(cx, conn, e, body)
    }
}

/// Where the final response's body stands after the data received so far.
enum BodyNext {
    More,
    Done {
        truncated: bool,
    },
    /// The stream ended in an error after the head (a reset mid-body).
    Failed(H2Error),
    Broken(crate::body::BodyError),
}

/// Feeds the body received so far to the reader (no-op before the final head).
fn body_next(x: &mut H2Exchange) -> BodyNext {
    let Some((_, reader)) = x.body.as_mut() else { return BodyNext::More };
    // Decoding left from the last step goes first: no more data is taken until it is done,
    // so what waits to be decoded stays within what the stream's window let in.
    let mut progress = if reader.has_work() {
        reader.resume()
    } else {
        let data = x.client.take_data(x.stream);
        reader.feed(&data)
    };
    if x.ended
        && !reader.has_work()
        && matches!(progress, Ok(BodyProgress::NeedMore | BodyProgress::AtLimit))
    {
        match x.client.finish(x.stream) {
            Some(Ok(_)) | None => progress = reader.eof(),
            // Reset or cut off after the head: a broken body (difference 2).
            Some(Err(e)) => return BodyNext::Failed(e),
        }
    }
    match progress {
        // Past the limit nothing more is read (the kubelet's `ReadAtMost`).
        Ok(BodyProgress::Complete { truncated }) => BodyNext::Done { truncated },
        Ok(BodyProgress::AtLimit) => BodyNext::Done { truncated: true },
        Ok(BodyProgress::NeedMore) => BodyNext::More,
        Err(e) => BodyNext::Broken(e),
    }
}
