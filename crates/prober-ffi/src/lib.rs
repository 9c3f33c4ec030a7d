//! The C ABI of libprober. This is the only crate with `extern "C"`; `include/prober.h` is
//! generated from it by cbindgen.
//!
//! Rules every export follows (the header repeats them for C users):
//! - fallible calls return a `prober_status`, `PROBER_OK` (0) on success; out-parameters are
//!   written only on success; a NULL argument gives `PROBER_E_NULL`, never a crash;
//! - every `_free` accepts NULL;
//! - strings in are NUL-terminated UTF-8; strings out are `prober_str` views whose lifetime each
//!   function states, always followed by a NUL byte;
//! - a panic never crosses the boundary. One inside a probe's run ends that run Unknown with
//!   `PROBER_REASON_INTERNAL` (the engine catches it); any other becomes `PROBER_E_PANIC` (or
//!   the function's neutral value), and an engine that panicked refuses further calls except
//!   `prober_engine_free`;
//! - an engine is used by one thread at a time, and a call that overlaps another on the same
//!   engine is refused with `PROBER_E_BUSY` (an atomic flag taken on entry, see `engine.rs`);
//! - no signal handlers, no signal-mask changes, no `waitpid(-1)`, every descriptor close-on-exec.

#![warn(missing_docs)]
#![allow(non_camel_case_types)]

mod body_cel;
mod completion;
mod compression;
mod containment;
mod dns;
mod driver;
mod engine;
mod enums;
mod event_facts;
mod event_form;
mod expect;
mod facts;
mod hostrun;
mod http_client;
mod http_version;
mod icmp;
mod ip_family;
mod kind;
mod namespaces;
mod netns;
mod outcome;
mod proxy;
mod ptr;
mod request;
mod source_address;
mod spec;
mod status;
mod tcp_steps;
mod threads;
mod tls;

use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use body_cel::*;
pub use completion::*;
pub use compression::*;
pub use dns::*;
pub use engine::*;
pub use event_facts::*;
pub use expect::*;
pub use facts::*;
pub use hostrun::*;
pub use http_client::*;
pub use http_version::*;
pub use icmp::*;
pub use ip_family::*;
pub use namespaces::*;
pub use outcome::*;
pub use proxy::*;
pub use request::*;
pub use source_address::*;
pub use spec::*;
pub use status::*;
pub use tcp_steps::prober_tcp_step_flags;
pub use threads::{PROBER_ENGINE_MAX_THREADS, prober_engine_new_with_threads};
pub use tls::*;

/// A borrowed string or byte view: `len` bytes at `ptr`. `ptr[len]` is always a NUL byte, so
/// `ptr` may be used as a C string when the text holds no NUL of its own. Each function that
/// returns one says how long it stays valid. Never free it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prober_str {
    /// The first byte; never NULL (an empty view points at a NUL byte).
    pub ptr: *const c_char,
    /// The number of bytes, not counting the NUL that follows them.
    pub len: usize,
}

impl prober_str {
    /// A view of `bytes`, which must be followed by a NUL byte in memory (see [`nul_terminated`]).
    fn of(bytes: &[u8]) -> prober_str {
        prober_str { ptr: bytes.as_ptr().cast(), len: bytes.len() }
    }

    fn empty() -> prober_str {
        prober_str { ptr: c"".as_ptr(), len: 0 }
    }
}

/// Appends a NUL after the text without making it part of it: `v[..len]` is the text and
/// `v[len] == 0`.
fn nul_terminated(mut v: Vec<u8>) -> (Vec<u8>, usize) {
    let len = v.len();
    v.push(0);
    (v, len)
}

thread_local! {
    static LAST_ERROR: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Records the detail of a failing call for `prober_last_error`.
fn set_error(status: prober_status, detail: impl std::fmt::Display) -> prober_status {
    let mut text = format!("{detail}").into_bytes();
    text.push(0);
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
    status
}

/// What an export answers when its body panicked, by its return type: the same neutral value
/// it gives for a NULL argument, so that C sees one convention per type and the reason is in
/// `prober_last_error`. An export whose own "no value" differs from its type's (a name's
/// `"invalid result"`) returns an `Option` from the guard and says its own value after it.
trait GuardFallback {
    /// The value returned in place of the body's.
    fn fallback() -> Self;
}

/// Statuses: `PROBER_E_PANIC`.
impl GuardFallback for prober_status {
    fn fallback() -> Self {
        PROBER_E_PANIC
    }
}

/// Nothing to return (the frees).
impl GuardFallback for () {
    fn fallback() -> Self {}
}

/// Questions: no.
impl GuardFallback for bool {
    fn fallback() -> Self {
        false
    }
}

/// Strings: the empty string, never a NULL pointer.
impl GuardFallback for prober_str {
    fn fallback() -> Self {
        prober_str::empty()
    }
}

/// An answer that may be absent: absent.
impl<T> GuardFallback for Option<T> {
    fn fallback() -> Self {
        None
    }
}

/// Counts, codes and sizes: 0 (`PROBER_REASON_NONE`, no HTTP status, no events).
macro_rules! zero_fallback {
    ($($t:ty),*) => {$(
        impl GuardFallback for $t {
            fn fallback() -> Self {
                0
            }
        }
    )*};
}
zero_fallback!(u32, u64, usize);

/// Signed answers (a descriptor, a timeout in milliseconds, an exit code, a gRPC status): -1,
/// "none".
macro_rules! minus_one_fallback {
    ($($t:ty),*) => {$(
        impl GuardFallback for $t {
            fn fallback() -> Self {
                -1
            }
        }
    )*};
}
minus_one_fallback!(i32, i64);

/// Runs an export's body, turning a panic into its return type's [`GuardFallback`].
fn guard<R: GuardFallback>(f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        set_error(PROBER_E_PANIC, "internal error: a panic was caught at the C boundary");
        R::fallback()
    })
}

