package prober

// #include "shim.h"
// /* These helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_loop_turn
// #cgo nocallback gp_loop_turn
// #cgo noescape gp_subq_grow
// #cgo nocallback gp_subq_grow
// #cgo noescape gp_engine_new
// #cgo nocallback gp_engine_new
// #cgo noescape gp_engine_add_target
// #cgo nocallback gp_engine_add_target
// #cgo noescape gp_engine_set_probe
// #cgo nocallback gp_engine_set_probe
// #cgo noescape gp_engine_clear_probe
// #cgo nocallback gp_engine_clear_probe
// #cgo noescape gp_engine_restart_target
// #cgo nocallback gp_engine_restart_target
// #cgo noescape gp_engine_remove_target
// #cgo nocallback gp_engine_remove_target
// #cgo noescape gp_engine_trigger
// #cgo nocallback gp_engine_trigger
// #cgo noescape gp_engine_published
// #cgo nocallback gp_engine_published
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

// String is the kind's name ("state", "check", "run"), or "EventKind(n)" for a number this
// package does not define.
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
	// Kind says which of the three events this is, and so which fields are set.
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
	// Err is set only on the EventCheck of a Submit that the engine refused after Submit had
	// queued it (an *Error; Result is then Unknown). Not expected for any valid spec.
	Err error
}

// EngineOption configures NewEngine.
type EngineOption func(*engineConfig)

type engineConfig struct {
	everyRun bool
	noReuse  bool
	buffer   int
}

// WithEveryRun also reports an EventRun for every worker run (for hosts that log or export
// metrics).
func WithEveryRun() EngineOption { return func(c *engineConfig) { c.everyRun = true } }

// WithoutSocketReuse makes the engine close every TCP socket after its probe. By default an
// engine keeps up to 64 disconnected sockets per address family and reuses them for later TCP
// and HTTP probes: each probe is still a new connection ending with RST, and the node saves
// making and freeing a socket per probe (PROBER_ENGINE_NO_SOCKET_REUSE in the C API). Use it
// when every descriptor of the process must be accounted for.
func WithoutSocketReuse() EngineOption { return func(c *engineConfig) { c.noReuse = true } }

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
//
// One goroutine drives the engine. Each turn is one non-blocking cgo call that starts the
// queued Submits, processes ready I/O and due timers, and hands over up to 256 events. When
// there is nothing to do it sleeps in a cgo call that polls the engine's descriptor (until
// I/O, the next timer, or a wake-up) without holding the engine, so the methods never wait
// for a sleeping goroutine: they take the engine between two turns. Submit only queues its
// spec and wakes a sleeping goroutine once per batch.
type Engine struct {
	c       *engineCore
	cleanup runtime.Cleanup
}

// drainCap is how many events one turn may hand over (GP_DRAIN_CAP).
const drainCap = C.GP_DRAIN_CAP

// engineCore is everything the driving goroutine needs; it does not point back to the Engine,
// so an abandoned Engine can be collected and its cleanup can close the core.
type engineCore struct {
	// mu is held for every call on ptr except prober_engine_wakeup: by the driving goroutine
	// during its turn (one non-blocking cgo call) and by the methods. Nobody holds it while
	// sleeping.
	mu  sync.Mutex
	ptr *C.prober_engine // nil once freed (under mu and qmu)

	// l is the driving goroutine's C state (shim.h, gp_loop): the two Submit queues, the
	// engine's events of the last turn and how long it may sleep. Freed by close.
	l *C.gp_loop

	// qmu guards l.q[shared] (the queued Submits: C specs owned by the queue, started by the
	// next turn), shared itself, and the hand-off between wakers and the sleeper.
	qmu    sync.Mutex
	shared int
	// kick: a method changed the engine (new timers, events to drain) since the current turn
	// began; the driving goroutine turns again instead of sleeping.
	kick bool
	// sleeping: the driving goroutine sleeps (or is about to) in gp_loop_sleep; the first
	// waker clears it and calls prober_engine_wakeup, under qmu, which close holds to free
	// the engine.
	sleeping bool
	// closed: Close has begun. stopped: the driving goroutine has returned (closed, or the
	// engine failed: err says why).
	closed, stopped bool

	events chan Event
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
	err    atomic.Pointer[Error]

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
	if cfg.noReuse {
		flags |= C.PROBER_ENGINE_NO_SOCKET_REUSE
	}
	var cerr C.gp_err
	var ptr *C.prober_engine
	if rc := C.gp_engine_new(flags, &ptr, &cerr); rc != C.PROBER_OK {
		return nil, newError(rc, &cerr)
	}
	l := (*C.gp_loop)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gp_loop{}))))
	if l == nil {
		C.prober_engine_free(ptr)
		return nil, &Error{Code: StatusIO, Msg: "out of memory"}
	}
	C.gp_loop_init(l, ptr)
	c := &engineCore{
		ptr:    ptr,
		l:      l,
		events: make(chan Event, cfg.buffer),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go c.loop()
	e := &Engine{c: c}
	e.cleanup = runtime.AddCleanup(e, func(c *engineCore) { c.close() }, c)
	return e, nil
}

