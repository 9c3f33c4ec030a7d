package prober

// #include "shim.h"
import "C"

import (
	"context"
	"sync"
)

// Check runs spec once and returns its outcome. A probe that fails is not an error: the
// failure is in the Outcome. The error is an *Error when spec is invalid, or ctx.Err() when
// ctx ends first; the probe is then cancelled at once (its socket closed, its command and
// the command's process group killed and reaped).
//
// Each call runs the probe on a private libprober engine, waiting for it in one cgo call
// that ctx's cancellation interrupts (prober_engine_wakeup); the call holds an OS thread for
// the probe's duration, like a blocking system call. To run very many probes at once, use an
// Engine and Submit, which runs them all on one thread.
//
// The Outcome reports the total duration but not the timings of the phases nor the
// certificate expiry; CheckBlocking does.
func Check(ctx context.Context, spec Spec) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	cs, err := newCSpec(&spec)
	if err != nil {
		return Outcome{}, err
	}
	defer C.prober_spec_free(cs)

	var cerr C.gp_err
	var c *C.gp_check
	if rc := C.gp_check_start(cs, &c, &cerr); rc != C.PROBER_OK {
		return Outcome{}, newError(rc, &cerr)
	}

	// gp_check_cancel may run on any thread, but only while c lives: the mutex orders it
	// before gp_check_free.
	var mu sync.Mutex
	freed := false
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			mu.Lock()
			if !freed {
				C.gp_check_cancel(c)
			}
			mu.Unlock()
		})
	}

	var rc C.prober_status
	got := C.gp_check_run(c, &rc, &cerr)
	var out Outcome
	if got == 1 {
		out = outcomeOfEvent(&c.ev) // copied before the engine (and the views) go away
	}
	stop()
	mu.Lock()
	freed = true
	C.gp_check_free(c)
	mu.Unlock()

	switch got {
	case 1:
		return out, nil
	case 0:
		return Outcome{}, ctx.Err()
	default:
		return Outcome{}, newError(rc, &cerr)
	}
}

// CheckBlocking runs spec once on the calling goroutine's thread (prober_check) and returns
// the full outcome, timings of every phase and certificate expiry included. It cannot be
// cancelled: it returns within the spec's timeout (plus the time to reap a killed command).
// Prefer Check where a context applies.
func CheckBlocking(spec Spec) (Outcome, error) {
	cs, err := newCSpec(&spec)
	if err != nil {
		return Outcome{}, err
	}
	defer C.prober_spec_free(cs)
	var cerr C.gp_err
	var o *C.prober_outcome
	if rc := C.gp_check_blocking(cs, &o, &cerr); rc != C.PROBER_OK {
		return Outcome{}, newError(rc, &cerr)
	}
	defer C.prober_outcome_free(o)
	return outcomeOf(o), nil
}
