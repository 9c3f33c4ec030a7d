//! The poll loop: accepting within the bound, driving each connection, deadlines.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::io;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use prober_exposition::numbers::push_u64;
use rustls::ServerConnection;

use crate::abort::or_abort;
use crate::auth::{Auth, Verdict};
use crate::companion::Companion;
use crate::conn::{Conn, State, Stream, is_plain_on_tls};
use crate::head::{self, Found, Parsed};
use crate::limits::Limits;
use crate::pending::Waiter;
use crate::rate_limit::TokenBucket;
use crate::reply::{DeferredHandler, Replies, Reply};
use crate::request::{Handler, Request, Response};
use crate::tls::TlsState;
use crate::web_config::WebConfig;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connections are numbered from here, never reused: an answer from the credentials thread
/// for a connection that has gone cannot reach a newer one.
const FIRST_CONN: usize = 2;
/// The companion's descriptor ([`Server::with_companion`]): connection numbers never get here.
const COMPANION: Token = Token(usize::MAX);

/// How long a closed-for-sending connection is read and drained before it is dropped.
const LINGER: Duration = Duration::from_secs(2);

/// A server not yet started: a bound listener and its routes.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    routes: Vec<Route>,
    limits: Limits,
    web: Option<WebConfig>,
    companion: Option<Box<dyn Companion>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .field("routes", &self.routes.iter().map(|r| &r.path).collect::<Vec<_>>())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

struct Route {
    path: String,
    /// Also serves the paths under `path/`.
    tree: bool,
    /// Takes every method (its handler answers those it does not), not only GET and HEAD.
    any_method: bool,
    handler: Answer,
}

/// How a route answers.
enum Answer {
    /// At once, on the loop.
    Now(Handler),
    /// Later, through a [`Reply`].
    Later(DeferredHandler),
}

impl Server {
    /// Binds `addr` (port 0: one the system chooses; see [`Server::local_addr`]).
    ///
    /// # Errors
    ///
    /// The address cannot be bound (taken, not local, not permitted).
    pub fn bind(addr: SocketAddr) -> io::Result<Server> {
        let listener = listen(addr)?;
        let addr = listener.local_addr()?;
        Ok(Server {
            listener: TcpListener::from_std(listener),
            addr,
            routes: Vec::new(),
            limits: Limits::default(),
            web: None,
            companion: None,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Bounds other than the defaults.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// Protects every route as `web` says (TLS, basic authentication, headers).
    #[must_use]
    pub fn with_web_config(mut self, web: WebConfig) -> Server {
        self.web = Some(web);
        self
    }

    /// Runs `companion` on the server's thread ([`Companion`]): its deferred answers are then
    /// sent without a hand-off between threads.
    pub fn with_companion(mut self, companion: Box<dyn Companion>) -> Server {
        self.companion = Some(companion);
        self
    }

    /// Serves `path` (exactly) with `handler`.
    pub fn route(&mut self, path: &str, handler: impl Fn(&Request) -> Response + Send + 'static) {
        let handler = Answer::Now(Box::new(handler));
        self.routes.push(Route { path: path.into(), tree: false, any_method: false, handler });
    }

    /// Serves `path` (exactly) with a `handler` that answers later, through the [`Reply`] it
    /// is given (for answers that wait on something, such as a probe's outcome: the loop
    /// serves everyone else meanwhile). The connection waits at most
    /// [`Limits::deferred_timeout`].
    pub fn route_deferred(
        &mut self,
        path: &str,
        handler: impl Fn(&Request, Reply) + Send + 'static,
    ) {
        let handler = Answer::Later(Box::new(handler));
        self.routes.push(Route { path: path.into(), tree: false, any_method: false, handler });
    }

    /// As [`Server::route_deferred`], for requests of every method: the handler reads
    /// [`Request::method`] and answers those it does not take itself (an action such as
    /// `POST /-/reload`). A request body is never read: the connection is closed after the
    /// answer to a request that has one.
    pub fn route_deferred_any_method(
        &mut self,
        path: &str,
        handler: impl Fn(&Request, Reply) + Send + 'static,
    ) {
        let handler = Answer::Later(Box::new(handler));
        self.routes.push(Route { path: path.into(), tree: false, any_method: true, handler });
    }

    /// Serves `path` and every path under `path/` with `handler`.
    pub fn route_tree(
        &mut self,
        path: &str,
        handler: impl Fn(&Request) -> Response + Send + 'static,
    ) {
        let handler = Answer::Now(Box::new(handler));
        self.routes.push(Route { path: path.into(), tree: true, any_method: false, handler });
    }

    /// Starts serving on a thread called `name`; the server stops when the [`Running`] is
    /// dropped.
    ///
    /// # Errors
    ///
    /// The poller or the threads cannot be made.
    pub fn spawn(mut self, name: &str) -> io::Result<Running> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        poll.registry().register(&mut self.listener, LISTENER, Interest::READABLE)?;
        if let Some(c) = &self.companion {
            let fd = c.fd();
            poll.registry().register(
                &mut mio::unix::SourceFd(&fd),
                COMPANION,
                Interest::READABLE,
            )?;
        }
        let (tls, headers, users, rate_limit) = match self.web {
            Some(w) => (w.tls, w.headers, w.users, w.rate_limit),
            None => (None, Vec::new(), HashMap::new(), None),
        };
        let auth = if users.is_empty() {
            None
        } else {
            let w = waker.clone();
            Some(Auth::start(users, move || {
                let _ = w.wake();
            })?)
        };
        let stop = Arc::new(AtomicBool::new(false));
        let lp = Loop {
            poll,
            listener: self.listener,
            conns: HashMap::default(),
            next: FIRST_CONN,
            site: Site {
                routes: self.routes,
                limits: self.limits,
                headers,
                rate_limit: rate_limit.map(|limit| TokenBucket::new(limit, Instant::now())),
                auth,
                replies: Replies::default(),
                waker: waker.clone(),
                deferred: Arc::default(),
            },
            tls: tls.map(|(files, config)| TlsState::new(files, config)),
            stop: stop.clone(),
            accept_again: None,
            companion: self.companion,
        };
        let thread_name = name.to_string();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || or_abort(&thread_name, || lp.run()))?;
        Ok(Running { addr: self.addr, stop, waker, thread: Some(thread) })
    }
}

/// The listening socket for `addr`: nonblocking, close-on-exec (socket2 opens sockets so),
/// `SO_REUSEADDR` as the standard library sets it, and a backlog of the system's
/// `net.core.somaxconn`, as Go's net package listens: with std's 128, connections made in a
/// burst (scrapes of many targets at once) overflow the queue and wait for a SYN retransmit.
fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    sock.set_reuse_address(true)?;
    sock.bind(&addr.into())?;
    sock.listen(backlog())?;
    sock.set_nonblocking(true)?;
    Ok(sock.into())
}

