package prober

// AsleepWithoutLimit reports whether e's driving goroutine sleeps in gp_loop_sleep (or is past
// its last look for work and about to) with no time limit: nothing queued, no timer due, so
// only a wake-up can make it turn again. The tests of lost wake-ups wait for this state.
func AsleepWithoutLimit(e *Engine) bool {
	c := e.c
	// mu first, as the driving goroutine takes them: timeout_ms is written during a turn,
	// under mu; sleeping under qmu.
	c.mu.Lock()
	defer c.mu.Unlock()
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.l != nil && c.sleeping && c.l.timeout_ms < 0
}

// SharedStats is the Stats of the engine of the package-level Check.
func SharedStats() Stats {
	shared.mu.Lock()
	e := shared.e
	shared.mu.Unlock()
	st, _ := e.Stats()
	return st
}

// SharedInFlight is the probes in flight on the engine of the package-level Check.
func SharedInFlight() int { return SharedStats().InFlight }

// OpenEngines lists the stacks that made engines not closed yet (debug builds).
var OpenEngines = openEngines