/// The status of an export's work: `PROBER_OK`, or the error it stopped at.
fn status(r: Result<(), prober_status>) -> prober_status {
    r.err().unwrap_or(PROBER_OK)
}

/// Runs the body of an export that returns a status: [`guard`] and [`status`] in one, so that
/// the body can use `?`.
fn guard_status(f: impl FnOnce() -> Result<(), prober_status>) -> prober_status {
    guard(|| status(f()))
}

/// The text of the last failing call on this thread: what was wrong, in words. Valid until the
/// next libprober call on this thread; empty when nothing failed yet.
#[unsafe(no_mangle)]
pub extern "C" fn prober_last_error() -> prober_str {
    guard(|| {
        LAST_ERROR.with(|e| {
            let e = e.borrow();
            if e.is_empty() {
                prober_str::empty()
            } else {
                // The buffer lives in this thread's storage until the next failing call.
                prober_str { ptr: e.as_ptr().cast(), len: e.len() - 1 }
            }
        })
    })
}

/// The library's version as a static string, e.g. "0.1.0". Never NULL, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn prober_version() -> *const c_char {
    const V: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => panic!("version has a NUL"),
        };
    V.as_ptr()
}

/// The packed version of the library at run time: `(major << 16) | (minor << 8) | patch`, to
/// compare with `PROBER_VERSION_NUM`.
#[unsafe(no_mangle)]
pub extern "C" fn prober_version_num() -> u32 {
    let p = |s: &str| s.parse::<u32>().unwrap_or(0);
    guard(|| {
        p(env!("CARGO_PKG_VERSION_MAJOR")) << 16
            | p(env!("CARGO_PKG_VERSION_MINOR")) << 8
            | p(env!("CARGO_PKG_VERSION_PATCH"))
    })
}

/// The ABI version of the library at run time; equal to `PROBER_ABI_VERSION` of a matching
/// header. Hosts should check it once at start-up.
#[unsafe(no_mangle)]
pub extern "C" fn prober_abi_version() -> u32 {
    1
}

/// Test-only: panics inside Rust, to prove the boundary turns it into `PROBER_E_PANIC`. Not in
/// the public header: the C test declares it.
#[cfg(feature = "test-panic")]
#[unsafe(no_mangle)]
pub extern "C" fn prober__test_panic() -> prober_status {
    guard(|| panic!("deliberate test panic"))
}

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic at the boundary answers with the return type's fallback, the values each export
    /// wrote out before the fallback was given by type (`c-tests/test_panic.c` checks the status
    /// end to end), and says why in `prober_last_error`.
    #[test]
    fn a_panic_gives_the_return_type_s_fallback_and_a_last_error() {
        fn panicked<R: GuardFallback>() -> R {
            guard(|| panic!("deliberate test panic"))
        }
        assert_eq!(panicked::<prober_status>(), PROBER_E_PANIC);
        assert!(!panicked::<bool>());
        assert_eq!(panicked::<u32>(), 0);
        assert_eq!(panicked::<u64>(), 0);
        assert_eq!(panicked::<usize>(), 0);
        assert_eq!(panicked::<i32>(), -1);
        assert_eq!(panicked::<i64>(), -1);
        assert_eq!(panicked::<Option<u32>>(), None);
        panicked::<()>();
        let empty = panicked::<prober_str>();
        assert!(!empty.ptr.is_null());
        assert_eq!(empty.len, 0);
        let last = prober_last_error();
        // SAFETY: prober_last_error's text lives in this thread's storage until the next
        // failing call, and `len` bytes of it are readable.
        let text = unsafe { std::slice::from_raw_parts(last.ptr.cast::<u8>(), last.len) };
        assert_eq!(text, b"internal error: a panic was caught at the C boundary");
    }
}