// Events is the channel of the engine's events, closed by Close (or when the engine fails:
// see Err). Receive from it: while it is full, the engine is not driven (probes in flight
// stall, periodic runs wait, queued Submits are not started).
func (e *Engine) Events() <-chan Event { return e.c.events }

// Err reports why the driving goroutine stopped early (an *Error; the engine is then
// unusable and Events is closed), or nil.
func (e *Engine) Err() error {
	if err := e.c.err.Load(); err != nil {
		return err
	}
	return nil
}

// Close cancels every probe in flight (sockets closed, commands killed and reaped), drops the
// Submits not started yet, stops the driving goroutine, frees the engine and closes the Events
// channel; undelivered events are dropped. It is safe to call more than once and from any
// goroutine; it always returns nil.
func (e *Engine) Close() error {
	e.cleanup.Stop()
	e.c.close()
	runtime.KeepAlive(e)
	return nil
}

// AddTarget adds a target with no probes.
func (e *Engine) AddTarget() (TargetID, error) {
	var id C.uint64_t
	err := e.call(false, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
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
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_set_probe(p, C.uint64_t(target), C.uint32_t(role), cs, cerr)
	})
}

// ClearProbe removes the target's probe for role; a run in flight is cancelled.
func (e *Engine) ClearProbe(target TargetID, role Role) error {
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_clear_probe(p, C.uint64_t(target), C.uint32_t(role), cerr)
	})
}

// Restart is the kubelet's "new container ID": every probe of the target goes back to its
// initial value, holds are lifted, runs in flight are cancelled, initial delays and startup
// gating start over.
func (e *Engine) Restart(target TargetID) error {
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_restart_target(p, C.uint64_t(target), cerr)
	})
}

// Remove removes a target: its probes in flight are cancelled (commands killed and reaped)
// and no event about it is sent on Events after Remove returns (the engine's undelivered events
// about it are dropped). Events already sitting in the channel's buffer (WithEventBuffer) when
// Remove is called can still be received: a receiver that must not see them after Remove can
// drop events about targets it has removed.
func (e *Engine) Remove(target TargetID) error {
	c := e.c
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
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

// Trigger runs the target's role probe now and restarts its period from this run. While a
// run is in flight, one more run follows right after it. The initial delay, startup gating
// and holds still apply (a trigger during the initial delay runs when the delay ends).
func (e *Engine) Trigger(target TargetID, role Role) error {
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_trigger(p, C.uint64_t(target), C.uint32_t(role), cerr)
	})
}

// Submit starts a one-shot probe of spec; its outcome arrives as an EventCheck carrying tag.
//
// Submit converts and validates spec at once: an invalid spec is an *Error returned by
// Submit, and nothing is queued. A valid spec is queued and Submit returns without waiting
// for the engine: the driving goroutine starts every queued spec at the beginning of its next
// turn (woken at most once per batch of Submits). Submit returns ErrClosed after Close, and
// the engine's error (as Err) when the engine has failed.
//
// A spec that converted cleanly is never refused by the engine; if it ever were (an internal
// error), the refusal arrives as the EventCheck of that tag with Result Unknown and Err set to
// the *Error, so that every successful Submit gets exactly one EventCheck unless the engine
// is closed or fails first.
func (e *Engine) Submit(spec Spec, tag uint64) error {
	cs, err := newCSpec(&spec)
	if err != nil {
		return err
	}
	return e.queue(cs, tag)
}

