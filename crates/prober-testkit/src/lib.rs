//! `prober-testkit`: a scripted HTTP/TCP target server on loopback, for libprober's test suites and
//! benchmarks. Real sockets, one thread per connection (128 KiB stacks), bodies streamed from a
//! fixed buffer (a 1 GiB body costs no memory).
//!
//! Rust tests use [`TargetServer`] in-process; C and Go suites run the `prober-target` binary:
//! `prober-target [--bind ADDR] [--port N] [--ignore-stdin]` prints the bound port alone on the
//! first line of stdout, then serves until stdin reaches EOF (exit 0) or a signal ends it. Unknown
//! flags exit with status 64.
//!
//! # Protocol
//!
//! One request per connection. The server reads the request head (at most 64 KiB, else 431; a
//! malformed head gets 400), answers with `Connection: close`, sends FIN, then reads and discards
//! whatever the client still sends until it closes (at most 2 s), so a client never sees a reset
//! it did not cause. Header names and values are kept as received, in order. Query values are
//! percent-decoded (`+` is a literal plus). Any method is accepted; `HEAD` suppresses the body of
//! the simple routes and `/body`. Status 1xx, 204 and 304 are sent without body or Content-Length.
//!
//! A connection that never sends a byte is held open until the client closes it (at most 60 s):
//! it then counts in [`TargetServer::silent_connections`], and in
//! [`TargetServer::reset_connections`] if it ended with RST. Any read that returns `ECONNRESET`
//! marks a connection as reset (write errors do not: they are ambiguous).
//!
//! # Routes
//!
//! | Route | Response |
//! |---|---|
//! | `/`, `/ok` | 200 `ok` |
//! | `/status/{code}?body=TEXT` | `{code}`, body `status {code}` or TEXT |
//! | `/health` | 200 `ok` when healthy, 503 `unhealthy` otherwise |
//! | `/control/healthy`, `/control/unhealthy` | set health; 200 `ok` |
//! | `/redirect?loc=URL&code=302` | `code` (default 302), `Location: URL` verbatim, body `redirecting`; 400 without `loc` |
//! | `/loop` | 302 `Location: /loop` |
//! | `/redirect-chain/{n}` | n>0: 302 `Location: /redirect-chain/{n-1}`; n=0: 200 `chain end` |
//! | `/no-location/{code}?body=TEXT` | `{code}` without Location, body TEXT (default empty) |
//! | `/bad-location` | 302 `Location: http://[::1` |
//! | `/echo/headers` | each received header as `Name: value\n`, in order, Host included |
//! | `/echo/header-names` | header names except Host, sorted (bytewise), joined by `\n` |
//! | `/echo/header-count` | number of headers except Host, decimal |
//! | `/echo/host` | the Host header value (empty if none) |
//! | `/echo/request-line` | the request line as received, without CRLF |
//! | `/echo/request` | `METHOD N\n` then the N-byte request body (framed by `Content-Length`, at most 64 KiB; 400 if it does not arrive within the head's wait) |
//! | `/host-must-be/{host}/...` | 200 `ok` if Host (without port) equals `{host}` (ASCII case-insensitive, brackets optional for IPv6), else 400 `wrong host` |
//! | `/body/{n}` | 200, `Content-Length: n`, n bytes of `a` |
//! | `/chunked/{n}?chunk=K` | 200 chunked, n bytes of `a` in chunks of K (default 1000; lowercase hex sizes), then `0\r\n\r\n` |
//! | `/close-delimited/{n}` | 200 without length or chunking, n bytes of `a`, then FIN |
//! | `/truncated/{declared}/{sent}` | 200, `Content-Length: declared`, `sent` bytes, then FIN |
//! | `/reset-after/{sent}` | 200, `Content-Length: 2*sent`, `sent` bytes, then RST once the client has acknowledged them (waits at most 2 s) |
//! | `/slow-headers/{ms}` | waits ms, then 200 `ok` |
//! | `/drip/{n}/{interval_ms}` | 200, `Content-Length: n`, then one `a` after each interval |
//! | `/stall-body/{sent}` | 200, `Content-Length: sent+1000`, `sent` bytes, then silence for 60 s or until the client closes |
//! | `/close` | FIN without writing anything |
//! | `/reset` | RST without writing anything |
//! | `/garbage` | `this is not http\r\n\r\n` then FIN |
//! | `/http09` | `hello` (no status line) then FIN |
//! | `/huge-headers/{n}` | 200 with `X-Fill-NNN: aaa...` lines totalling about n bytes, body `ok` |
//! | `/bad-chunk` | 200 chunked, first size line `zz\r\n`, then FIN |
//! | `/overflow-chunk` | 200 chunked, first size line `ffffffffffffffffffff\r\n`, then FIN |
//! | `/never-answer` | reads the request, then silence for 60 s or until the client closes |
//! | `/content-length-and-chunked` | `Content-Length: 5` and `Transfer-Encoding: chunked`, chunked body `ok` |
//! | `/bytes?status=200&reason=R&body=TEXT&header=LINE...` | general builder: each `header` value is written verbatim as a header line (e.g. `Name:Value`); `Content-Length` is added unless a `header` sets Content-Length or Transfer-Encoding, `Connection: close` unless one sets Connection |
//! | `/encoded/{coding}/{n}?as=ENC` | `n` bytes of `a` compressed with `coding` (`gzip`: members of 1 MiB each, so a 1 GiB body is about 1 MiB on the wire; `deflate` (raw) and `br`: at most 16 MiB), `Content-Encoding: ENC` (default the coding; `as=` empty: none) |
//! | `/hostile/silent` | reads the request, then silence for 60 s or until the client closes |
//! | `/hostile/trickle-head/{ms}` | `HTTP/1.1 200 OK\r\nX-Trickle: aaa...`, one byte every ms, a head that never ends |
//! | `/hostile/endless-headers/{len}` | 200 status line, then header lines of `len` bytes (8 to 1 MiB) without end |
//! | `/hostile/endless-chunked/{kind}?status=200` | chunked, without end: `data` (4 KiB chunks), `extensions` (one endless chunk extension), `trailers` (one endless trailer line), `zeros` (an endless chunk-size line of zeros) |
//! | `/hostile/chunk-size/{hex}` | chunked, first size line `{hex}` (e.g. `10000000000000000`, 2^64), then 16 MiB of `a` and FIN |
//! | `/hostile/content-length/{a}/{b}` | 200 with `Content-Length: a` and `Content-Length: b`, max(a, b) bytes of `a` |
//! | `/hostile/nul/{value,name,reason}` | a NUL byte in a header value, a header name or the reason phrase |
//! | `/hostile/long-status-line/{n}` | `HTTP/1.1 200 ` + n bytes of reason phrase, then a small complete response |
//! | `/hostile/alternate-hosts/{n}` | 302 to `http://{other}:{port}/hostile/alternate-hosts/{n+1}`, `other` being `localhost` when the Host is not, else `127.0.0.1` |
//! | `/hostile/reset-mid-head` | `HTTP/1.1 200 OK\r\nContent-Le`, then RST once acknowledged |
//! | anything else | 404 `not found` |
//!
//! Endless routes stop when the client goes away (or after 4 GiB). Bad numbers in a path give 400. Reason phrases are the usual ones, or `Status`.
//!
//! # TLS
//!
//! [`tls::TlsTargetServer`] serves the same routes over TLS (rustls), with certificates made at
//! test time by [`tls::TestCa`]; it records what each handshake looked like (SNI, client
//! certificate, errors).
//!
//! # Time bounds
//!
//! [`bounds`] derives a test's upper time bounds from the timeout under test.
//!
//! # Keep-alive and allocations
//!
//! [`keep_alive::KeepAliveServer`] keeps its connections, for keep-alive probes;
//! [`allocations`] counts heap allocations per thread for the steady-state allocation tests.
//!
//! # gRPC
//!
//! [`grpc::HealthServer`] runs grpc-go's own health service (a Go module in this crate, built
//! with `go build` at first use): the one gRPC peer of every test and of `ci/bench.sh`.

