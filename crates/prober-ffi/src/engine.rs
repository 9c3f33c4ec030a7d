//! The engine: targets, periodic probes, one-shot submits, and curl-multi-style integration.

use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ::prober_engine::{Engine, EngineConfig, EngineError};
use prober_core::Role;

use crate::driver::{Driver, Wakeup};
use crate::enums::c_enum;
use crate::outcome::{prober_outcome, prober_result, prober_role, prober_timings};
use crate::ptr::{BoxedHandle, Out};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{GuardFallback, guard, guard_status, prober_str, set_error};

/// Kinds of `prober_event`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prober_event_kind {
    /// A worker's published value changed (or was set to its initial value: `has_outcome` false).
    PROBER_EVENT_STATE = 1,
    /// A one-shot probe from `prober_engine_submit` finished; `tag` is the submit's tag.
    PROBER_EVENT_CHECK = 2,
    /// A worker ran once (only with `PROBER_ENGINE_EVERY_RUN`); `late_us` is how late it started.
    PROBER_EVENT_RUN = 3,
    /// A run of a host-run probe (`prober_spec_new_host_run`) started: the host performs it and
    /// completes it with `prober_engine_complete_run(e, tag, ...)` before the probe's timeout.
    /// `tag` is the run's id, `target` and `role` the worker, `message` the spec's label;
    /// `has_outcome` is false. An announcement not drained yet when its run ends (timed out,
    /// cancelled) is withdrawn.
    PROBER_EVENT_HOST_RUN = 4,
}

c_enum! {
    /// Flags of `prober_engine_new_with_flags`.
    pub enum prober_engine_flags, flags {
        /// Also emit `PROBER_EVENT_RUN` for every worker run (for hosts that log or export metrics).
        PROBER_ENGINE_EVERY_RUN = 1,
        /// Close every TCP socket after its probe instead of keeping up to 64 disconnected ones per
        /// address family for the next probes. Reuse sends the same RST on the wire and saves the
        /// kernel making and freeing a socket per probe (about 40 % of a loopback TCP probe's CPU);
        /// this flag is for hosts that count descriptors exactly.
        PROBER_ENGINE_NO_SOCKET_REUSE = 2,
    }
}

/// One event, filled in by `prober_engine_drain` into caller-allocated memory. `message` and
/// `output` are valid until the next `prober_engine_drain`, `prober_engine_step` or
/// `prober_engine_wait` on the same engine (or its free).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prober_event {
    /// A `PROBER_EVENT_*` value.
    pub kind: u32,
    /// A `PROBER_ROLE_*` value (state and run events).
    pub role: u32,
    /// The target (state and run events); 0 for checks.
    pub target: u64,
    /// The tag given to `prober_engine_submit` (check events); the run's id for
    /// `prober_engine_complete_run` (host-run events); 0 otherwise.
    pub tag: u64,
    /// A `PROBER_RESULT_*` value: the new published value (state), or the run's result.
    pub result: u32,
    /// A `PROBER_REASON_*` value of the outcome (`PROBER_REASON_NONE` without one).
    pub reason: u32,
    /// Duration of the run that caused the event, in microseconds (0 without an outcome).
    pub duration_us: u64,
    /// The outcome's message (empty without an outcome); the probe's label (host-run events).
    pub message: prober_str,
    /// The outcome's output (empty without an outcome).
    pub output: prober_str,
    /// Output bytes seen in all, kept or not.
    pub output_total: u64,
    /// How long after its scheduled time a worker run started (run events), in microseconds.
    pub late_us: u64,
    /// The final HTTP status, or 0.
    pub http_status: u32,
    /// The command's exit code, or -1.
    pub exit_code: i32,
    /// False for state events that set an initial value (no run caused them).
    pub has_outcome: bool,
    /// True when more output was seen than kept.
    pub truncated: bool,
    /// True when `cert_not_after` holds the peer certificate's expiry.
    pub has_cert_not_after: bool,
    /// Where the run's time went (all -1 without an outcome).
    pub timings: prober_timings,
    /// Expiry (notAfter, seconds since the epoch) of the peer's leaf certificate, when
    /// `has_cert_not_after`.
    pub cert_not_after: i64,
    /// The run's last completed TLS handshake's version: 12 (TLS 1.2) or 13 (TLS 1.3); 0
    /// without one (no TLS, or the handshake failed). This and the next three fields were taken
    /// from `reserved` (same size and offsets).
    pub tls_version: u32,
    /// The final HTTP response's version: 10 (HTTP/1.0), 11 (HTTP/1.1) or 20 (HTTP/2); 0
    /// without a response or for other probes.
    pub http_version: u32,
    /// gRPC: the RPC's status code as grpc-go reports it (0 OK once the server answered, 14
    /// Unavailable when the connection failed, 4 DeadlineExceeded at the deadline, ...); -1
    /// when the run reached no RPC, and for other probes.
    pub grpc_status: i32,
    /// gRPC: the health response's serving status (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING, 3
    /// SERVICE_UNKNOWN); -1 without a decoded response, and for other probes.
    pub grpc_serving_status: i32,
    /// Reserved for future fields; zero.
    pub reserved: [u64; 2],
}

