//! A listener whose accept queue is full, so that connects to it hang: the kernel drops their
//! SYNs. A real timeout on loopback (or inside a test's namespace), without sending traffic
//! anywhere else: the path that never answers, for connect timeouts and Happy Eyeballs.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use socket2::{Domain, Socket, Type};

/// A listener with a full accept queue; connects to [`HangingListener::addr`] hang as long as
/// it lives.
#[derive(Debug)]
pub struct HangingListener {
    /// Listening with a backlog of 0, never accepting.
    _listener: Socket,
    /// The connections that filled its queue, kept open.
    _fillers: Vec<TcpStream>,
    addr: SocketAddr,
}

impl HangingListener {
    /// Listens on `addr` (port 0: a free one) and fills the accept queue.
    ///
    /// # Panics
    ///
    /// When it cannot listen there.
    pub fn bind(addr: SocketAddr) -> HangingListener {
        HangingListener::try_bind(addr)
            .unwrap_or_else(|e| panic!("cannot make a hanging listener on {addr}: {e}"))
    }

    /// [`HangingListener::bind`], with the error instead of a panic.
    ///
    /// # Errors
    ///
    /// When the socket cannot be made, bound or put to listen on `addr`.
    pub fn try_bind(addr: SocketAddr) -> io::Result<HangingListener> {
        let listener = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        // A fixed port (a namespace's own address) may still have a connection of a test
        // before in TIME_WAIT.
        listener.set_reuse_address(true)?;
        listener.bind(&addr.into())?;
        listener.listen(0)?;
        let addr = listener.local_addr()?.as_socket().expect("an IP socket");
        // The kernel admits one or two connections past a backlog of 0: make them, and stop
        // at the first connect that would hang.
        let mut fillers = Vec::new();
        for _ in 0..8 {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(c) => fillers.push(c),
                Err(_) => break,
            }
        }
        Ok(HangingListener { _listener: listener, _fillers: fillers, addr })
    }

    /// The address it listens on, where connects hang.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}
