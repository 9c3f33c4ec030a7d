//! A system call's return value as a `Result` ([`os_result`]): the one place where "negative
//! means `errno`" is written, for every hand-made call of this crate and of the probes above it.

use std::io;

/// `r` when it is not negative, else the calling thread's `errno` as an [`io::Error`]: the
/// convention of the C library's calls (`-1` and `errno`) and of `syscall(2)`. Call it right
/// after the call, before anything else can change `errno`.
///
/// # Errors
///
/// [`io::Error::last_os_error`] for a negative `r`.
pub fn os_result<T: Copy + PartialOrd + Default>(r: T) -> io::Result<T> {
    if r < T::default() { Err(io::Error::last_os_error()) } else { Ok(r) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_return_is_the_call_s_errno() {
        // SAFETY: close takes an integer; -1 is no descriptor, so it fails with EBADF and
        // closes nothing.
        let r = unsafe { libc::close(-1) };
        let e = os_result(r).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        assert_eq!(os_result(0i32).unwrap(), 0);
        assert_eq!(os_result(7isize).unwrap(), 7);
    }
}