pub(crate) struct Inner {
    /// A lone engine, or engines on threads of their own (`prober_engine_new_with_threads`).
    pub(crate) engine: Driver,
    /// The last drained batch's outcomes, holding the memory that events' views point into.
    pub(crate) held: Vec<prober_outcome>,
}

/// A probe engine. Opaque; from `prober_engine_new`, freed with `prober_engine_free`.
///
/// Threads: an engine may move between threads but must be used by one thread at a time;
/// `prober_engine_wakeup` alone may be called from any thread at any time while it lives.
/// A call made while another call on the same engine is running (from another thread, or from
/// inside that call) is refused with `PROBER_E_BUSY` and does nothing; `prober_engine_free` in
/// that case leaves the engine alive (leaked) rather than free it under the running call.
pub struct prober_engine {
    /// Thread-safe: the only part other threads touch (`prober_engine_wakeup`).
    wake: Wakeup,
    poisoned: AtomicBool,
    /// Set while a call uses `inner` (see [`Entered`]): the one-thread-at-a-time rule,
    /// checked.
    in_use: AtomicBool,
    /// Used by one thread at a time (the documented rule, enforced through `in_use`), never by
    /// `prober_engine_wakeup`.
    inner: UnsafeCell<Inner>,
}

/// A call's exclusive use of an engine's `inner`: taken with a compare-exchange on `in_use`,
/// given back when dropped, so also when the call panics. The Acquire/Release pair also
/// orders one thread's use of `inner` before the next thread's.
struct Entered<'a>(&'a AtomicBool);

impl Entered<'_> {
    fn enter(eng: &prober_engine) -> Result<Entered<'_>, prober_status> {
        match eng.in_use.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => Ok(Entered(&eng.in_use)),
            Err(_) => Err(set_error(
                PROBER_E_BUSY,
                "the engine is in use by another thread (or by the call this one was made \
                 from): an engine must be used by one thread at a time",
            )),
        }
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl BoxedHandle for prober_engine {
    const NULL_ERROR: &'static str = "engine is NULL";
}

impl std::fmt::Debug for prober_engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("prober_engine").field("poisoned", &self.poisoned).finish_non_exhaustive()
    }
}

pub(crate) fn engine_error(e: EngineError) -> prober_status {
    match e {
        EngineError::UnknownTarget(t) => {
            set_error(PROBER_E_UNKNOWN_TARGET, format!("unknown target {t}"))
        }
        EngineError::NoProbe(..) => set_error(PROBER_E_NO_PROBE, &e),
        EngineError::Spec(s) => spec_status(&s),
        EngineError::Io(io) => set_error(PROBER_E_IO, io),
        EngineError::HostRunCheck => set_error(PROBER_E_WRONG_KIND, &e),
        // A refusal this build has no status for yet: the generic one, with its text.
        _ => set_error(PROBER_E_INVALID, &e),
    }
}

fn role_of(role: u32) -> Result<Role, prober_status> {
    prober_role::from_code(role).ok_or_else(|| {
        set_error(PROBER_E_INVALID_ENUM, format!("{role} is not a PROBER_ROLE_* value"))
    })
}

