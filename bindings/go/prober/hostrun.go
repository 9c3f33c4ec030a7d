package prober

// #include "shim.h"
//
// static inline prober_status gp_spec_new_host_run_s(_GoString_ label, prober_spec **out, gp_err *err) {
//   char small[GP_SMALL];
//   char *p = gp_cstr(label, small);
//   if (p == NULL) return gp_oom(err);
//   prober_status rc = gp_fail(prober_spec_new_host_run(p, out), err);
//   gp_cstr_free(p, small);
//   return rc;
// }
//
// /* The output is read during the call only (the library copies it). */
// static inline prober_status gp_engine_complete_run_s(prober_engine *e, uint64_t run, uint32_t result, _GoString_ out) {
//   return prober_engine_complete_run(e, run, result, _GoStringPtr(out), _GoStringLen(out));
// }
//
// static inline prober_status gp_engine_host_run_stats(prober_engine *e, prober_host_run_stats *s, gp_err *err) {
//   return gp_fail(prober_engine_get_host_run_stats(e, s), err);
// }
import "C"

import (
	"context"
	"sync"
	"time"
)

// HostRunFunc performs one run of a host-run probe and returns its result and output (at most
// Spec.OutputLimit bytes are kept). ctx ends at the probe's timeout, and earlier when the run
// is cancelled (its target removed or restarted, its probe cleared or replaced, the engine
// closed): an answer after that is ignored and counted (HostRunStats.Late). Result Unknown
// means the run could not be performed; the engine retries it at once, up to 3 times, as the
// kubelet retries a probe error.
type HostRunFunc func(ctx context.Context) (Result, string)

// HostRun is a probe that the host runs: the engine schedules it on the target's worker and
// judges its results by the kubelet's rules (thresholds, startup gating, holds, retries of
// Unknown), and the package calls run on a goroutine of its own for every run. A run that has
// not returned at the probe's Timeout ends as Failure with ReasonTimeout, worded as exec's
// ("host run timed out: \"LABEL\" timed out after 1s"); a run that never returns blocks no
// other probe. label names the probe in messages. Use it for checks the engine cannot run
// itself: a CRI runtime's ExecSync, an agent inside a VM.
//
// Only Engine.SetProbe runs it: a one-shot check has no host to perform it, so Check, Submit
// and Engine.Check refuse it (an *Error with StatusWrongKind).
func HostRun(label string, run HostRunFunc) Spec {
	return Spec{Kind: KindHostRun, Label: label, Run: run}
}

// HostRunStats are the counters of host-run probes, from Engine.HostRunStats; each only grows.
type HostRunStats struct {
	// Announced: runs the engine started.
	Announced uint64
	// Completed: runs whose function returned in time.
	Completed uint64
	// TimedOut: runs that reached the probe's timeout first.
	TimedOut uint64
	// Late: answers ignored because their run had ended (timed out, cancelled).
	Late uint64
	// Unknown: answers ignored because no run had their id (not expected from this package).
	Unknown uint64
}

// HostRunStats reports the engine's counters of host-run probes.
func (e *Engine) HostRunStats() (HostRunStats, error) {
	var st C.prober_host_run_stats
	err := e.call(false, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_host_run_stats(p, &st, cerr)
	})
	if err != nil {
		return HostRunStats{}, err
	}
	return HostRunStats{
		Announced: uint64(st.announced),
		Completed: uint64(st.completed),
		TimedOut:  uint64(st.timed_out),
		Late:      uint64(st.late),
		Unknown:   uint64(st.unknown),
	}, nil
}

func (b *cbuild) createHostRun(s *Spec, out **C.prober_spec) error {
	if s.Run == nil {
		return &Error{Code: StatusInvalid, Msg: "host-run probe needs a function (Run is nil)"}
	}
	if err := noNUL(s.Label, StatusInvalid, "label"); err != nil {
		return err
	}
	return b.check(C.gp_spec_new_host_run_s(s.Label, out, &b.err))
}

// hostKey names a worker.
type hostKey struct {
	target TargetID
	role   Role
}

// hostProbe is what a worker's host runs need: the function and the run's time limit.
type hostProbe struct {
	run     HostRunFunc
	timeout time.Duration
}

// hostRun is a run in progress: its worker and how to cancel its context.
type hostRun struct {
	key    hostKey
	cancel context.CancelFunc
}

// hostRuns holds the host-run probes of an engine (set under the engine's mu, so before the
// driving goroutine sees their announcements) and the runs in progress, which the driving
// goroutine starts and their goroutines end.
type hostRuns struct {
	mu      sync.Mutex
	probes  map[hostKey]hostProbe
	running map[uint64]hostRun
}

// set records the probe of a worker (forgets it for a spec of another kind) and cancels the
// run of the probe it replaces: the engine has cancelled that run.
func (h *hostRuns) set(target TargetID, role Role, s *Spec) {
	h.cancelRuns(target, role, false)
	h.mu.Lock()
	defer h.mu.Unlock()
	k := hostKey{target, role}
	if s.Kind != KindHostRun {
		delete(h.probes, k)
		return
	}
	if h.probes == nil {
		h.probes = make(map[hostKey]hostProbe)
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = time.Second // the library's default, the kubelet's timeoutSeconds: 1
	}
	h.probes[k] = hostProbe{run: s.Run, timeout: timeout}
}

func (h *hostRuns) clear(target TargetID, role Role) {
	h.cancelRuns(target, role, false)
	h.mu.Lock()
	delete(h.probes, hostKey{target, role})
	h.mu.Unlock()
}

func (h *hostRuns) remove(target TargetID) {
	h.cancelRuns(target, 0, true)
	h.mu.Lock()
	for k := range h.probes {
		if k.target == target {
			delete(h.probes, k)
		}
	}
	h.mu.Unlock()
}

// cancelRuns cancels the contexts of the target's runs in progress: of role, or of every role
// with all.
func (h *hostRuns) cancelRuns(target TargetID, role Role, all bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, r := range h.running {
		if r.key.target == target && (all || r.key.role == role) {
			r.cancel()
			delete(h.running, id)
		}
	}
}

func (h *hostRuns) cancelAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, r := range h.running {
		r.cancel()
		delete(h.running, id)
	}
}

// startHostRun starts the goroutine of an announced run (a PROBER_EVENT_HOST_RUN event). Called
// by the driving goroutine, with mu held.
func (c *engineCore) startHostRun(ev *C.prober_event) {
	id := uint64(ev.tag)
	k := hostKey{TargetID(ev.target), Role(ev.role)}
	c.hr.mu.Lock()
	p, ok := c.hr.probes[k]
	if !ok {
		// Not expected: the engine cancels and withdraws the runs of a probe that is cleared
		// or replaced. The run times out.
		c.hr.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	if c.hr.running == nil {
		c.hr.running = make(map[uint64]hostRun)
	}
	c.hr.running[id] = hostRun{key: k, cancel: cancel}
	c.hr.mu.Unlock()
	go func() {
		result, output := p.run(ctx)
		c.hr.mu.Lock()
		delete(c.hr.running, id)
		c.hr.mu.Unlock()
		cancel()
		c.completeRun(id, result, output)
	}()
}

// completeRun hands a run's answer to the engine; a late one is ignored and counted there.
func (c *engineCore) completeRun(id uint64, result Result, output string) {
	c.mu.Lock()
	if c.ptr == nil {
		c.mu.Unlock()
		return // closed
	}
	maybeGC()
	C.gp_engine_complete_run_s(c.ptr, C.uint64_t(id), C.uint32_t(result), output)
	c.mu.Unlock()
	c.wake()
}
