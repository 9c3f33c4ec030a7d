package prober

// #include "shim.h"
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// TargetID identifies a target (the kubelet's container) of an Engine; never 0, never reused
// by that engine.
type TargetID uint64

// EventKind is the kind of an Event.
type EventKind uint32

const (
	// EventState: a worker's published value changed, or was set to its initial value
	// (HasOutcome false).
	EventState EventKind = C.PROBER_EVENT_STATE
	// EventCheck: a one-shot probe from Submit finished; Tag is the Submit's tag.
	EventCheck EventKind = C.PROBER_EVENT_CHECK
	// EventRun: a worker ran once (only with WithEveryRun).
	EventRun EventKind = C.PROBER_EVENT_RUN
)

func (k EventKind) String() string {
	switch k {
	case EventState:
		return "state"
	case EventCheck:
		return "check"
	case EventRun:
		return "run"
	}
	return "EventKind(" + itoa(uint64(k)) + ")"
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// Event is something an Engine reports on its Events channel.
type Event struct {
	Kind EventKind
	// Target and Role: state and run events.
	Target TargetID
	Role   Role
	// Tag: check events (the Submit's tag).
	Tag uint64
	// Result is the new published value (state events) or the run's result.
	Result Result
	// HasOutcome is false for state events that set an initial value (no run caused them).
	HasOutcome bool
	// Outcome of the run behind the event, when HasOutcome.
	Outcome Outcome
	// Late is how long after its scheduled time a worker run started (run events).
	Late time.Duration
}

// EngineOption configures NewEngine.
type EngineOption func(*engineConfig)

type engineConfig struct {
	everyRun bool
	buffer   int
}

// WithEveryRun also reports an EventRun for every worker run (for hosts that log or export
// metrics).
func WithEveryRun() EngineOption { return func(c *engineConfig) { c.everyRun = true } }

// WithEventBuffer sets the capacity of the Events channel (default 1024).
func WithEventBuffer(n int) EngineOption {
	return func(c *engineConfig) {
		if n >= 0 {
			c.buffer = n
		}
	}
}

// Engine runs periodic probe workers (targets with startup, readiness and liveness probes)
// and one-shot probes on one libprober engine, driven by one goroutine that delivers the
// engine's events on the Events channel.
//
// An Engine is safe for concurrent use. Close it when done: Close cancels probes in flight
// (commands killed and reaped), stops the goroutine and closes the Events channel. An Engine
// that becomes unreachable without Close is closed by a cleanup, but do not rely on that.
type Engine struct {
	c       *engineCore
	cleanup runtime.Cleanup
}

// drainCap is how many events one prober_engine_drain call may hand over.
const drainCap = 256

// waitSlice bounds one prober_engine_wait (ms). Calls from other goroutines interrupt the wait
// with prober_engine_wakeup, so this only limits how long a lost wake-up could cost.
const waitSlice = 500

// engineCore is everything the driving goroutine needs; it does not point back to the Engine,
// so an abandoned Engine can be collected and its cleanup can close the core.
type engineCore struct {
	// mu is held for every call on ptr except prober_engine_wakeup, by the driving goroutine
	// during its wait and drain and by the methods.
	mu sync.Mutex
	// cond (on mu) parks the driving goroutine while methods want the engine.
	cond *sync.Cond
	// want counts methods waiting for mu; each calls wakeup first, so the driving goroutine's
	// current or next wait returns at once.
	want atomic.Int32
	// life orders wakeups (read lock) before the free (write lock).
	life sync.RWMutex
	ptr  *C.prober_engine // nil once freed; written under both mu and life
	buf  *C.prober_event  // C array of drainCap events, used by the driving goroutine only

	events  chan Event
	quit    chan struct{}
	done    chan struct{}
	closing atomic.Bool
	once    sync.Once
	err     atomic.Pointer[Error]

	// removed holds targets removed since the driving goroutine's last drain: events about
	// them in the batch it is delivering are dropped, so that none arrives after Remove
	// returns (the engine itself drops those it still holds).
	rmu        sync.Mutex
	removed    map[TargetID]struct{}
	hasRemoved atomic.Bool
}

// NewEngine creates an engine and starts the goroutine that drives it.
func NewEngine(opts ...EngineOption) (*Engine, error) {
	cfg := engineConfig{buffer: 1024}
	for _, o := range opts {
		o(&cfg)
	}
	var flags C.uint32_t
	if cfg.everyRun {
		flags |= C.PROBER_ENGINE_EVERY_RUN
	}
	var cerr C.gp_err
	var ptr *C.prober_engine
	if rc := C.gp_engine_new(flags, &ptr, &cerr); rc != C.PROBER_OK {
		return nil, newError(rc, &cerr)
	}
	buf := (*C.prober_event)(C.calloc(drainCap, C.size_t(unsafe.Sizeof(C.prober_event{}))))
	if buf == nil {
		C.prober_engine_free(ptr)
		return nil, &Error{Code: StatusIO, Msg: "out of memory"}
	}
	c := &engineCore{
		ptr:    ptr,
		buf:    buf,
		events: make(chan Event, cfg.buffer),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	c.cond = sync.NewCond(&c.mu)
	go c.loop()
	e := &Engine{c: c}
	e.cleanup = runtime.AddCleanup(e, func(c *engineCore) { c.close() }, c)
	return e, nil
}

// Events is the channel of the engine's events, closed by Close. Receive from it: while it is
// full, the engine is not driven (probes in flight stall, periodic runs wait).
func (e *Engine) Events() <-chan Event { return e.c.events }

// Err reports why the driving goroutine stopped early (an *Error; the engine is then
// unusable), or nil.
func (e *Engine) Err() error {
	if err := e.c.err.Load(); err != nil {
		return err
	}
	return nil
}

// Close cancels every probe in flight (sockets closed, commands killed and reaped), stops the
// driving goroutine, frees the engine and closes the Events channel; undelivered events are
// dropped. It is safe to call more than once and from any goroutine; it always returns nil.
func (e *Engine) Close() error {
	e.cleanup.Stop()
	e.c.close()
	runtime.KeepAlive(e)
	return nil
}

// AddTarget adds a target with no probes.
func (e *Engine) AddTarget() (TargetID, error) {
	var id C.uint64_t
	err := e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_add_target(p, &id, cerr)
	})
	return TargetID(id), err
}