/// The listen backlog: Linux's `somaxconn` (the most it grants); where it cannot be read,
/// 4096 (Linux's default since 5.4; other systems cap a larger request at their own limit).
fn backlog() -> i32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(4096)
}

/// A server serving on its thread; dropping it stops the server and closes its connections.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    /// The address served.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What every connection is served from.
struct Site {
    routes: Vec<Route>,
    limits: Limits,
    /// `http_server_config.headers`, on every answer.
    headers: Vec<(String, String)>,
    /// `rate_limit`: taken from by every request, before its credentials are looked at.
    rate_limit: Option<TokenBucket>,
    auth: Option<Auth>,
    /// Deferred answers, and the waker that tells the loop of them.
    replies: Replies,
    waker: Arc<Waker>,
    /// Requests waiting for a deferred answer, at most [`Limits::max_deferred`].
    deferred: Arc<AtomicUsize>,
}

struct Loop {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<usize, Conn, BuildHasherDefault<IdHasher>>,
    next: usize,
    site: Site,
    tls: Option<TlsState>,
    stop: Arc<AtomicBool>,
    /// Out of descriptors with no connection to drop: when to try accepting again.
    accept_again: Option<Instant>,
    companion: Option<Box<dyn Companion>>,
}

impl Loop {
    /// Serves until stopped (`Ok`), or the poller fails.
    fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = Instant::now();
            let companion_due = self.companion.as_ref().and_then(|c| c.timeout()).map(|t| now + t);
            let next = self.conns.values().map(|c| c.deadline).chain(self.accept_again);
            let timeout = next.chain(companion_due).min().map(|d| d.saturating_duration_since(now));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if self.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            let mut turn = false;
            for ev in &events {
                match ev.token() {
                    LISTENER => self.accept(),
                    COMPANION => turn = true,
                    WAKER => {
                        self.checked();
                        self.replied();
                    }
                    Token(id) => {
                        if let Some(conn) = self.conns.get_mut(&id) {
                            conn.ready(ev.is_readable(), ev.is_read_closed() || ev.is_error());
                        }
                        self.drive(id);
                    }
                }
            }
            let now = Instant::now();
            if turn || companion_due.is_some_and(|t| t <= now) {
                if let Some(c) = &mut self.companion {
                    c.turn()?;
                }
            }
            // Answers given on this thread (by the companion, or by a deferred handler at once)
            // woke nothing: they are sent here, and so are any that sending them brought.
            while self.replied() {}
            if self.accept_again.is_some_and(|t| t <= now) {
                self.accept_again = None;
                self.accept();
            }
            self.conns.retain(|_, c| c.deadline > now);
        }
    }

    fn accept(&mut self) {
        #[cfg(test)]
        tests::panic_if_asked();
        loop {
            match self.listener.accept() {
                Ok((sock, _)) => self.admit(sock),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                // Out of descriptors or memory: make room if a connection can give it, else
                // try again shortly (the listener reports no new readiness for the ones
                // already waiting).
                Err(_) => {
                    if !self.drop_oldest_idle() {
                        self.accept_again = Some(Instant::now() + Duration::from_millis(100));
                        return;
                    }
                }
            }
        }
    }

    /// Takes a new connection in, within the bound.
    fn admit(&mut self, sock: TcpStream) {
        if self.conns.len() >= self.site.limits.max_connections && !self.drop_oldest_idle() {
            // Every connection is being answered: this one is refused (closed at once).
            return;
        }
        let _ = sock.set_nodelay(true);
        let stream = match &mut self.tls {
            Some(t) => match ServerConnection::new(t.current()) {
                Ok(tls) => Stream::Tls { sock, tls: Box::new(tls), checked: false },
                Err(_) => return,
            },
            None => Stream::Plain(sock),
        };
        let now = Instant::now();
        let mut conn = Conn::new(stream, now, now + self.site.limits.header_timeout);
        let id = self.next;
        self.next += 1;
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self.poll.registry().register(conn.stream.sock(), Token(id), interest).is_ok() {
            self.conns.insert(id, conn);
        }
    }

    /// Drops the connection that has waited longest for a request (one already answered and
    /// draining first); `false` when every connection is busy answering.
    fn drop_oldest_idle(&mut self) -> bool {
        let victim = self
            .conns
            .iter()
            .filter(|(_, c)| c.idle())
            .min_by_key(|(_, c)| (!matches!(c.state, State::Lingering), c.waiting_since))
            .map(|(&id, _)| id);
        victim.is_some_and(|id| self.conns.remove(&id).is_some())
    }

    /// Drives connection `id` as far as it goes. A panic while doing so (a bug in reading its
    /// request, TLS included) ends that connection only: the others, and the server, go on.
    fn drive(&mut self, id: usize) {
        let Some(conn) = self.conns.get_mut(&id) else { return };
        let site = &self.site;
        if !catch_unwind(AssertUnwindSafe(|| site.step(conn, id))).unwrap_or(false) {
            self.conns.remove(&id);
        }
    }

    /// Credentials checked by the credentials thread: the waiting requests go on.
    fn checked(&mut self) {
        let Some(auth) = &self.site.auth else { return };
        let done =
            std::mem::take(&mut *auth.results.lock().unwrap_or_else(PoisonError::into_inner));
        for (id, ok) in done {
            let Some(conn) = self.conns.get_mut(&id) else { continue };
            let State::Auth { request, close } =
                std::mem::replace(&mut conn.state, State::Head { kept: false })
            else {
                continue;
            };
            if ok {
                self.site.answer(conn, id, &request, close);
            } else {
                self.site.respond(conn, &unauthorized(), request.method == "HEAD", close);
            }
            self.drive(id);
        }
    }

    /// Deferred answers sent back: their connections go on. `false` when there were none.
    fn replied(&mut self) -> bool {
        let done =
            std::mem::take(&mut *self.site.replies.lock().unwrap_or_else(PoisonError::into_inner));
        if done.is_empty() {
            return false;
        }
        for (id, response) in done {
            let Some(conn) = self.conns.get_mut(&id) else { continue };
            let State::Deferred { head_only, close, .. } = conn.state else { continue };
            self.site.respond(conn, &response, head_only, close);
            self.drive(id);
        }
        true
    }
}