#![warn(missing_docs)]

pub mod allocations;
pub mod bounds;
mod conn;
mod encoded;
pub mod grpc;
pub mod h2;
pub mod keep_alive;
#[cfg(target_os = "linux")]
pub mod netns;
pub mod proxy;
mod request;
mod routes;
pub mod script;
pub mod starttls;
pub mod tls;
pub mod unshare;

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

/// Stack size of connection threads: small, so thousands of concurrent connections are cheap.
const CONN_STACK: usize = 128 * 1024;

/// State shared by the server handle, the accept thread and the connection threads.
#[derive(Debug)]
pub(crate) struct Shared {
    healthy: AtomicBool,
    connections: AtomicU64,
    requests: AtomicU64,
    silent: AtomicU64,
    resets: AtomicU64,
    closed: Mutex<u64>,
    closed_cv: Condvar,
    /// Notified whenever `connections` or `requests` grows, for the `wait_for_*` methods.
    progress: Mutex<()>,
    progress_cv: Condvar,
    stopped: Mutex<bool>,
    stop_cv: Condvar,
    stop_flag: AtomicBool,
    /// Live connections, so that stopping the server can shut them down.
    live: Mutex<HashMap<u64, Arc<TcpStream>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls `op` again for as long as it fails with [`io::ErrorKind::Interrupted`] (EINTR).
///
/// A test process gets signals it does not handle: a test that starts a command blocks every
/// signal in its thread for the `posix_spawn`, and the SIGCHLD of a command that exits that
/// fast wakes one of these servers' threads instead, whose socket calls with a timeout then
/// fail with EINTR (`SA_RESTART` never restarts them). `prober_io::retry_interrupted` is the
/// library's own copy; the test servers do not depend on the library.
pub(crate) fn retry_interrupted<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            result => return result,
        }
    }
}

