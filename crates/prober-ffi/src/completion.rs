//! A completion per one-shot submission, from C: `prober_engine_submit_with` hands the check's
//! outcome to a function of the host's instead of queueing a `PROBER_EVENT_CHECK`, so that a
//! host waiting for one check keeps no table from tags to waiters.

use std::ffi::c_void;

use ::prober_engine::Event;

use crate::engine::{engine_error, prober_engine, prober_event, with_engine};
use crate::event_form::fill;
use crate::guard_status;
use crate::ptr::BoxedHandle;
use crate::spec::prober_spec;
use crate::status::*;

/// The function `prober_engine_submit_with` calls once with its check's outcome: `event` is a
/// `PROBER_EVENT_CHECK` (its `tag` the submit's), whose views (message, output) are valid only
/// during the call; `user` is the pointer given with the function.
pub type prober_check_done =
    Option<unsafe extern "C" fn(user: *mut c_void, event: *const prober_event)>;

/// The host's pointer, carried to the thread that drives the engine.
struct UserData(*mut c_void);

// SAFETY: the pointer is never dereferenced here, only handed back to the host's own function,
// which `prober_engine_submit_with`'s contract requires to accept it on the thread that drives
// the engine (the one calling `prober_engine_step`/`prober_engine_wait`).
unsafe impl Send for UserData {}

impl UserData {
    /// The pointer (a method, so that a closure captures the whole `Send` wrapper).
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Starts a one-shot probe, like `prober_engine_submit`, whose outcome goes to `done(user,
/// event)` instead of the event queue. `done` is called exactly once if this returns
/// `PROBER_OK`, and never otherwise: from within `prober_engine_step` or `prober_engine_wait`
/// on the thread that calls them (or from `prober_engine_cancel_check` when the check is
/// cancelled, or from within this call when the probe ends as it starts, as a kind this build
/// lacks does), with a `PROBER_EVENT_CHECK` event whose views are valid only during the call.
/// If the engine is freed with the check still running, `done` is never called: free what
/// `user` points to after `prober_engine_free`. While `done` runs the engine is in use, so a
/// call on the same engine from within it returns `PROBER_E_BUSY`; `done` should hand the
/// outcome over and return. It must not unwind (a C++ exception or `longjmp` out of it aborts
/// the process). `tag` still names the check for `prober_engine_cancel_check`.
///
/// # Errors
/// As `prober_engine_submit`; `PROBER_E_NULL` for a NULL `done`.
///
/// # Safety
/// `e` must be NULL or a live engine; `spec` NULL or a live spec; `done` NULL or a function
/// that may be called with `user` on the thread that drives the engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_submit_with(
    e: *mut prober_engine,
    spec: *const prober_spec,
    tag: u64,
    done: prober_check_done,
    user: *mut c_void,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_ref_from_ptr(spec)?;
        let done = done.ok_or_else(|| crate::set_error(PROBER_E_NULL, "done is NULL"))?;
        let user = UserData(user);
        let call = move |outcome| {
            let mut held = Vec::new();
            if let Some(event) = fill(Event::Check { tag, outcome }, &mut held) {
                // SAFETY: `done` is the host's function, which the contract above requires to
                // take `user` on this (the engine-driving) thread; `event` and the views in it
                // (kept alive by `held`) outlive the call.
                unsafe { done(user.get(), &event) };
            }
        };
        with_engine(e, |i| i.engine.submit_with(s.spec.clone(), tag, call).map_err(engine_error))
    })
}