fn unauthorized() -> Response {
    Response::text(401, "Unauthorized\n").with_header("WWW-Authenticate", "Basic")
}

impl Site {
    /// Drives a connection as far as it goes without waiting; `false` when it is over.
    fn step(&self, conn: &mut Conn, id: usize) -> bool {
        loop {
            let now = Instant::now();
            match conn.state {
                State::Writing { close } => {
                    match conn.stream.write_out(&conn.output, &mut conn.written) {
                        Ok(true) => {}
                        Ok(false) => return true,
                        Err(_) => return false,
                    }
                    conn.output = Vec::new();
                    conn.written = 0;
                    if close {
                        conn.stream.finish();
                        conn.state = State::Lingering;
                        conn.deadline = now + LINGER.min(self.limits.header_timeout);
                        conn.waiting_since = now;
                    } else {
                        conn.state = State::Head { kept: true };
                        conn.deadline = now + self.limits.idle_timeout;
                        conn.waiting_since = now;
                    }
                }
                State::Auth { .. } => return true,
                State::Deferred { .. } => {
                    // Watched while its answer is made: a client that closes, resets or
                    // shuts down its sending side has gone (as Go's net/http cancels the
                    // request's context on EOF), and dropping the connection cancels the
                    // request. What it sends meanwhile (a pipelined request) is kept for
                    // later, within the head's bound; past it, the socket is left unread.
                    if conn.drained {
                        return true;
                    }
                    let room = head::capacity(&self.limits).saturating_sub(conn.input.len());
                    if room == 0 {
                        // Past the bound: nothing more is kept, but the end of the stream must
                        // still be seen. More bytes than a next request may hold end it too.
                        let mut over = Vec::new();
                        let empty = matches!(
                            conn.stream.read_in(&mut over, 1),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock
                        );
                        conn.drained = empty && conn.is_plain();
                        return empty;
                    }
                    match conn.read_more(room) {
                        Ok(0) => return false,
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                        Err(_) => return false,
                    }
                }
                State::Lingering => {
                    conn.input.clear();
                    match conn.stream.read_in(&mut conn.input, 4096) {
                        Ok(0) => return false,
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                        Err(_) => return false,
                    }
                }
                State::Head { kept } => {
                    #[cfg(test)]
                    tests::panic_on(&conn.input);
                    match head::find(&conn.input, &mut conn.scanned, &self.limits) {
                        Found::Head(len) => {
                            let parsed = head::parse(&conn.input[..len]);
                            conn.input.drain(..len);
                            conn.scanned = 0;
                            match parsed {
                                Parsed::Bad(status, why) => {
                                    self.respond(conn, &Response::text(status, why), false, true);
                                }
                                Parsed::Request(req, close) => self.dispatch(conn, id, req, close),
                            }
                            continue;
                        }
                        Found::TooLarge(status) => {
                            conn.input = Vec::new();
                            let why = if status == 414 {
                                "request line too long\n"
                            } else {
                                "request header fields too large\n"
                            };
                            self.respond(conn, &Response::text(status, why), false, true);
                            continue;
                        }
                        Found::More => {}
                    }
                    if conn.drained {
                        return true;
                    }
                    let room = head::capacity(&self.limits) - conn.input.len();
                    let was_empty = conn.input.is_empty();
                    match conn.read_more(room) {
                        Ok(0) => return false,
                        Ok(_) if kept && was_empty => {
                            // The next request has begun: its head has the header timeout.
                            conn.state = State::Head { kept: false };
                            conn.deadline = now + self.limits.header_timeout;
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                        Err(e) if is_plain_on_tls(&e) => {
                            conn.refuse_plain();
                            conn.state = State::Lingering;
                            conn.deadline = now + LINGER.min(self.limits.header_timeout);
                        }
                        Err(_) => return false,
                    }
                }
            }
        }
    }

    /// A complete request: checked, routed and answered (or left waiting for its
    /// credentials to be checked).
    fn dispatch(&self, conn: &mut Conn, id: usize, req: Request, close: bool) {
        let head_only = req.method == "HEAD";
        if self.rate_limit.as_ref().is_some_and(|bucket| !bucket.allow(Instant::now())) {
            // As the exporter-toolkit's handler: `http.Error(w, "Too Many Requests", 429)`
            // (which adds `nosniff`) before the configured headers are set and before the
            // credentials are checked.
            let refused = Response::text(429, "Too Many Requests\n")
                .with_header("X-Content-Type-Options", "nosniff");
            return self.respond_as(conn, &refused, head_only, close, false);
        }
        if let Some(auth) = &self.auth {
            let client = conn.stream.sock().peer_addr().ok().map(|a| a.ip());
            match auth.check(id, client, req.header("authorization")) {
                Verdict::Allowed => {}
                Verdict::Denied => return self.respond(conn, &unauthorized(), head_only, close),
                Verdict::Pending => {
                    conn.state = State::Auth { request: Box::new(req), close };
                    return;
                }
                Verdict::Busy => {
                    let busy = Response::text(503, "too many credentials being checked\n")
                        .with_header("Retry-After", "1");
                    return self.respond(conn, &busy, head_only, close);
                }
                Verdict::Throttled => {
                    let slow = Response::text(
                        429,
                        "too many credentials being checked for this address\n",
                    )
                    .with_header("Retry-After", "1");
                    return self.respond(conn, &slow, head_only, close);
                }
            }
        }
        self.answer(conn, id, &req, close);
    }

    /// Answers `req` on `conn` from its route: at once, or later for a deferred route (the
    /// connection then waits in [`State::Deferred`]).
    fn answer(&self, conn: &mut Conn, id: usize, req: &Request, close: bool) {
        let head_only = req.method == "HEAD";
        let response = match self.route(req) {
            Ok(response) => response,
            Err(_) if self.deferred.load(Ordering::Relaxed) >= self.limits.max_deferred() => {
                let why = format!(
                    "too many requests waiting for an answer (at most {}): try again later\n",
                    self.limits.max_deferred()
                );
                Response::text(503, why).with_header("Retry-After", "1")
            }
            Err(handler) => {
                let waiter = Waiter::new(&self.deferred);
                let pending = waiter.pending.clone();
                conn.state = State::Deferred { head_only, close, _waiter: waiter };
                conn.deadline = Instant::now() + self.limits.deferred_timeout;
                let reply = Reply::new(id, self.replies.clone(), self.waker.clone(), pending);
                // A panicking handler drops its Reply, which answers 500.
                let _ = catch_unwind(AssertUnwindSafe(|| handler(req, reply)));
                return;
            }
        };
        self.respond(conn, &response, head_only, close);
    }

    /// The handler's answer to `req` (or the deferred handler that will answer it); 405 for
    /// methods other than GET and HEAD (unless the route takes every method), 404 for paths
    /// not served, 500 should the handler panic.
    fn route(&self, req: &Request) -> Result<Response, &DeferredHandler> {
        let found = self.routes.iter().find(|r| {
            req.path == r.path
                || (r.tree
                    && req.path.strip_prefix(r.path.as_str()).is_some_and(|s| s.starts_with('/')))
        });
        let any_method = found.is_some_and(|r| r.any_method);
        if !any_method && req.method != "GET" && req.method != "HEAD" {
            return Ok(Response::text(405, "use GET\n").with_header("Allow", "GET, HEAD"));
        }
        let Some(route) = found else {
            let paths: Vec<_> = self.routes.iter().map(|r| r.path.as_str()).collect();
            return Ok(Response::text(
                404,
                format!("not found: served here: {}\n", paths.join(", ")),
            ));
        };
        match &route.handler {
            Answer::Now(handler) => Ok(catch_unwind(AssertUnwindSafe(|| handler(req)))
                .unwrap_or_else(|_| Response::text(500, "internal error\n"))),
            Answer::Later(handler) => Err(handler),
        }
    }

    /// Queues `response` on `conn`, with the configured headers.
    fn respond(&self, conn: &mut Conn, response: &Response, head_only: bool, close: bool) {
        self.respond_as(conn, response, head_only, close, true);
    }

    /// Queues `response` on `conn`, with the configured headers when `configured_headers`.
    fn respond_as(
        &self,
        conn: &mut Conn,
        response: &Response,
        head_only: bool,
        close: bool,
        configured_headers: bool,
    ) {
        let configured = if configured_headers { self.headers.as_slice() } else { &[] };
        // Room for the body too: growing the head's buffer for it copied both again.
        let body = if head_only { 0 } else { response.body.len() };
        let mut out = String::with_capacity(256 + body);
        // Pushed piece by piece: through the formatting machinery the head cost more.
        out.push_str("HTTP/1.1 ");
        push_u64(&mut out, response.status.into());
        for piece in [" ", reason(response.status), "\r\nContent-Type: ", &response.content_type] {
            out.push_str(piece);
        }
        out.push_str("\r\nContent-Length: ");
        push_u64(&mut out, response.body.len() as u64);
        out.push_str("\r\n");
        for (name, value) in configured.iter().chain(&response.headers) {
            for piece in [name.as_str(), ": ", value, "\r\n"] {
                out.push_str(piece);
            }
        }
        if close {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        let mut out = out.into_bytes();
        if !head_only {
            out.extend_from_slice(&response.body);
        }
        conn.output = out;
        conn.written = 0;
        conn.state = State::Writing { close };
        conn.deadline = Instant::now() + self.limits.write_timeout;
    }
}

/// The hash of a connection's id, one multiplication: ids are the loop's own counter, never a
/// client's choice, so the default hash's defence against chosen keys costs for nothing (it
/// was about 150 instructions a lookup, four lookups a request).
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, id: usize) {
        // Fibonacci hashing: consecutive ids spread over the high bits the table reads too.
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        414 => "URI Too Long",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests;
