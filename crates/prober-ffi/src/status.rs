//! Status codes. Grouped by kind (1xx usage, 2xx operating system, 3xx concurrent misuse, 9xx
//! internal); never renumbered, never reused.

use std::ffi::c_char;

use crate::enums::c_enum;
use crate::guard;

c_enum! {
    /// The result of a fallible call. `PROBER_OK` is 0, so `if (rc)` tests for failure.
    pub enum prober_status, messages, else c"unknown status" {
        /// The call succeeded.
        PROBER_OK = 0 => c"ok",
        /// A required pointer argument was NULL.
        PROBER_E_NULL = 100 => c"a required argument is NULL",
        /// An argument is out of range or otherwise invalid (see `prober_last_error`).
        PROBER_E_INVALID = 101 => c"invalid argument",
        /// A string argument is not valid UTF-8.
        PROBER_E_INVALID_UTF8 = 102 => c"string is not valid UTF-8",
        /// A URL could not be parsed or has an unsupported scheme.
        PROBER_E_INVALID_URL = 103 => c"invalid URL",
        /// A host name or address is invalid.
        PROBER_E_INVALID_HOST = 104 => c"invalid host",
        /// A port is outside 1..=65535.
        PROBER_E_INVALID_PORT = 105 => c"invalid port",
        /// A header name or value is invalid (CR, LF, NUL, or a name that is not a token).
        PROBER_E_INVALID_HEADER = 106 => c"invalid HTTP header",
        /// An exec argv is empty or holds a NUL byte.
        PROBER_E_INVALID_ARGV = 107 => c"invalid command line",
        /// An environment variable name or value is invalid.
        PROBER_E_INVALID_ENV = 108 => c"invalid environment variable",
        /// A timeout, period or delay is out of range.
        PROBER_E_INVALID_DURATION = 109 => c"invalid duration",
        /// A threshold is out of range (zero, or a success threshold other than 1 for liveness or
        /// startup).
        PROBER_E_INVALID_THRESHOLD = 110 => c"invalid threshold",
        /// The setter does not apply to this kind of probe (a header on a TCP probe, ...).
        PROBER_E_WRONG_KIND = 111 => c"setting does not apply to this kind of probe",
        /// No target with this id in this engine.
        PROBER_E_UNKNOWN_TARGET = 112 => c"unknown target",
        /// The target has no probe for this role.
        PROBER_E_NO_PROBE = 113 => c"no probe for this role",
        /// A role, policy or other enumerated value is not one of the defined constants.
        PROBER_E_INVALID_ENUM = 114 => c"invalid enumerated value",
        /// A TLS option is invalid (server name, file path, version).
        PROBER_E_INVALID_TLS = 115 => c"invalid TLS option",
        /// `prober_engine_complete_run`: the host run is no longer in flight (it timed out, was
        /// cancelled, or was completed already); the completion is ignored and counted.
        PROBER_E_RUN_ENDED = 116 => c"host run no longer in flight",
        /// `prober_engine_complete_run`: no host run had this id; the completion is ignored and
        /// counted.
        PROBER_E_UNKNOWN_RUN = 117 => c"unknown host run",
        /// An operating-system call failed (see `prober_last_error`).
        PROBER_E_IO = 200 => c"operating system error",
        /// The engine is in use by another call right now: another thread is inside a call on
        /// the same engine (or a call was made from inside one). An engine must be used by one
        /// thread at a time; this is that rule's violation detected, and nothing was done. Retrying
        /// is not a fix: serialise the calls.
        PROBER_E_BUSY = 300 => c"engine in use by another thread",
        /// A panic inside the library, outside any one probe's run, was caught; the engine involved
        /// is unusable from now on. (A panic inside a probe's run is not this: that run ends
        /// Unknown with `PROBER_REASON_INTERNAL`.)
        PROBER_E_PANIC = 900 => c"internal error (panic)",
    }
}

pub use prober_status::*;

/// A static, NUL-terminated description of `status` (never NULL, never freed).
#[unsafe(no_mangle)]
pub extern "C" fn prober_status_str(status: u32) -> *const c_char {
    // `message` has its own answer for a number it does not know; a panic gives the same.
    guard(|| Some(prober_status::message(status).as_ptr())).unwrap_or(c"unknown status".as_ptr())
}
