//! What every server thread of the kit needs around its locks and socket calls: a lock that
//! outlives a panicked holder, and calls restarted after a signal interrupts them.

use std::io;
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking over the data of a holder that panicked (a test server keeps serving).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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