/// A stream whose reads and writes are retried when a signal interrupts them, for code that
/// does not retry itself (rustls's `complete_io` gives up on an interrupted write).
pub(crate) struct Restarting<S>(pub(crate) S);

impl<S: io::Read> io::Read for Restarting<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        retry_interrupted(|| self.0.read(buf))
    }
}

impl<S: io::Write> io::Write for Restarting<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        retry_interrupted(|| self.0.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        retry_interrupted(|| self.0.flush())
    }
}

impl Shared {
    fn new() -> Shared {
        Shared {
            healthy: AtomicBool::new(true),
            connections: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            silent: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            closed: Mutex::new(0),
            closed_cv: Condvar::new(),
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            stopped: Mutex::new(false),
            stop_cv: Condvar::new(),
            stop_flag: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stop_flag.load(Ordering::Acquire)
    }

    /// Sleeps for `d` unless the server stops first; returns false if it stopped.
    pub(crate) fn sleep(&self, d: Duration) -> bool {
        let guard = lock(&self.stopped);
        let (guard, _) = self
            .stop_cv
            .wait_timeout_while(guard, d, |stopped| !*stopped)
            .unwrap_or_else(|e| e.into_inner());
        !*guard
    }

    pub(crate) fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }

    pub(crate) fn healthy(&self) -> bool {
        self.healthy.load(Ordering::SeqCst)
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        self.progressed();
    }

    /// Wakes the `wait_for_*` waiters after a counter grew. Taking the lock orders the wake-up
    /// after a waiter's check of the counter, so none is lost.
    fn progressed(&self) {
        drop(lock(&self.progress));
        self.progress_cv.notify_all();
    }

    /// Waits until `done` holds (checked whenever a counter grows), at most `timeout`.
    fn wait_progress(&self, timeout: Duration, done: impl Fn() -> bool) -> bool {
        let guard = lock(&self.progress);
        let (_guard, _) = self
            .progress_cv
            .wait_timeout_while(guard, timeout, |()| !done())
            .unwrap_or_else(|e| e.into_inner());
        done()
    }

