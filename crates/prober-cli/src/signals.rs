//! SIGINT and SIGTERM for `prober check` and `prober watch`, SIGHUP (reload) for `prober
//! serve`, through signal-hook.
//!
//! The handler (signal-hook's) records the signal number and writes a byte to a close-on-exec,
//! nonblocking socket pair; the main loop polls the read end next to the engine's descriptor,
//! so a signal can never be lost between a check and a wait. Only this command installs
//! handlers: the library crates never do. Handlers do not survive `exec`, so probe commands
//! start with default dispositions.

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use signal_hook::SigId;
use signal_hook::consts::{SIGINT, SIGTERM};

/// Installed handlers; dropping it unregisters them.
#[derive(Debug)]
pub struct Signals {
    /// Read end: readable once a signal arrived.
    wake: UnixStream,
    /// The last signal received (0: none since the last [`Signals::take`]).
    received: Arc<AtomicUsize>,
    ids: Vec<SigId>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM. SIGINT is left alone when it was ignored at start (a
    /// background job of a non-interactive shell), as shells expect.
    pub fn install() -> io::Result<Signals> {
        Signals::catch(&[SIGINT, SIGTERM])
    }

    /// Catches `signals` (SIGINT only when it was not ignored at start); the others keep
    /// their dispositions.
    pub fn catch(signals: &[i32]) -> io::Result<Signals> {
        let (wake, write) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        let received = Arc::new(AtomicUsize::new(0));
        let mut ids = Vec::new();
        for &sig in signals {
            if sig == SIGINT && ignored_at_start(sig) {
                continue;
            }
            // The flag first: signal-hook runs a signal's actions in the order registered, so
            // the number is stored before the wake-up can be seen.
            ids.push(signal_hook::flag::register_usize(
                sig,
                Arc::clone(&received),
                usize::try_from(sig).unwrap_or(0),
            )?);
            ids.push(signal_hook::low_level::pipe::register(sig, write.try_clone()?)?);
        }
        Ok(Signals { wake, received, ids })
    }

    /// Waits until `fd` is readable, a signal arrives, or `timeout` passes (rounded up to whole
    /// milliseconds, so a timer due in 0.3 ms is not spun on).
    /// `fd` must stay open for the call (the engine's, which the caller holds).
    pub fn wait(&self, fd: RawFd, timeout: Option<Duration>) -> io::Result<()> {
        // SAFETY: the caller keeps `fd` open for the whole call (the engine it belongs to
        // outlives it), and the borrow does not leave this function.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let timeout = match timeout {
            None => PollTimeout::NONE,
            Some(d) => {
                let ms = d.as_nanos().div_ceil(1_000_000);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds =
            [PollFd::new(fd, PollFlags::POLLIN), PollFd::new(self.fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            // An interruption returns early, as a wake-up does: the caller looks at the signals
            // and the engine, then waits again with what is left of its timer.
            Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// The signal received since the last call, if any.
    pub fn take(&self) -> Option<i32> {
        let mut buf = [0u8; 16];
        // Until the pipe is empty (WouldBlock) or closed; a read interrupted by a signal is
        // retried (prober_io::retry_interrupted's rule, written out: the command does not
        // depend on prober-io).
        loop {
            match (&self.wake).read(&mut buf) {
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        match self.received.swap(0, Ordering::SeqCst) {
            0 => None,
            sig => i32::try_from(sig).ok(),
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Whether signal `sig` was ignored when the process started (read from the kernel's
/// `SigIgn` mask in `/proc/self/status`, which needs no change of any disposition to look at;
/// where it cannot be read, the signal is taken as not ignored).
fn ignored_at_start(sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    match (mask, u32::try_from(sig - 1)) {
        (Some(mask), Ok(bit)) if bit < 64 => mask & (1 << bit) != 0,
        _ => false,
    }
}

/// Ends the process with `sig` as a default-disposition signal would, so that a parent shell
/// sees the command was interrupted; `128 + sig` is the exit status should the signal not end
/// the process.
pub fn reraise(sig: i32) -> i32 {
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    128 + sig
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigign_mask_is_read() {
        // The test harness does not ignore SIGTERM (a test run with it ignored could not be
        // stopped by a plain `kill`), and the mask parses: this fails if the parsing breaks
        // into "everything ignored".
        assert!(!ignored_at_start(SIGTERM));
    }
}
