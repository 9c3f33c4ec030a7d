//! Retrying a call that a signal interrupted ([`retry_interrupted`]), for every waiting call of
//! this crate and of the probes above it.

use std::io;

/// Calls `op` again for as long as it fails with [`io::ErrorKind::Interrupted`] (EINTR), and
/// returns its first other result.
///
/// Any call that can wait may be interrupted by a signal, even in a process that handles none:
/// glibc's `posix_spawn` blocks every signal in the spawning thread until the child has
/// started, so the SIGCHLD of a child that exits that fast stays pending for the whole process
/// and the kernel wakes another thread for it. A socket call with a timeout (`SO_RCVTIMEO`,
/// `SO_SNDTIMEO`) and `epoll_wait` then fail with EINTR, which `SA_RESTART` never restarts
/// (signal(7)); a host's own handlers (a Go runtime's, for most signals) do the same to every
/// call. A call with a deadline sets what is left of it inside `op`, so that a retry never
/// extends the deadline and one that has passed ends with its own error.
///
/// Not for `close` (on Linux the descriptor is gone even when it reports EINTR) nor `connect`
/// (an interrupted connect goes on in the background and a second one fails with EALREADY:
/// wait for the socket to turn writable instead).
///
/// # Errors
///
/// The first error of `op` that is not an interruption.
pub fn retry_interrupted<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interruptions_are_retried_and_nothing_else() {
        let mut calls = 0;
        let r = retry_interrupted(|| {
            calls += 1;
            if calls < 3 { Err(io::Error::from_raw_os_error(libc::EINTR)) } else { Ok(calls) }
        });
        assert_eq!(r.unwrap(), 3);
        let mut calls = 0;
        let r: io::Result<()> = retry_interrupted(|| {
            calls += 1;
            Err(io::ErrorKind::WouldBlock.into())
        });
        assert_eq!((r.unwrap_err().kind(), calls), (io::ErrorKind::WouldBlock, 1));
    }
}