impl prober_engine {
    /// Runs `f` with this call's exclusive use of the engine's state.
    ///
    /// # Errors
    /// `PROBER_E_BUSY` while another call uses the engine; `PROBER_E_PANIC` when the engine
    /// is poisoned, or when `f` panics (which poisons it); otherwise what `f` returns. Each
    /// error is recorded for `prober_last_error`.
    pub(crate) fn enter<R>(
        &self,
        f: impl FnOnce(&mut Inner) -> Result<R, prober_status>,
    ) -> Result<R, prober_status> {
        let _entered = Entered::enter(self)?;
        if self.poisoned.load(Ordering::Acquire) {
            return Err(set_error(PROBER_E_PANIC, "engine is unusable after an internal panic"));
        }
        // SAFETY: `_entered` holds `in_use` until `f` returns or unwinds, so no other call makes
        // a reference to `inner` meanwhile: this is the only one. Other threads only touch
        // `handle`, which is outside the cell.
        let inner = unsafe { &mut *self.inner.get() };
        if let Some(failed) = inner.engine.failure() {
            return Err(failed);
        }
        catch_unwind(AssertUnwindSafe(|| f(inner))).unwrap_or_else(|_| {
            self.poisoned.store(true, Ordering::Release);
            Err(set_error(
                PROBER_E_PANIC,
                "internal error: a panic was caught; the engine is unusable",
            ))
        })
    }
}

/// Runs `f` on the engine argument `e` (see [`prober_engine::enter`]).
///
/// # Errors
/// `PROBER_E_NULL` for a NULL engine, and those of [`prober_engine::enter`].
pub(crate) fn with_engine<R>(
    e: *const prober_engine,
    f: impl FnOnce(&mut Inner) -> Result<R, prober_status>,
) -> Result<R, prober_status> {
    prober_engine::try_ref_from_ptr(e)?.enter(f)
}

/// The whole body of an export that changes the engine: the status of `f`, or the refusal
/// (NULL, busy, poisoned) or caught panic that kept it from running or finishing.
fn engine_call(
    e: *const prober_engine,
    f: impl FnOnce(&mut Inner) -> Result<(), prober_status>,
) -> prober_status {
    guard_status(|| with_engine(e, f))
}

/// The whole body of an export that reads a value of the engine: what `f` returns, or
/// `neutral` when the call was refused (NULL, busy, poisoned) or panicked; the reason is then
/// in `prober_last_error`.
pub(crate) fn engine_query<R: GuardFallback>(
    e: *const prober_engine,
    f: impl FnOnce(&mut Inner) -> R,
) -> R {
    guard(|| with_engine(e, |i| Ok(f(i))).unwrap_or_else(|_| R::fallback()))
}

/// Creates an engine and hands it to C through `out`.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL `out`, `PROBER_E_IO` when the engine's descriptors could not be
/// made.
pub(crate) fn new_engine(
    config: EngineConfig,
    out: *mut *mut prober_engine,
) -> Result<(), prober_status> {
    let out = Out::try_from_ptr(out, "out")?;
    let engine = Engine::with_config(config)
        .map_err(|e| set_error(PROBER_E_IO, format!("could not create the engine: {e}")))?;
    let wake = Wakeup::Engine(engine.handle());
    out.write(prober_engine::boxed(Driver::One(engine), wake));
    Ok(())
}

impl prober_engine {
    /// A new C engine driving `engine`, woken from other threads through `wake`.
    pub(crate) fn boxed(engine: Driver, wake: Wakeup) -> *mut prober_engine {
        let eng = prober_engine {
            wake,
            poisoned: AtomicBool::new(false),
            in_use: AtomicBool::new(false),
            inner: UnsafeCell::new(Inner { engine, held: Vec::new() }),
        };
        eng.to_boxed_mut_ptr()
    }
}

/// The configuration `PROBER_ENGINE_*` `flags` ask for.
///
/// # Errors
/// `PROBER_E_INVALID` for an unknown flag.
pub(crate) fn config_of_flags(flags: u32) -> Result<EngineConfig, prober_status> {
    use prober_engine_flags::*;
    let unknown = flags & !prober_engine_flags::KNOWN;
    if unknown != 0 {
        return Err(set_error(PROBER_E_INVALID, format!("unknown engine flags {unknown:#x}")));
    }
    let every_run = PROBER_ENGINE_EVERY_RUN.is_in(flags);
    let mut config = EngineConfig { every_run, ..EngineConfig::default() };
    if PROBER_ENGINE_NO_SOCKET_REUSE.is_in(flags) {
        config.socket_pool = 0;
    }
    Ok(config)
}