// SetProbe sets (or replaces) the target's probe for role. The worker starts from the role's
// initial value, published as an EventState without outcome. A success threshold other than
// 1 is refused for Liveness and Startup (StatusInvalidThreshold).
func (e *Engine) SetProbe(target TargetID, role Role, spec Spec) error {
	cs, err := newCSpec(&spec)
	if err != nil {
		return err
	}
	defer C.prober_spec_free(cs)
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_set_probe(p, C.uint64_t(target), C.uint32_t(role), cs, cerr)
	})
}

// ClearProbe removes the target's probe for role; a run in flight is cancelled.
func (e *Engine) ClearProbe(target TargetID, role Role) error {
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_clear_probe(p, C.uint64_t(target), C.uint32_t(role), cerr)
	})
}

// Restart is the kubelet's "new container ID": every probe of the target goes back to its
// initial value, holds are lifted, runs in flight are cancelled, initial delays and startup
// gating start over.
func (e *Engine) Restart(target TargetID) error {
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_restart_target(p, C.uint64_t(target), cerr)
	})
}

// Remove removes a target: its probes in flight are cancelled (commands killed and reaped)
// and no event about it is received from Events after Remove returns.
func (e *Engine) Remove(target TargetID) error {
	c := e.c
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		rc := C.gp_engine_remove_target(p, C.uint64_t(target), cerr)
		if rc == C.PROBER_OK {
			// Under mu: ordered against the driving goroutine's drains.
			c.rmu.Lock()
			if c.removed == nil {
				c.removed = make(map[TargetID]struct{})
			}
			c.removed[target] = struct{}{}
			c.hasRemoved.Store(true)
			c.rmu.Unlock()
		}
		return rc
	})
}

// Trigger runs the target's role probe now and restarts its period from this run (a no-op
// while a run is in flight; gating and holds still apply).
func (e *Engine) Trigger(target TargetID, role Role) error {
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_trigger(p, C.uint64_t(target), C.uint32_t(role), cerr)
	})
}

// Submit starts a one-shot probe of spec; its outcome arrives as an EventCheck carrying tag.
func (e *Engine) Submit(spec Spec, tag uint64) error {
	cs, err := newCSpec(&spec)
	if err != nil {
		return err
	}
	defer C.prober_spec_free(cs)
	return e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_submit(p, cs, C.uint64_t(tag), cerr)
	})
}

// Published is the current published value of the target's role probe.
func (e *Engine) Published(target TargetID, role Role) (Result, error) {
	var r C.uint32_t
	err := e.call(func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_published(p, C.uint64_t(target), C.uint32_t(role), &r, cerr)
	})
	return Result(r), err
}

