//! Work that shares the server's thread: a poll-driven engine whose deferred answers are made
//! where they are sent.
//!
//! A deferred route hands its [`crate::Reply`] to whatever makes the answer. When that is an
//! engine on a thread of its own, each request crosses threads twice (the request to the
//! engine, the answer back), and each crossing wakes a sleeping thread: on a busy machine that
//! costs more CPU than the request's own work. A [`Companion`] runs on the server's thread
//! instead: its descriptor is polled with the connections, it is turned when that descriptor
//! is readable or its timeout passes, and answers it gives there are sent without waking
//! anything (a [`crate::Reply`] sent on the server's thread is picked up at the end of the
//! same turn of the loop).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// A poll-driven source of work run on the server's thread ([`crate::Server::with_companion`]).
///
/// The server polls [`Companion::fd`] for readability (edge-triggered: [`Companion::turn`]
/// must take everything that is ready, as an engine's `step` does) and calls `turn` when it is
/// readable or when [`Companion::timeout`] has passed. `turn` must not block: every connection
/// waits while it runs.
///
/// A panic in `turn` is not contained: it ends the server's thread, which aborts the process
/// (a server whose companion is dead would answer no deferred request again, and a live
/// process with dead endpoints is never restarted).
pub trait Companion: Send {
    /// A descriptor that is readable when there is work (an engine's epoll descriptor).
    fn fd(&self) -> RawFd;

    /// How long the server may wait before the next [`Companion::turn`]: `Some(ZERO)` for
    /// work now, `None` when only the descriptor can bring work.
    fn timeout(&self) -> Option<Duration>;

    /// Does the work that is ready, without blocking.
    ///
    /// # Errors
    ///
    /// An error ends the server's thread (the process is aborted, as for a failing poll).
    fn turn(&mut self) -> io::Result<()>;
}