/// Creates an engine (one epoll instance, no thread). Free it with `prober_engine_free`.
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_new(out: *mut *mut prober_engine) -> prober_status {
    guard_status(|| new_engine(EngineConfig::default(), out))
}

/// Creates an engine with `PROBER_ENGINE_*` flags or-ed together.
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_new_with_flags(
    flags: u32,
    out: *mut *mut prober_engine,
) -> prober_status {
    guard_status(|| new_engine(config_of_flags(flags)?, out))
}

/// Frees an engine: every in-flight probe is cancelled (sockets closed, commands killed and
/// reaped). NULL is accepted and ignored. No other call on it may run or follow. Should another
/// call on it be running after all (another thread's, against the rules), the engine is not
/// freed but leaked, and `prober_last_error` says so: freeing it under that call would crash.
///
/// # Safety
/// `e` must be NULL or an engine from this library not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_free(e: *mut prober_engine) {
    guard(|| {
        let Some(eng) = prober_engine::ref_from_ptr(e) else { return };
        let Ok(entered) = Entered::enter(eng) else {
            set_error(
                PROBER_E_BUSY,
                "prober_engine_free: the engine is in use by another thread; not freed (leaked)",
            );
            return;
        };
        // Holding `in_use` to the end: a call racing with this free is refused until `eng` is
        // gone (after that, calling is the host's use-after-free, which no flag can catch).
        std::mem::forget(entered);
        // No other call is inside it (`in_use` was taken above), and `eng` is not used after
        // this.
        prober_engine::free_boxed_ptr(e);
    })
}

/// Adds a target (the kubelet's container) with no probes; `*target_id` receives its id,
/// never 0 and never reused by this engine.
///
/// # Safety
/// `e` must be NULL or a live engine; `target_id` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_add_target(
    e: *mut prober_engine,
    target_id: *mut u64,
) -> prober_status {
    guard_status(|| {
        let eng = prober_engine::try_ref_from_ptr(e)?;
        let target_id = Out::try_from_ptr(target_id, "target_id")?;
        eng.enter(|i| {
            target_id.write(i.engine.add_target()?);
            Ok(())
        })
    })
}

/// Sets (or replaces) the target's probe for `role` (`PROBER_ROLE_*`), copying `spec` with its
/// timeout, period, initial delay and thresholds; the caller keeps and frees `spec`. The
/// worker starts from the role's initial value, published as a state event.
///
/// # Safety
/// `e` must be NULL or a live engine; `spec` NULL or a live spec.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_set_probe(
    e: *mut prober_engine,
    target_id: u64,
    role: u32,
    spec: *const prober_spec,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_ref_from_ptr(spec)?;
        with_engine(e, |i| {
            let role = role_of(role)?;
            i.engine.set_probe(target_id, role, s.spec.clone(), s.schedule).map_err(engine_error)
        })
    })
}

/// Removes the target's probe for `role`; an in-flight run is cancelled.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_clear_probe(
    e: *mut prober_engine,
    target_id: u64,
    role: u32,
) -> prober_status {
    engine_call(e, |i| i.engine.clear_probe(target_id, role_of(role)?).map_err(engine_error))
}

/// The kubelet's "new container ID": every probe of the target back to its initial value,
/// holds lifted, in-flight runs cancelled, initial delays and startup gating start over.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_restart_target(
    e: *mut prober_engine,
    target_id: u64,
) -> prober_status {
    engine_call(e, |i| i.engine.restart_target(target_id).map_err(engine_error))
}

/// Removes a target: in-flight probes are cancelled (commands killed and reaped) and no event
/// about it is delivered afterwards, including events queued but not yet drained.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_remove_target(
    e: *mut prober_engine,
    target_id: u64,
) -> prober_status {
    engine_call(e, |i| i.engine.remove_target(target_id).map_err(engine_error))
}

