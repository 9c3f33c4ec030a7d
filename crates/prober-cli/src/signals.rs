//! SIGINT and SIGTERM for `prober watch`, through a self-pipe.
//!
//! The handler only writes the signal number to a nonblocking, close-on-exec pipe; the main
//! loop polls the read end next to the engine's descriptor, so a signal can never be lost
//! between a check and a wait. Only this binary installs handlers: the library crates never do.
//! Handlers do not survive `exec`, so probe commands start with default dispositions.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The pipe's write end for the handler; -1 when no [`Signals`] is alive.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    let byte = sig as u8;
    // SAFETY: `__errno_location` returns this thread's errno slot, valid for the thread's
    // life; `write` is async-signal-safe and reads one byte from a live local. A full pipe
    // (EAGAIN) is fine: a wake-up is already pending. errno is restored for the interrupted code.
    unsafe {
        let errno = libc::__errno_location();
        let saved = *errno;
        libc::write(fd, (&raw const byte).cast(), 1);
        *errno = saved;
    }
}

/// Installed handlers; dropping it restores the default dispositions.
#[derive(Debug)]
pub struct Signals {
    read: OwnedFd,
    _write: OwnedFd,
    installed: Vec<libc::c_int>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM. SIGINT is left alone when it was ignored at start (a
    /// background job of a non-interactive shell), as shells expect.
    pub fn install() -> io::Result<Signals> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid, writable array of two ints for the call.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        PIPE_WRITE.store(write.as_raw_fd(), Ordering::SeqCst);
        let mut installed = Vec::new();
        for sig in SIGNALS {
            // SAFETY: an all-zero sigaction is a valid value (SIG_DFL, empty mask, no flags);
            // sigaction only reads `act` and writes `old`, both live locals.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                if sig == libc::SIGINT && old.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(sig, &act, std::ptr::null_mut()) == 0 {
                    installed.push(sig);
                }
            }
        }
        Ok(Signals { read, _write: write, installed })
    }

    /// Waits until `fd` is readable, a signal arrives, or `timeout` passes (rounded up to whole
    /// milliseconds, so a timer due in 0.3 ms is not spun on).
    pub fn wait(&self, fd: RawFd, timeout: Option<Duration>) -> io::Result<()> {
        let ms = match timeout {
            None => -1,
            Some(d) => i32::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX),
        };
        let mut fds = [
            libc::pollfd { fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.read.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: `fds` is a valid, writable array of two pollfd for the call; the caller keeps
        // `fd` open, and `self` keeps the pipe open.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The first signal received since the last call, if any.
    pub fn take(&self) -> Option<i32> {
        let mut buf = [0u8; 16];
        let mut first = None;
        loop {
            // SAFETY: `buf` is a valid, writable buffer of `buf.len()` bytes; the fd is open.
            let n =
                unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return first;
            }
            first = first.or(Some(i32::from(buf[0])));
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for &sig in &self.installed {
            // SAFETY: restoring the default disposition of a signal we changed.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
        PIPE_WRITE.store(-1, Ordering::SeqCst);
    }
}

/// Ends the process with `sig` as a default-disposition signal would (after [`Signals`] is
/// dropped), so that a parent shell sees the command was interrupted; `128 + sig` is the exit
/// status should the signal not end the process.
pub fn reraise(sig: i32) -> i32 {
    // SAFETY: raise(3) with a signal number we received; its disposition is the default again.
    unsafe { libc::raise(sig) };
    128 + sig
}
