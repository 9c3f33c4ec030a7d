package prober

// #include "shim.h"
import "C"

import (
	"context"
	"sync"
)

// shared is the engine of the package-level Check, started by the first call.
var shared struct {
	mu sync.Mutex
	e  *Engine
}

// sharedEngine is the package's engine for Check: made on first use, and made again if it
// failed. It is never closed.
func sharedEngine() (*Engine, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.e != nil && shared.e.Err() == nil {
		return shared.e, nil
	}
	// Nobody receives its events, and none is sent: it has no workers, and the results of
	// Check go to their callers, not to Events.
	e, err := newEngine()
	if err != nil {
		return nil, err
	}
	shared.e = e
	return e, nil
}

// Check runs spec once and returns its outcome, with every timing and the certificate
// expiry. A probe that fails is not an error: the failure is in the Outcome. The error is an
// *Error when spec is invalid (errors.Is(err, ErrInvalidSpec)), or one that wraps ctx.Err()
// when ctx ends first; the probe is then cancelled at once (its socket closed, its command and
// the command's process group killed and reaped).
//
// Every call runs on one engine that the package starts on first use and shares: one
// goroutine and, while it waits for I/O, one OS thread, however many Checks run at once.
// Programs with an Engine can use Engine.Check, which runs on theirs.
func Check(ctx context.Context, spec Spec) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, cancelled(err)
	}
	e, err := sharedEngine()
	if err != nil {
		return Outcome{}, err
	}
	return e.Check(ctx, spec)
}

// CheckBlocking runs spec once on the calling goroutine's thread (prober_check) and returns
// its outcome. It cannot be cancelled: it returns within the spec's timeout (plus the time to
// reap a killed command), holding an OS thread meanwhile. Prefer Check.
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