/// Runs the target's `role` probe now and restarts its period from this run. While a run is
/// in flight, one more run follows right after it. The initial delay, startup gating and holds
/// still apply (a trigger during the initial delay runs when the delay ends).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_trigger(
    e: *mut prober_engine,
    target_id: u64,
    role: u32,
) -> prober_status {
    engine_call(e, |i| i.engine.trigger(target_id, role_of(role)?).map_err(engine_error))
}

/// Starts a one-shot probe of `spec` (copied; the caller keeps and frees it). Its outcome
/// arrives as a `PROBER_EVENT_CHECK` event carrying `tag`.
///
/// # Safety
/// `e` must be NULL or a live engine; `spec` NULL or a live spec.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_submit(
    e: *mut prober_engine,
    spec: *const prober_spec,
    tag: u64,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_ref_from_ptr(spec)?;
        with_engine(e, |i| i.engine.submit(s.spec.clone(), tag).map_err(engine_error))
    })
}

/// A descriptor that becomes readable when the engine has I/O to process (its epoll fd). Poll
/// it for reading together with `prober_engine_timeout_ms`, then call `prober_engine_step`.
/// On Linux it also becomes readable by itself when a timer falls due: the next timer known
/// at the end of the last `prober_engine_step` or `prober_engine_wait` (a timerfd in the
/// engine's poll: at that instant, or at most 1 ms after the last step or wait when a busy
/// engine's timers fall due in quick succession), so a host that polls it is woken on time with no I/O in
/// flight, whatever the rounding of its own poll timeout. A timer added since (a probe set, a
/// check submitted) is in `prober_engine_timeout_ms` until the next step. Never close it.
/// -1 for NULL, or while another call is running (`PROBER_E_BUSY` in `prober_last_error`).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_fd(e: *const prober_engine) -> i32 {
    engine_query(e, |i| i.engine.fd())
}

/// Milliseconds until the engine needs `prober_engine_step` even without I/O: -1 when no timer
/// is pending, 0 when work is due now (rounded up, so a host never spins). -1 for NULL, or
/// while another call is running (`PROBER_E_BUSY` in `prober_last_error`).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_timeout_ms(e: *const prober_engine) -> i64 {
    engine_query(e, |i| {
        i.engine.timeout().map_or(-1, |d| {
            let ms = d.as_micros().div_ceil(1000);
            ms.min(i64::MAX as u128) as i64
        })
    })
}

/// Processes ready I/O, due timers and queued work without blocking. Invalidates the views of
/// the previous drain.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_step(e: *mut prober_engine) -> prober_status {
    engine_call(e, |i| {
        i.held.clear();
        i.engine.wait(Some(Duration::ZERO))
    })
}

/// Blocks until there is I/O, a timer is due, `prober_engine_wakeup` is called, or
/// `timeout_ms` passes (-1: no limit of its own), then processes like `prober_engine_step`.
/// A signal that interrupts the wait ends it early too, as it ends poll(2): nothing is lost,
/// call it again. Invalidates the views of the previous drain.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_wait(
    e: *mut prober_engine,
    timeout_ms: i32,
) -> prober_status {
    guard_status(|| {
        if timeout_ms < -1 {
            return Err(set_error(
                PROBER_E_INVALID_DURATION,
                format!("timeout_ms {timeout_ms} (expected -1 or more)"),
            ));
        }
        let limit = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        with_engine(e, |i| {
            i.held.clear();
            i.engine.wait(limit)
        })
    })
}

/// Makes a `prober_engine_wait` in progress on another thread return (or the next one return
/// at once). The one call that any thread may make at any time while the engine lives.
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_wakeup(e: *const prober_engine) -> prober_status {
    guard_status(|| {
        // Only `handle` is touched, which is thread-safe and outside the cell that the
        // engine's own thread may be using.
        let eng = prober_engine::try_ref_from_ptr(e)?;
        eng.wake.wake().map_err(|err| set_error(PROBER_E_IO, err))
    })
}

/// Events queued and not yet drained (0 for NULL or while another call is running).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_pending(e: *const prober_engine) -> usize {
    engine_query(e, |i| i.engine.pending_events())
}

/// Probes running right now, periodic and one-shot (0 for NULL or while another call is
/// running).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_in_flight(e: *const prober_engine) -> usize {
    engine_query(e, |i| i.engine.in_flight().unwrap_or(0))
}