// queue hands cs (owned by the queue from now on, freed on error) to the driving goroutine.
func (e *Engine) queue(cs *C.prober_spec, tag uint64) error {
	c := e.c
	maybeGC()
	c.qmu.Lock()
	if c.closed || c.stopped {
		c.qmu.Unlock()
		C.prober_spec_free(cs)
		if err := c.err.Load(); err != nil {
			return err
		}
		return ErrClosed
	}
	// The queue is C memory; appending is plain stores, a cgo call only to grow it.
	q := &c.l.q[c.shared]
	if q.n == q.cap && C.gp_subq_grow(q) != 0 {
		c.qmu.Unlock()
		C.prober_spec_free(cs)
		return &Error{Code: StatusIO, Msg: "out of memory"}
	}
	unsafe.Slice(q.v, q.cap)[q.n] = C.gp_sub{spec: cs, tag: C.uint64_t(tag)}
	q.n++
	if c.sleeping {
		c.interrupt()
	}
	c.qmu.Unlock()
	runtime.KeepAlive(e)
	return nil
}

// Published is the current published value of the target's role probe.
func (e *Engine) Published(target TargetID, role Role) (Result, error) {
	var r C.uint32_t
	err := e.call(false, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_published(p, C.uint64_t(target), C.uint32_t(role), &r, cerr)
	})
	return Result(r), err
}

// InFlight is the number of probes running right now (periodic and one-shot, Submits queued
// but not started yet included); 0 after Close.
func (e *Engine) InFlight() int {
	c := e.c
	n := 0
	_ = e.call(false, func(p *C.prober_engine, _ *C.gp_err) C.prober_status {
		// Under mu, which the driving goroutine holds from taking the queue to submitting
		// it: every Submit is counted once, queued or started.
		n = int(C.prober_engine_in_flight(p))
		c.qmu.Lock()
		n += int(c.l.q[c.shared].n)
		c.qmu.Unlock()
		return C.PROBER_OK
	})
	return n
}

// call runs f with exclusive use of the engine, between two turns of the driving goroutine.
// With wake, the driving goroutine then turns again (f may have added timers or events).
func (e *Engine) call(wake bool, f func(*C.prober_engine, *C.gp_err) C.prober_status) error {
	c := e.c
	c.mu.Lock()
	if c.ptr == nil {
		c.mu.Unlock()
		return ErrClosed
	}
	maybeGC()
	var cerr C.gp_err
	rc := f(c.ptr, &cerr)
	c.mu.Unlock()
	if wake {
		c.wake()
	}
	runtime.KeepAlive(e)
	if rc != C.PROBER_OK {
		return newError(rc, &cerr)
	}
	return nil
}

// wake makes the driving goroutine turn again: at once if it sleeps, else before it sleeps.
func (c *engineCore) wake() {
	c.qmu.Lock()
	c.kick = true
	if c.sleeping {
		c.interrupt()
	}
	c.qmu.Unlock()
}

// interrupt ends the driving goroutine's sleep (or makes the next one end at once). Called
// with qmu held and sleeping (or closed) set: the engine is alive.
func (c *engineCore) interrupt() {
	c.sleeping = false
	C.prober_engine_wakeup(c.ptr)
}

// loop drives the engine until Close or an engine failure: turn, deliver the events, and
// sleep when there is nothing to do.
func (c *engineCore) loop() {
	d := &driver{c: c, batch: make([]Event, 0, drainCap)}
	defer func() {
		c.qmu.Lock()
		c.stopped = true
		c.qmu.Unlock()
		close(c.events)
		close(c.done)
	}()
	for d.turn() {
		d.sleep()
	}
}

