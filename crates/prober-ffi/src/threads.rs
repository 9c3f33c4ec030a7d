//! An engine past one core (`prober_engine_new_with_threads`): several engines, each on a
//! thread of the library's, behind one `prober_engine` (targets sharded over them, one-shot
//! checks spread), whose threads hand their events to one queue that the host drains as it
//! drains a lone engine. The queue's wake-up (an eventfd in an epoll set) is the descriptor the
//! host polls; callbacks still run on the host's thread only, inside its calls.

use ::prober_engine::{MAX_THREADS, ShardedEngine};

use crate::driver::{Driver, Group, Wakeup};
use crate::engine::{config_of_flags, new_engine, prober_engine};
use crate::ptr::Out;
use crate::status::*;
use crate::{guard_status, set_error};

/// The most threads `prober_engine_new_with_threads` takes.
pub const PROBER_ENGINE_MAX_THREADS: u32 = 256;
const _: () = assert!(PROBER_ENGINE_MAX_THREADS as usize == MAX_THREADS);

/// Creates an engine whose probes run on `threads` engine threads of the library's, for loads
/// that one core cannot carry (TLS handshakes, many short periods). `flags` are those of
/// `prober_engine_new_with_flags`. `threads` 1 is `prober_engine_new_with_flags(flags, out)`
/// exactly: no thread is started, the host's calls drive the engine.
///
/// With `threads` N from 2 to `PROBER_ENGINE_MAX_THREADS`, N engines each run on a thread of
/// their own behind this one `prober_engine`, and every `prober_engine_*` call works on it as
/// on a lone engine: `prober_engine_add_target` puts each new target on the next engine in
/// turn (its id says which, so the target's calls reach it), one-shot submits go to the engines
/// in turn, `prober_engine_cancel_check` reaches all of them, and the counters of
/// `prober_engine_get_stats` and `prober_engine_get_host_run_stats` are their sums. The
/// engines' threads probe and keep time by themselves and hand their events to one queue:
/// `prober_engine_fd` is that queue's descriptor (an epoll set holding an eventfd), readable
/// when events, completions or an engine thread's end wait for the host;
/// `prober_engine_timeout_ms` is -1 (the host need not step for timers);
/// `prober_engine_wait` blocks until then (or `prober_engine_wakeup`, or its timeout), and it
/// and `prober_engine_step` run the `prober_engine_submit_with` completions that arrived, on
/// the calling thread, as `prober_engine_cancel_check` does; `prober_engine_drain` takes the
/// queued events. The events of one target (and of one check) come in the order its engine made
/// them; those of different engines may interleave. The queue holds up to 1024 events; while
/// it is full each engine keeps further events under the policy of `prober_engine_drain`
/// (state changes coalesced, run events dropped oldest-first and counted, check events kept),
/// and hands them over as the host drains. Each engine has its own socket pool and kept
/// connections. A call that changes or reads an engine's targets waits for that engine's
/// thread to take it (at its next turn, woken at once).
///
/// Should an engine thread end (a panic in the engine's own bookkeeping, or its poll failing),
/// its engine is dropped (its probes cancelled, commands killed and reaped) and the
/// `prober_engine` becomes unusable, as a lone engine after a panic: the descriptor turns
/// readable and every call but `prober_engine_free` returns `PROBER_E_PANIC` (or
/// `PROBER_E_IO` for the poll) with the reason in `prober_last_error`. A panic inside one
/// probe's run ends that run only, as on a lone engine. The threads never call the host, make
/// every descriptor close-on-exec and touch no signal handler nor mask; `prober_engine_free`
/// stops and joins them (every probe in flight cancelled; `prober_engine_submit_with`
/// completions not run yet are never called).
///
/// # Errors
/// `PROBER_E_INVALID` for `threads` 0 or over `PROBER_ENGINE_MAX_THREADS`, or an unknown flag;
/// `PROBER_E_NULL` for a NULL `out`; `PROBER_E_IO` when an engine or a thread could not be made
/// (those made so far are stopped).
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_engine_new_with_threads(
    flags: u32,
    threads: u32,
    out: *mut *mut prober_engine,
) -> prober_status {
    guard_status(|| {
        let config = config_of_flags(flags)?;
        if threads == 0 || threads > PROBER_ENGINE_MAX_THREADS {
            return Err(set_error(
                PROBER_E_INVALID,
                format!(
                    "{threads} engine threads: from 1 to PROBER_ENGINE_MAX_THREADS \
                     ({PROBER_ENGINE_MAX_THREADS})"
                ),
            ));
        }
        if threads == 1 {
            return new_engine(config, out);
        }
        let out = Out::try_from_ptr(out, "out")?;
        let group = ShardedEngine::start(config, threads as usize).map_err(|e| {
            set_error(PROBER_E_IO, format!("could not start {threads} engine threads: {e}"))
        })?;
        let wake = Wakeup::Group(group.host_waker());
        out.write(prober_engine::boxed(Driver::Group(Group(group)), wake));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::engine::{
        prober_engine_add_target, prober_engine_fd, prober_engine_free, prober_engine_pending,
        prober_engine_remove_target, prober_engine_set_probe, prober_engine_wait,
        prober_engine_wakeup, prober_event, with_engine,
    };
    use crate::event_form::prober_engine_drain;
    use crate::outcome::prober_role;
    use crate::prober_last_error;
    use crate::spec::{prober_spec_free, prober_spec_new_tcp};

    fn last_error() -> String {
        let s = prober_last_error();
        // SAFETY: the view is valid until the next call on this thread; copied at once.
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn with_threads(threads: u32) -> *mut prober_engine {
        let mut e = std::ptr::null_mut();
        // SAFETY: `e` is a writable out-pointer.
        let rc = unsafe { prober_engine_new_with_threads(0, threads, &mut e) };
        assert_eq!(rc, PROBER_OK, "{}", last_error());
        e
    }

    /// A target with a readiness TCP probe of `port` (period one minute: one run, at once).
    fn add_tcp_target(e: *mut prober_engine, port: u16) -> u64 {
        let mut s = std::ptr::null_mut();
        let mut t = 0;
        // SAFETY: the host is a NUL-terminated string and `s` writable; `e` is live and `t`
        // writable; the spec is freed once, after its last use.
        unsafe {
            assert_eq!(
                prober_spec_new_tcp(c"127.0.0.1".as_ptr(), i32::from(port), &mut s),
                PROBER_OK
            );
            assert_eq!(prober_engine_add_target(e, &mut t), PROBER_OK);
            let role = prober_role::code_of(prober_core::Role::Readiness);
            assert_eq!(prober_engine_set_probe(e, t, role, s), PROBER_OK, "{}", last_error());
            prober_spec_free(s);
        }
        t
    }

    fn is_group(e: *mut prober_engine) -> bool {
        with_engine(e, |i| Ok(matches!(i.engine, Driver::Group(_)))).unwrap()
    }

    #[test]
    fn thread_counts_out_of_range_are_refused_with_a_reason_and_one_is_a_lone_engine() {
        for threads in [0, PROBER_ENGINE_MAX_THREADS + 1] {
            let mut e = std::ptr::null_mut();
            // SAFETY: `e` is a writable out-pointer.
            let rc = unsafe { prober_engine_new_with_threads(0, threads, &mut e) };
            assert_eq!(rc, PROBER_E_INVALID);
            assert!(
                last_error().contains(&format!("{threads} engine threads")),
                "{}",
                last_error()
            );
            assert!(e.is_null(), "out-parameters are written only on success");
        }
        let mut e = std::ptr::null_mut();
        // SAFETY: `e` is a writable out-pointer.
        assert_eq!(unsafe { prober_engine_new_with_threads(4, 2, &mut e) }, PROBER_E_INVALID);
        assert!(last_error().contains("unknown engine flags"), "{}", last_error());
        let one = with_threads(1);
        assert!(!is_group(one), "one thread is today's engine, driven by the host's calls");
        let two = with_threads(2);
        assert!(is_group(two));
        // SAFETY: live engines, not used after.
        unsafe {
            prober_engine_free(one);
            prober_engine_free(two);
        }
    }

    /// Waits (bounded) until the engine's queue holds `n` events, without draining them.
    fn until_pending(e: *mut prober_engine, n: usize) {
        let limit = Instant::now() + Duration::from_secs(30);
        // SAFETY: live engine.
        while unsafe { prober_engine_pending(e) } < n {
            assert!(Instant::now() < limit, "no event within 30 s");
            // SAFETY: live engine.
            assert_eq!(unsafe { prober_engine_wait(e, 50) }, PROBER_OK);
        }
    }

    #[test]
    fn events_handed_over_before_a_removal_are_not_delivered_after_it() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let e = with_threads(2);
        let gone = add_tcp_target(e, port);
        let kept = add_tcp_target(e, port);
        // Each target: its initial value, then its first run's success.
        until_pending(e, 4);
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_remove_target(e, gone) }, PROBER_OK);
        let mut events = [std::mem::MaybeUninit::<prober_event>::uninit(); 8];
        // SAFETY: live engine; `events` is writable for 8 events.
        let n = unsafe { prober_engine_drain(e, events.as_mut_ptr().cast(), 8) };
        // SAFETY: the drain wrote the first `n`.
        let targets: Vec<u64> =
            events[..n].iter().map(|ev| unsafe { ev.assume_init() }.target).collect();
        assert_eq!(targets, [kept, kept], "only the kept target's events");
        // SAFETY: live engine, not used after.
        unsafe { prober_engine_free(e) };
    }

    #[test]
    fn a_panic_on_an_engine_thread_leaves_the_engine_unusable_and_the_process_alive() {
        let e = with_threads(2);
        let handle = with_engine(e, |i| match &i.engine {
            Driver::Group(g) => Ok(g.handle().clone()),
            Driver::One(_) => unreachable!("two threads"),
        })
        .unwrap();
        // SAFETY: live engine. Taken before, as a host does: a failed engine's is -1.
        let fd = unsafe { prober_engine_fd(e) };
        // A panic in the engine's own bookkeeping (not in a probe's run, which ends that run
        // only) ends the thread; the call sees its engine go.
        assert!(
            handle.call(|_| -> () { panic!("deliberate test panic on an engine thread") }).is_err()
        );
        // The host's descriptor turns readable, and its wait reports the end.
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; bounded by a limit far above the thread's end.
        assert_eq!(unsafe { libc::poll(&mut p, 1, 30_000) }, 1, "the descriptor is readable");
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_wait(e, 0) }, PROBER_E_PANIC);
        assert!(last_error().contains("panicked: deliberate test panic"), "{}", last_error());
        let mut t = 0;
        // SAFETY: live engine; `t` is writable.
        assert_eq!(unsafe { prober_engine_add_target(e, &mut t) }, PROBER_E_PANIC);
        assert!(last_error().contains("the engine is unusable"), "{}", last_error());
        // The wake-up still works, and the free stops the other thread.
        // SAFETY: live engine.
        assert_eq!(unsafe { prober_engine_wakeup(e) }, PROBER_OK);
        // SAFETY: live engine, not used after.
        unsafe { prober_engine_free(e) };
    }
}