/// Cancels the one-shot probes submitted with `tag` that are still running: each stops at
/// once (socket closed; command and its process group killed and reaped) and its
/// `PROBER_EVENT_CHECK` is queued now, with result `PROBER_RESULT_UNKNOWN` and reason
/// `PROBER_REASON_CANCELLED`, so that every submit still gets exactly one event. Returns how
/// many were cancelled: 0 when none runs (finished already, or never submitted), and 0 for
/// NULL or while another call is running (`PROBER_E_BUSY` in `prober_last_error`).
///
/// # Safety
/// `e` must be NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_cancel_check(e: *mut prober_engine, tag: u64) -> usize {
    engine_query(e, |i| i.engine.cancel_check(tag).unwrap_or(0))
}

/// An engine's counters, filled in by `prober_engine_get_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct prober_engine_stats {
    /// Targets the engine has.
    pub targets: u64,
    /// Probes running right now, periodic and one-shot.
    pub in_flight: u64,
    /// Events queued and not yet drained (as `prober_engine_pending`).
    pub pending_events: u64,
    /// `PROBER_EVENT_RUN` events dropped, oldest first, because more than 1024 waited to be
    /// drained (never one queued by the current step or wait; see `prober_engine_drain` for
    /// the whole policy). Never decreases.
    pub dropped_events: u64,
    /// Idle kept-alive HTTP and gRPC connections held now (`prober_spec_set_keep_alive`).
    pub kept_connections: u64,
    /// Disconnected TCP sockets kept for reuse now (see `PROBER_ENGINE_NO_SOCKET_REUSE`).
    pub pooled_sockets: u64,
    /// Reserved for future counters; zero.
    pub reserved: [u64; 4],
}

/// Fills `*stats` with the engine's counters.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL argument, `PROBER_E_BUSY` while another call is running.
///
/// # Safety
/// `e` must be NULL or a live engine; `stats` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_get_stats(
    e: *const prober_engine,
    stats: *mut prober_engine_stats,
) -> prober_status {
    guard_status(|| {
        let eng = prober_engine::try_ref_from_ptr(e)?;
        let stats = Out::try_from_ptr(stats, "stats")?;
        eng.enter(|i| {
            // A group's counters are its engines' sums; its queue's events are pending too.
            let mut sum = prober_engine_stats {
                pending_events: match &i.engine {
                    Driver::One(_) => 0,
                    group => group.pending_events() as u64,
                },
                ..prober_engine_stats::default()
            };
            for e in i.engine.each(|e| {
                [
                    e.target_count() as u64,
                    e.in_flight() as u64,
                    e.pending_events() as u64,
                    e.dropped_events(),
                    e.keep_alive_stats().idle as u64,
                    e.socket_pool_stats().idle as u64,
                ]
            })? {
                sum.targets += e[0];
                sum.in_flight += e[1];
                sum.pending_events += e[2];
                sum.dropped_events += e[3];
                sum.kept_connections += e[4];
                sum.pooled_sockets += e[5];
            }
            stats.write(sum);
            Ok(())
        })
    })
}