    /// Called once per connection after its socket is closed.
    pub(crate) fn connection_ended(&self, id: u64, silent: bool, reset: bool) {
        // Dropping the registry's reference closes the socket (the handler's is gone by now).
        drop(lock(&self.live).remove(&id));
        if silent {
            self.silent.fetch_add(1, Ordering::SeqCst);
        }
        if reset {
            self.resets.fetch_add(1, Ordering::SeqCst);
        }
        *lock(&self.closed) += 1;
        self.closed_cv.notify_all();
    }

    fn stop(&self) {
        self.stop_flag.store(true, Ordering::Release);
        *lock(&self.stopped) = true;
        self.stop_cv.notify_all();
        for stream in lock(&self.live).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// A scripted HTTP/TCP server on a real socket, serving the routes listed in the crate docs.
///
/// Dropping it closes the listener, joins the accept thread and shuts down live connections
/// (their threads end on their own shortly after).
#[derive(Debug)]
pub struct TargetServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    wake: UnixStream,
    accept_thread: Option<JoinHandle<()>>,
}

impl TargetServer {
    /// Starts on `127.0.0.1:0`. Panics on failure (test helper).
    pub fn start() -> TargetServer {
        TargetServer::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .expect("prober-testkit: cannot start target server on 127.0.0.1")
    }

    /// Starts on `[::1]:0`.
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of binding when IPv6 loopback is unavailable (no `::1` on the host).
    pub fn start_v6() -> io::Result<TargetServer> {
        TargetServer::start_on(SocketAddr::from((Ipv6Addr::LOCALHOST, 0)))
    }