// InFlight is the number of probes running right now (periodic and one-shot); 0 after Close.
func (e *Engine) InFlight() int {
	n := 0
	_ = e.call(func(p *C.prober_engine, _ *C.gp_err) C.prober_status {
		n = int(C.prober_engine_in_flight(p))
		return C.PROBER_OK
	})
	return n
}

// call runs f with exclusive use of the engine, interrupting the driving goroutine's wait.
func (e *Engine) call(f func(*C.prober_engine, *C.gp_err) C.prober_status) error {
	c := e.c
	if err := c.acquire(); err != nil {
		return err
	}
	maybeGC()
	var cerr C.gp_err
	rc := f(c.ptr, &cerr)
	c.release()
	runtime.KeepAlive(e)
	if rc != C.PROBER_OK {
		return newError(rc, &cerr)
	}
	return nil
}

// wake interrupts the driving goroutine's prober_engine_wait (or makes the next one return at
// once). prober_engine_wakeup is the one call any thread may make while the engine lives.
func (c *engineCore) wake() {
	c.life.RLock()
	if c.ptr != nil {
		C.prober_engine_wakeup(c.ptr)
	}
	c.life.RUnlock()
}

func (c *engineCore) acquire() error {
	c.want.Add(1)
	c.wake()
	c.mu.Lock()
	c.want.Add(-1)
	if c.ptr == nil {
		c.cond.Broadcast()
		c.mu.Unlock()
		return ErrClosed
	}
	return nil
}

func (c *engineCore) release() {
	c.cond.Broadcast()
	c.mu.Unlock()
}

// loop drives the engine: one cgo call per turn waits (at most waitSlice) and drains up to
// drainCap events, which are copied out before the next turn invalidates their views.
func (c *engineCore) loop() {
	defer close(c.done)
	defer close(c.events)
	batch := make([]Event, 0, drainCap)
	buf := unsafe.Slice(c.buf, drainCap)
	for {
		c.mu.Lock()
		if c.want.Load() > 0 && !c.closing.Load() {
			// Let the waiting methods in; they have already called wakeup, so the wait below
			// returns at once if one more arrives meanwhile.
			c.cond.Wait()
		}
		if c.closing.Load() {
			c.mu.Unlock()
			return
		}
		if c.hasRemoved.Load() {
			// Removals so far happened before this drain: the engine drops their events.
			c.rmu.Lock()
			clear(c.removed)
			c.hasRemoved.Store(false)
			c.rmu.Unlock()
		}
		var rc C.prober_status
		var cerr C.gp_err
		n := int(C.gp_engine_turn(c.ptr, waitSlice, c.buf, drainCap, &rc, &cerr))
		batch = batch[:0]
		for i := range buf[:n] {
			batch = append(batch, eventOf(&buf[i]))
		}
		c.mu.Unlock()
		if rc != C.PROBER_OK {
			err := newError(rc, &cerr).(*Error)
			c.err.Store(err)
			return
		}
		for _, ev := range batch {
			if c.hasRemoved.Load() && ev.Kind != EventCheck && c.isRemoved(ev.Target) {
				continue
			}
			select {
			case c.events <- ev:
			case <-c.quit:
				return
			}
		}
	}
}

func (c *engineCore) isRemoved(t TargetID) bool {
	c.rmu.Lock()
	_, ok := c.removed[t]
	c.rmu.Unlock()
	return ok
}

// eventOf copies a drained event, views included.
func eventOf(ev *C.prober_event) Event {
	out := Event{
		Kind:       EventKind(ev.kind),
		Target:     TargetID(ev.target),
		Role:       Role(ev.role),
		Tag:        uint64(ev.tag),
		Result:     Result(ev.result),
		HasOutcome: bool(ev.has_outcome),
		Late:       time.Duration(ev.late_us) * time.Microsecond,
	}
	if out.HasOutcome {
		out.Outcome = outcomeOfEvent(ev)
	}
	return out
}

// close stops the driving goroutine and frees the engine; idempotent.
func (c *engineCore) close() {
	c.once.Do(func() {
		c.closing.Store(true)
		close(c.quit)
		c.wake()
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
		<-c.done
		c.life.Lock()
		c.mu.Lock()
		C.prober_engine_free(c.ptr)
		c.ptr = nil
		C.free(unsafe.Pointer(c.buf))
		c.buf = nil
		c.mu.Unlock()
		c.life.Unlock()
	})
}
