//! The HTTP/1.1 exchange of a hop: writing the request, reading and parsing the head, and
//! reading (or discarding) the body, over the hop's transport. The hop's decisions (redirects,
//! the verdict, release of the connection) are `probe.rs`'s, shared with the HTTP/2 path.

use super::*;

impl HttpProbe {
    pub(super) fn write(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        request: Request,
        mut written: usize,
    ) -> Next {
        loop {
            match conn.write(&request.bytes()[written..]) {
                Ok(0) => {
                    let e = io::Error::from(io::ErrorKind::WriteZero);
                    let e = TransportError::Io { op: "write", error: e };
                    return Next::Return(self.transport_failure(cx, conn, &e, None));
                }
                Ok(n) => {
                    written += n;
                    if written == request.bytes().len() {
                        let parser = if self.plan.keep_alive {
                            HeadParser::keep_alive()
                        } else {
                            HeadParser::new()
                        };
                        self.state = State::Head { conn, parser };
                        return Next::Continue;
                    }
                }
                Err(TransportError::WouldBlock) => {
                    conn.sync_interest(cx.registry);
                    self.state = State::Writing { conn, request, written };
                    return Next::Return(Step::Pending);
                }
                Err(e) => return Next::Return(self.transport_failure(cx, conn, &e, None)),
            }
        }
    }

    pub(super) fn read_head(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        mut parser: HeadParser,
    ) -> Next {
        loop {
            match read_append(&mut conn, &mut self.buf, READ_CHUNK) {
                Ok(0) if self.first_byte.is_none() && self.dial.reused() && self.replayable() => {
                    return Next::Return(self.retry(cx, conn));
                }
                Ok(0) => {
                    // What arrived is read as Go reads it, the unfinished last line too: a
                    // malformed head is reported as such, not as an early EOF.
                    let e = parser.eof(&self.buf);
                    let msg = format!("{}: {e}", self.op_url());
                    return Next::Return(self.fail(cx, Some(conn), Reason::Protocol, msg, None));
                }
                Ok(n) => {
                    if self.first_byte.is_none() {
                        self.first_byte = Some(self.since_start(Instant::now()));
                    }
                    if !HeadParser::worth_parsing(&self.buf, n) {
                        continue;
                    }
                    loop {
                        match parser.parse(&self.buf) {
                            Ok(HeadStatus::Partial) => break,
                            Ok(HeadStatus::Interim { len, .. }) => {
                                self.buf.drain(..len);
                            }
                            Ok(HeadStatus::Complete(head)) => return self.on_head(cx, conn, &head),
                            Err(e) => {
                                let msg = format!("{}: {e}", self.op_url());
                                return Next::Return(self.fail(
                                    cx,
                                    Some(conn),
                                    Reason::Protocol,
                                    msg,
                                    None,
                                ));
                            }
                        }
                    }
                    debug_assert!(self.buf.len() <= MAX_HEAD);
                }
                Err(TransportError::WouldBlock) => {
                    conn.sync_interest(cx.registry);
                    self.state = State::Head { conn, parser };
                    return Next::Return(Step::Pending);
                }
                Err(e) => return Next::Return(self.transport_failure(cx, conn, &e, None)),
            }
        }
    }

    /// Reads a followed redirect's body (see [`State::Discard`]), then follows.
    pub(super) fn discard_body(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        mut reader: BodyReader,
        hop: Box<Hop>,
    ) -> Next {
        for _ in 0..READS_PER_TURN {
            self.buf.clear();
            let more = match read_append(&mut conn, &mut self.buf, READ_CHUNK) {
                Ok(0) => false,
                Ok(_) => matches!(reader.feed(&self.buf), Ok(BodyProgress::NeedMore)),
                Err(TransportError::WouldBlock) => {
                    conn.sync_interest(cx.registry);
                    self.state = State::Discard { conn, reader, hop };
                    return Next::Return(Step::Pending);
                }
                Err(_) => false,
            };
            if !more {
                self.buf.clear();
                return Next::Return(self.follow(cx, conn, *hop));
            }
        }
        self.state = State::Discard { conn, reader, hop };
        Next::Return(Step::Yield)
    }

    pub(super) fn read_body(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        status: u16,
        mut reader: BodyReader,
        keep: bool,
    ) -> Next {
        let mut reads = 0;
        loop {
            if reads == READS_PER_TURN {
                // Let other work have its turn; the driver resumes reading right after.
                self.state = State::Body { conn, status, reader, keep };
                return Next::Return(Step::Yield);
            }
            reads += 1;
            self.buf.clear();
            // Bytes wait to be decoded: decoding them is this step (bounded, see
            // `DECODE_PER_STEP`), and nothing more is read until they are.
            let progress = if reader.has_work() {
                reader.resume()
            } else {
                match read_append(&mut conn, &mut self.buf, READ_CHUNK) {
                    Ok(0) => reader.eof(),
                    Ok(_) => reader.feed(&self.buf),
                    Err(TransportError::WouldBlock) => match reader.would_block() {
                        BodyProgress::Complete { truncated } => {
                            Ok(BodyProgress::Complete { truncated })
                        }
                        _ => {
                            conn.sync_interest(cx.registry);
                            self.state = State::Body { conn, status, reader, keep };
                            return Next::Return(Step::Pending);
                        }
                    },
                    // Past the limit the kubelet reads nothing more, so it never sees this error.
                    Err(_) if reader.sink().is_full() => {
                        Ok(BodyProgress::Complete { truncated: false })
                    }
                    Err(e) => {
                        let sink = reader.into_sink();
                        let body = Some((sink.total(), sink.into_kept()));
                        return Next::Return(self.transport_failure(cx, conn, &e, body));
                    }
                }
            };
            match progress {
                Ok(BodyProgress::Complete { truncated }) => {
                    self.release(cx, conn, keep && reader.at_end());
                    return Next::Return(self.respond(status, reader, truncated));
                }
                Ok(_) => {}
                Err(e) => return Next::Return(self.body_failure(cx, conn, reader, &e)),
            }
        }
    }
}