// driver is the driving goroutine's own state.
type driver struct {
	c     *engineCore
	batch []Event
}

// turn turns the engine and delivers the events until there is nothing to do now; false when
// the loop must stop.
func (d *driver) turn() bool {
	c := d.c
	l := c.l
	for {
		c.mu.Lock()
		c.qmu.Lock()
		if c.closed {
			c.qmu.Unlock()
			c.mu.Unlock()
			return false
		}
		mine := c.shared
		c.shared ^= 1
		c.kick = false
		c.qmu.Unlock()
		if c.hasRemoved.Load() {
			// Removals so far happened before this drain: the engine drops their events.
			c.rmu.Lock()
			clear(c.removed)
			c.hasRemoved.Store(false)
			c.rmu.Unlock()
		}
		q := &l.q[mine]
		refused := int(C.gp_loop_turn(l, q))
		d.batch = d.batch[:0]
		for i := range refused {
			d.batch = append(d.batch, refusedEvent(&unsafe.Slice(q.v, refused)[i]))
		}
		for i := range int(l.n) {
			d.batch = append(d.batch, eventOf(&l.ev[i]))
		}
		failed := l.rc != C.PROBER_OK
		if failed {
			c.err.Store(newError(l.rc, &l.err).(*Error))
		}
		timeout := int64(l.timeout_ms)
		c.mu.Unlock()
		if !d.deliver() || failed {
			return false
		}
		if len(d.batch) > 0 {
			// Let the receivers run before the next turn: what they Submit in response to
			// these events is then started by that one turn, not trickled over several.
			runtime.Gosched()
		}
		if timeout != 0 {
			return true
		}
	}
}

// sleep waits in gp_loop_sleep unless something is queued or a method asked for a turn.
func (d *driver) sleep() {
	c := d.c
	c.qmu.Lock()
	if c.l.q[c.shared].n > 0 || c.kick || c.closed {
		c.qmu.Unlock()
		return
	}
	c.sleeping = true
	c.qmu.Unlock()
	// A wake-up from now on makes the engine's descriptor readable until the next turn, so
	// one that comes before the poll below starts is not lost.
	C.gp_loop_sleep(c.l)
	c.qmu.Lock()
	c.sleeping = false
	c.qmu.Unlock()
}

// deliver sends the batch on the Events channel; false when Close interrupted it.
func (d *driver) deliver() bool {
	c := d.c
	for _, ev := range d.batch {
		if c.hasRemoved.Load() && ev.Kind != EventCheck && c.isRemoved(ev.Target) {
			continue
		}
		select {
		case c.events <- ev:
			continue
		default:
		}
		select {
		case c.events <- ev:
		case <-c.quit:
			return false
		}
	}
	clear(d.batch) // drop references to outcomes already handed over
	return true
}

// refusedEvent is the EventCheck of a queued Submit that the engine refused; it frees the
// refusal's message.
func refusedEvent(s *C.gp_sub) Event {
	msg := ""
	if s.msg != nil {
		msg = C.GoStringN(s.msg, C.int(s.msg_len))
		C.free(unsafe.Pointer(s.msg))
		s.msg = nil
	}
	err := &Error{Code: Status(s.rc), Msg: msg}
	return Event{
		Kind:       EventCheck,
		Tag:        uint64(s.tag),
		Result:     Unknown,
		HasOutcome: true,
		Outcome:    Outcome{Result: Unknown, Message: err.Error(), ExitCode: -1, Timings: unreported(0)},
		Err:        err,
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
		c.qmu.Lock()
		c.closed = true
		if !c.stopped {
			c.interrupt()
		}
		c.qmu.Unlock()
		close(c.quit)
		<-c.done
		c.mu.Lock()
		c.qmu.Lock()
		C.gp_subq_free(&c.l.q[0])
		C.gp_subq_free(&c.l.q[1])
		C.prober_engine_free(c.ptr)
		c.ptr = nil
		C.free(unsafe.Pointer(c.l))
		c.l = nil
		c.qmu.Unlock()
		c.mu.Unlock()
	})
}