/// The published value (`PROBER_RESULT_*`) of the target's `role` probe, into `*result`.
///
/// # Safety
/// `e` must be NULL or a live engine; `result` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_published(
    e: *mut prober_engine,
    target_id: u64,
    role: u32,
    result: *mut u32,
) -> prober_status {
    guard_status(|| {
        let eng = prober_engine::try_ref_from_ptr(e)?;
        let result = Out::try_from_ptr(result, "result")?;
        eng.enter(|i| {
            let v = i.engine.published(target_id, role_of(role)?).map_err(engine_error)?;
            result.write(prober_result::code_of(v));
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, Barrier};

    use super::*;
    use crate::prober_last_error;

    fn new() -> *mut prober_engine {
        let mut e = std::ptr::null_mut();
        // SAFETY: `e` is a writable out-pointer.
        assert_eq!(unsafe { prober_engine_new(&mut e) }, PROBER_OK);
        e
    }

    fn last_error() -> String {
        let s = prober_last_error();
        // SAFETY: the view is valid until the next call on this thread; copied at once.
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// The engine is `Send` to another thread as an address: the calls themselves are what is
    /// tested for concurrent use.
    #[derive(Clone, Copy)]
    struct Ptr(usize);

    #[test]
    fn a_call_during_another_is_refused_and_changes_nothing() {
        let e = new();
        // SAFETY: `e` is live; the reference is not used after the engine is freed.
        let eng = unsafe { &*e };
        let held = Entered::enter(eng).unwrap();
        let mut target = 0u64;
        // SAFETY: live engine (in every call below until the last free).
        let step = || unsafe { prober_engine_step(e) };
        // SAFETY: live engine; `target` is writable.
        let add = |t: &mut u64| unsafe { prober_engine_add_target(e, t) };
        assert_eq!(step(), PROBER_E_BUSY);
        assert!(last_error().contains("in use by another thread"), "{}", last_error());
        assert_eq!(add(&mut target), PROBER_E_BUSY);
        assert_eq!(target, 0, "out-parameters are written only on success");
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_fd(e) }, -1);
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_timeout_ms(e) }, -1);
        // The wake-up is for any thread at any time.
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_wakeup(e) }, PROBER_OK);
        // Nor is the engine freed under the running call.
        // SAFETY: live engine; refused, so still live after.
        unsafe { prober_engine_free(e) };
        assert!(last_error().contains("not freed"), "{}", last_error());
        drop(held);
        assert_eq!(add(&mut target), PROBER_OK);
        assert_ne!(target, 0);
        assert_eq!(step(), PROBER_OK);
        // SAFETY: live engine, not used after.
        unsafe { prober_engine_free(e) };
    }

    #[test]
    fn a_panicking_call_gives_the_engine_back() {
        let e = new();
        let r: Result<(), prober_status> = with_engine(e, |_| panic!("test panic"));
        assert_eq!(r, Err(PROBER_E_PANIC));
        // Poisoned, not busy: the panic released the flag.
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_step(e) }, PROBER_E_PANIC);
        // SAFETY: live engine, not used after.
        unsafe { prober_engine_free(e) };
    }

    #[test]
    fn two_threads_hammering_one_engine() {
        let e = new();
        let p = Ptr(e as usize);
        let busy = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (busy, start) = (busy.clone(), start.clone());
                std::thread::spawn(move || {
                    let e = p.0 as *mut prober_engine;
                    start.wait();
                    let mut ok = 0;
                    while busy.load(Ordering::Relaxed) == 0 || ok < 1000 {
                        let mut t = 0u64;
                        // SAFETY: the engine lives until both threads are joined.
                        let rc = unsafe {
                            match ok % 2 {
                                0 => prober_engine_step(e),
                                _ => prober_engine_add_target(e, &mut t),
                            }
                        };
                        match rc {
                            PROBER_OK => ok += 1,
                            PROBER_E_BUSY => {
                                busy.fetch_add(1, Ordering::Relaxed);
                            }
                            other => panic!("unexpected {other:?}: {}", last_error()),
                        }
                    }
                    ok
                })
            })
            .collect();
        let ok: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        println!("{ok} calls done, {} refused as busy", busy.load(Ordering::Relaxed));
        assert!(busy.load(Ordering::Relaxed) > 0);
        // SAFETY: both threads are gone.
        unsafe { prober_engine_free(e) };
    }

    /// The flag's cost: `cargo test --release -p prober-ffi --lib -- --ignored --nocapture
    /// in_use_flag_cost` (a measurement, not a check).
    #[test]
    #[ignore]
    fn in_use_flag_cost() {
        use std::time::Instant;
        const N: u32 = 10_000_000;
        let e = new();
        // SAFETY: `e` is live until freed below, after the last use of `eng`.
        let eng = unsafe { &*e };
        let t = Instant::now();
        for _ in 0..N {
            drop(std::hint::black_box(Entered::enter(eng).unwrap()));
        }
        let flag = t.elapsed() / N;
        let t = Instant::now();
        for _ in 0..N {
            // SAFETY: live engine.
            std::hint::black_box(unsafe { prober_engine_in_flight(e) });
        }
        let call = t.elapsed() / N;
        println!("take and release the flag: {flag:?}; a whole prober_engine_in_flight: {call:?}");
        // SAFETY: live engine, not used after.
        unsafe { prober_engine_free(e) };
    }
}
