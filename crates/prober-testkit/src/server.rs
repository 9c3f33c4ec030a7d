//! [`TargetServer`]: the listener, its accept thread, and a thread per connection that serves
//! the routes (`routes.rs`) on a [`Conn`](crate::conn::Conn).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::shared::Shared;
use crate::threads::lock;
use crate::{conn, routes};

/// Stack size of connection threads: small, so thousands of concurrent connections are cheap.
const CONN_STACK: usize = 128 * 1024;

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