    /// Starts on `addr` (port 0 picks a free port).
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of making, binding or listening on the socket, or of starting the
    /// accept thread.
    pub fn start_on(addr: SocketAddr) -> io::Result<TargetServer> {
        raise_fd_limit();
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_address(true)?;
        if addr.is_ipv6() {
            socket.set_only_v6(true)?;
        }
        socket.bind(&addr.into())?;
        socket.listen(4096)?;
        socket.set_nonblocking(true)?;
        let listener: TcpListener = socket.into();
        let addr = listener.local_addr()?;
        let (wake, wake_rx) = UnixStream::pair()?;
        let shared = Arc::new(Shared::new());
        let thread_shared = Arc::clone(&shared);
        let accept_thread = std::thread::Builder::new()
            .name("prober-target-accept".into())
            .spawn(move || accept_loop(&listener, &wake_rx, &thread_shared))?;
        Ok(TargetServer { addr, shared, wake, accept_thread: Some(accept_thread) })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` + `path` (`http://[::1]:PORT` + `path` for IPv6). A wildcard bind
    /// address is replaced by the loopback address of its family.
    pub fn url(&self, path: &str) -> String {
        let mut a = self.addr;
        if a.ip().is_unspecified() {
            a.set_ip(if a.is_ipv4() {
                Ipv4Addr::LOCALHOST.into()
            } else {
                Ipv6Addr::LOCALHOST.into()
            });
        }
        format!("http://{a}{path}")
    }

    /// Sets what `/health` answers (200 `ok` or 503 `unhealthy`).
    pub fn set_healthy(&self, healthy: bool) {
        self.shared.set_healthy(healthy);
    }

    /// Whether `/health` currently answers 200.
    pub fn healthy(&self) -> bool {
        self.shared.healthy()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// HTTP requests whose head was parsed so far.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Connections that ended (client EOF or reset) without the client sending one byte.
    pub fn silent_connections(&self) -> u64 {
        self.shared.silent.load(Ordering::SeqCst)
    }

    /// Connections on which a read returned `ECONNRESET` (the client ended with RST).
    pub fn reset_connections(&self) -> u64 {
        self.shared.resets.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` TCP connections have been accepted; returns false if `timeout`
    /// passed first. Tests wait for the event they assert instead of sleeping.
    pub fn wait_for_connections(&self, n: u64, timeout: Duration) -> bool {
        self.shared.wait_progress(timeout, || self.connections() >= n)
    }

    /// Waits until at least `n` request heads have been parsed; returns false if `timeout`
    /// passed first.
    pub fn wait_for_requests(&self, n: u64, timeout: Duration) -> bool {
        self.shared.wait_progress(timeout, || self.requests() >= n)
    }

    /// Waits until at least `n` connections have fully ended (socket closed, counters updated);
    /// returns false on timeout. Use it before asserting on silent/reset counts.
    pub fn wait_for_connections_closed(&self, n: u64, timeout: Duration) -> bool {
        let guard = lock(&self.shared.closed);
        let (guard, _) = self
            .shared
            .closed_cv
            .wait_timeout_while(guard, timeout, |closed| *closed < n)
            .unwrap_or_else(|e| e.into_inner());
        *guard >= n
    }
}

impl Drop for TargetServer {
    fn drop(&mut self) {
        self.shared.stop();
        let _ = io::Write::write_all(&mut &self.wake, b"x");
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        // Connections accepted while stopping were registered before the join returned.
        self.shared.stop();
    }
}

/// A loopback port with nothing listening: binds `127.0.0.1:0`, reads the port, closes it.
///
/// The port is chosen below the kernel's ephemeral range, so that no socket bound to port 0
/// (a test server, another process, a client's own end) can be given it while a test relies on
/// it being closed, and no connect to it can self-connect.
pub fn closed_port() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next().and_then(|p| p.parse::<u16>().ok()))
        .unwrap_or(32768);
    if low > 2048 {
        static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
        let span = low - 1024;
        let seed = (std::process::id() as u16).wrapping_mul(97);
        for _ in 0..2000 {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let port = 1024 + seed.wrapping_add(i.wrapping_mul(7919)) % span;
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return port;
            }
        }
    }
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("prober-testkit: bind 127.0.0.1:0");
    l.local_addr().expect("prober-testkit: local_addr").port()
}

fn accept_loop(listener: &TcpListener, wake: &UnixStream, shared: &Arc<Shared>) {
    let mut fds = [
        libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    while !shared.is_stopped() {
        // SAFETY: `fds` is a valid, writable array of 2 pollfd for the whole call, and both
        // descriptors stay open (owned by `listener` and `wake`) until this function returns.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if r < 0 {
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                std::thread::sleep(Duration::from_millis(10));
            }
            continue;
        }
        if fds[1].revents != 0 || shared.is_stopped() {
            break;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => spawn_connection(stream, shared),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                Err(_) => {
                    // EMFILE and friends: back off instead of spinning.
                    std::thread::sleep(Duration::from_millis(10));
                    break;
                }
            }
        }
    }
}

fn spawn_connection(stream: TcpStream, shared: &Arc<Shared>) {
    let id = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
    shared.progressed();
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(60)));
    let stream = Arc::new(stream);
    lock(&shared.live).insert(id, Arc::clone(&stream));
    if shared.is_stopped() {
        let _ = stream.shutdown(Shutdown::Both);
    }
    let conn = conn::Conn::new(Arc::clone(shared), id, stream);
    let spawned = std::thread::Builder::new()
        .name("prober-target-conn".into())
        .stack_size(CONN_STACK)
        .spawn(move || conn.serve(routes::respond));
    // On spawn failure the closure (and the Conn in it) is dropped, which ends the connection.
    drop(spawned);
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, once, so thousands of connections fit.
fn raise_fd_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: `rl` is a valid, writable rlimit for the duration of the call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0
            || rl.rlim_cur >= rl.rlim_max
        {
            return;
        }
        rl.rlim_cur = rl.rlim_max;
        // SAFETY: `rl` is a valid rlimit; raising the soft limit up to the hard limit is allowed
        // and only fails harmlessly (the result is ignored).
        let _ = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) };
    });
}

/// A deadline `d` from now.
pub(crate) fn deadline(d: Duration) -> Instant {
    Instant::now() + d
}
