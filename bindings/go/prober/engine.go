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
// #cgo noescape gp_engine_stats
// #cgo nocallback gp_engine_stats
import "C"

import (
	"context"
	"fmt"
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
	// Err is set only on EventCheck, in two cases (Result is then Unknown): the Submit's
	// context ended first (an error wrapping ctx.Err(); the run was cancelled, Outcome.Reason
	// is ReasonCancelled), or the engine refused the spec after Submit had queued it (an
	// *Error; not expected for any valid spec).
	Err error
}

// EngineOption configures NewEngine.
type EngineOption func(*engineConfig)

type engineConfig struct {
	everyRun bool
	noReuse  bool
	buffer   int
	threads  int
}

// WithEveryRun also reports an EventRun for every worker run (for hosts that log or export
// metrics). Run events that the host does not receive in time are dropped oldest-first and
// counted (Stats.DroppedEvents); see Events.
func WithEveryRun() EngineOption { return func(c *engineConfig) { c.everyRun = true } }

// WithoutSocketReuse makes the engine close every TCP socket after its probe. By default an
// engine keeps up to 64 disconnected sockets per address family and reuses them for later TCP
// and HTTP probes: each probe is still a new connection ending with RST, and the node saves
// making and freeing a socket per probe (PROBER_ENGINE_NO_SOCKET_REUSE in the C API). Use it
// when every descriptor of the process must be accounted for.
func WithoutSocketReuse() EngineOption { return func(c *engineConfig) { c.noReuse = true } }

// WithThreads runs the engine's probes on n engine threads of the library's instead of the
// driving goroutine's calls (default 1: today's engine, no thread started), for loads that
// one core cannot carry (TLS handshakes, many short periods): targets are spread over the n
// engines, one-shot checks go to them in turn, and every method, event and Stats counter (a
// sum over the engines) works as with one. The events of one target come in order; those of
// targets on different engines may interleave. n from 1 to 256 (PROBER_ENGINE_MAX_THREADS);
// NewEngine refuses anything else with StatusInvalid. Should an engine thread fail (a panic in
// the engine's own bookkeeping), the Engine fails as a one-thread engine does on a panic (see
// Err). This is prober_engine_new_with_threads in the C API.
func WithThreads(n int) EngineOption { return func(c *engineConfig) { c.threads = n } }

// WithEventBuffer sets the capacity of the Events channel (default 1024; 0 makes it
// unbuffered). It does not limit what the engine keeps for a slow receiver: see Events.
func WithEventBuffer(n int) EngineOption {
	return func(c *engineConfig) {
		if n >= 0 {
			c.buffer = n
		}
	}
}

// Engine runs periodic probe workers (targets with startup, readiness and liveness probes)
// and one-shot probes (Check, Submit) on one libprober engine, driven by one goroutine that
// delivers the engine's events on the Events channel.
//
// An Engine is safe for concurrent use. Close it when done: Close cancels probes in flight
// (commands killed and reaped), stops the goroutine and closes the Events channel. The
// goroutine owns the engine until Close: an Engine that is dropped without Close keeps
// running (its Events channel may still be in use) and leaks. Build with -tags debug to have
// such engines reported when the garbage collector finds them, or use NewTestEngine in tests.
//
// One goroutine drives the engine. Each turn is one non-blocking cgo call that starts the
// queued Submits, processes ready I/O and due timers, and hands over as many events as the
// Events channel has room for (at most 256). When there is nothing to do it sleeps in a cgo
// call that polls the engine's descriptor (until I/O, the next timer, or a wake-up: the
// descriptor becomes readable by itself when a timer falls due) without holding the engine,
// so the methods never wait for a sleeping goroutine: they take the engine between two
// turns. Submit only queues its spec and wakes a sleeping goroutine once per batch.
//
// The methods of a nil *Engine return an error (errors.Is(err, ErrClosed)) instead of
// panicking.
type Engine struct {
	c *engineCore
}

// Checker runs one probe. *Engine implements it, and CheckerFunc(Check) is the package-level
// one: code that runs probes can depend on a Checker and be tested with a fake.
type Checker interface {
	Check(ctx context.Context, spec Spec) (Outcome, error)
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(ctx context.Context, spec Spec) (Outcome, error)

// Check calls f.
func (f CheckerFunc) Check(ctx context.Context, spec Spec) (Outcome, error) { return f(ctx, spec) }

var _ Checker = (*Engine)(nil)

// drainCap is how many events one turn may hand over (GP_DRAIN_CAP).
const drainCap = C.GP_DRAIN_CAP

// pendingCheck is a one-shot probe the engine runs for Submit or Check, by the engine tag the
// package gave it (the caller's tags may repeat; the engine's are unique).
type pendingCheck struct {
	// tag is Submit's tag.
	tag uint64
	// w receives Check's result (nil for Submit).
	w chan checkResult
	// stop ends the context.AfterFunc that cancels the probe (nil without one).
	stop func() bool
	// err is set when the context ended first: the probe's event carries it.
	err error
}

type checkResult struct {
	out Outcome
	err error
}

// engineCore is everything the driving goroutine needs; the goroutine keeps it (and so the
// engine) alive until Close.
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
	// next turn), shared itself, the one-shot probes (pend, nextTag, synth), and the hand-off
	// between wakers and the sleeper.
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
	// pend: the one-shot probes queued or running, by engine tag.
	pend    map[uint64]pendingCheck
	nextTag uint64
	// synth: check events made here for queued Submits cancelled before they started;
	// delivered by the next turn.
	synth []Event

	events chan Event
	// park hands the driving goroutine's next event to the sender goroutine when the Events
	// channel is full; parked is true from then until the sender has delivered it. The
	// driving goroutine drains nothing meanwhile: the engine keeps the events, under its
	// policy for a host that is behind.
	park   chan Event
	parked atomic.Bool
	quit   chan struct{}
	// done is closed when both goroutines have returned and Events is closed.
	done chan struct{}
	once sync.Once
	err  atomic.Pointer[failedError]

	// removed holds targets removed since the driving goroutine last had no undelivered
	// events: events about them that it holds are dropped, so that none is produced after
	// Remove returns (the engine itself drops those it still holds).
	rmu        sync.Mutex
	removed    map[TargetID]struct{}
	hasRemoved atomic.Bool

	// leakCheck: report this engine if it is collected without Close (debug builds).
	leakCheck bool

	// hr: the functions of host-run probes and their runs in progress (hostrun.go).
	hr hostRuns
}

// NewEngine creates an engine and starts the goroutine that drives it.
func NewEngine(opts ...EngineOption) (*Engine, error) {
	e, err := newEngine(opts...)
	if err != nil {
		return nil, err
	}
	e.c.qmu.Lock()
	e.c.leakCheck = true
	e.c.qmu.Unlock()
	trackLeak(e)
	return e, nil
}

func newEngine(opts ...EngineOption) (*Engine, error) {
	cfg := engineConfig{buffer: 1024, threads: 1}
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
	// Out of uint32's range: refused by the library as any count over its maximum.
	threads := C.uint32_t(0xffffffff)
	if cfg.threads >= 0 && uint64(cfg.threads) <= 0xffffffff {
		threads = C.uint32_t(cfg.threads)
	}
	if rc := C.gp_engine_new(flags, threads, &ptr, &cerr); rc != C.PROBER_OK {
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
		pend:   make(map[uint64]pendingCheck),
		events: make(chan Event, cfg.buffer),
		park:   make(chan Event),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go c.loop()
	go c.send()
	return &Engine{c: c}, nil
}

// nilEngine is the error of every method called on a nil *Engine.
type nilEngine struct{}

func (nilEngine) Error() string        { return "prober: nil *Engine (make one with NewEngine)" }
func (nilEngine) Is(target error) bool { return target == ErrClosed }

// failedError is the error of an engine whose driving goroutine stopped on a library error:
// errors.Is(err, ErrClosed) holds, and errors.As finds the *Error.
type failedError struct{ cause *Error }

func (f *failedError) Error() string   { return "prober: engine failed: " + f.cause.text() }
func (f *failedError) Unwrap() []error { return []error{ErrClosed, f.cause} }

// closedChan is what Events gives for a nil *Engine.
var closedChan = func() chan Event { c := make(chan Event); close(c); return c }()

// Events is the channel of the engine's events, closed after Close (or when the engine
// fails: see Err).
//
// Probing and Published never wait for the receiver. While the channel is full, the engine
// keeps the events (Submits still start, workers still run) under one policy: state changes
// are coalesced to the latest per (target, role), so a receiver that catches up gets each
// worker's latest value (earlier values already in the channel come first); run events
// (WithEveryRun) are dropped oldest-first past 1024 waiting and counted
// (Stats.DroppedEvents); check events, one per Submit, are never dropped. Memory stays
// bounded whatever the receiver does.
//
// A nil *Engine gives a closed channel.
func (e *Engine) Events() <-chan Event {
	if e == nil {
		return closedChan
	}
	return e.c.events
}

// Err reports why the driving goroutine stopped early: an error for which
// errors.Is(err, ErrClosed) holds and errors.As finds the library's *Error; the engine is then
// unusable and Events is closed once drained. nil while the engine runs and after a plain
// Close.
func (e *Engine) Err() error {
	if e == nil {
		return nilEngine{}
	}
	if err := e.c.err.Load(); err != nil {
		return err
	}
	return nil
}

// Close cancels every probe in flight (sockets closed, commands killed and reaped), drops the
// Submits not started yet, stops the driving goroutine, frees the engine and closes the Events
// channel; undelivered events are dropped, and Checks waiting return ErrClosed. It is safe to
// call more than once and from any goroutine; it returns nil (an error only for a nil
// *Engine).
func (e *Engine) Close() error {
	if e == nil {
		return nilEngine{}
	}
	e.c.close()
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
	if err := role.check(); err != nil {
		return err
	}
	cs, err := newCSpec(&spec)
	if err != nil {
		return err
	}
	defer C.prober_spec_free(cs)
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		rc := C.gp_engine_set_probe(p, C.uint64_t(target), C.uint32_t(role), cs, cerr)
		if rc == C.PROBER_OK {
			// Under mu, before the driving goroutine can see the probe's first announcement.
			e.c.hr.set(target, role, &spec)
		}
		return rc
	})
}

// ClearProbe removes the target's probe for role; a run in flight is cancelled.
func (e *Engine) ClearProbe(target TargetID, role Role) error {
	if err := role.check(); err != nil {
		return err
	}
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		rc := C.gp_engine_clear_probe(p, C.uint64_t(target), C.uint32_t(role), cerr)
		if rc == C.PROBER_OK {
			e.c.hr.clear(target, role)
		}
		return rc
	})
}

// Restart is the kubelet's "new container ID": every probe of the target goes back to its
// initial value, holds are lifted, runs in flight are cancelled, initial delays and startup
// gating start over.
func (e *Engine) Restart(target TargetID) error {
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		rc := C.gp_engine_restart_target(p, C.uint64_t(target), cerr)
		if rc == C.PROBER_OK {
			e.c.hr.cancelRuns(target, 0, true)
		}
		return rc
	})
}

// Remove removes a target: its probes in flight are cancelled (commands killed and reaped)
// and the engine produces no event about it after Remove returns (its undelivered events
// about it are dropped). Events already in the channel's buffer (WithEventBuffer) or being
// handed to a receiver when Remove is called can still be received: a receiver that must not
// see them after Remove can drop events about targets it has removed.
func (e *Engine) Remove(target TargetID) error {
	if e == nil {
		return nilEngine{}
	}
	c := e.c
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		rc := C.gp_engine_remove_target(p, C.uint64_t(target), cerr)
		if rc == C.PROBER_OK {
			c.hr.remove(target)
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
	if err := role.check(); err != nil {
		return err
	}
	return e.call(true, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_trigger(p, C.uint64_t(target), C.uint32_t(role), cerr)
	})
}

// Submit starts a one-shot probe of spec; its outcome arrives as the EventCheck carrying tag.
//
// Submit converts and validates spec at once: an invalid spec is an *Error returned by
// Submit (errors.Is(err, ErrInvalidSpec)), and nothing is queued. A valid spec is queued and
// Submit returns without waiting for the engine: the driving goroutine starts every queued
// spec at the beginning of its next turn (woken at most once per batch of Submits). Submit
// returns ErrClosed after Close, and an error that wraps ErrClosed after the engine failed.
//
// When ctx ends before the probe finishes, the probe is cancelled at once (socket closed,
// command and its process group killed and reaped) and its EventCheck arrives with Result
// Unknown, Outcome.Reason ReasonCancelled and Err wrapping ctx.Err(). Every successful Submit
// gets exactly one EventCheck unless the engine is closed or fails first.
func (e *Engine) Submit(ctx context.Context, spec Spec, tag uint64) error {
	if e == nil {
		return nilEngine{}
	}
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	cs, err := newCSpec(&spec)
	if err != nil {
		return err
	}
	_, err = e.queue(ctx, cs, tag, nil)
	return err
}

// Check runs spec once on the engine and returns its outcome, with every timing and the
// certificate expiry. A probe that fails is not an error: the failure is in the Outcome. The
// error is an *Error when spec is invalid (errors.Is(err, ErrInvalidSpec)), one that wraps
// ctx.Err() when ctx ends first (the probe is then cancelled at once: socket closed, command
// and its process group killed and reaped), or one that wraps ErrClosed when the engine is
// closed or fails first. Check's probes share the engine's thread with its workers and
// Submits; their events do not appear on Events.
func (e *Engine) Check(ctx context.Context, spec Spec) (Outcome, error) {
	if e == nil {
		return Outcome{}, nilEngine{}
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, cancelled(err)
	}
	cs, err := newCSpec(&spec)
	if err != nil {
		return Outcome{}, err
	}
	w := make(chan checkResult, 1)
	etag, err := e.queue(context.Background(), cs, 0, w)
	if err != nil {
		return Outcome{}, err
	}
	select {
	case r := <-w:
		return r.out, r.err
	case <-ctx.Done():
		e.c.cancelCheck(etag, ctx.Err(), true)
		return Outcome{}, cancelled(ctx.Err())
	}
}

// cancelled wraps a context's error: errors.Is(err, context.Canceled) (or DeadlineExceeded)
// holds.
func cancelled(err error) error { return fmt.Errorf("prober: probe cancelled: %w", err) }

// queue hands cs (owned by the queue from now on, freed on error) to the driving goroutine,
// as the one-shot probe of Submit(tag) or of Check (w); returns its engine tag.
func (e *Engine) queue(ctx context.Context, cs *C.prober_spec, tag uint64, w chan checkResult) (uint64, error) {
	c := e.c
	maybeGC()
	c.qmu.Lock()
	if err := c.stoppedErr(); err != nil {
		c.qmu.Unlock()
		C.prober_spec_free(cs)
		return 0, err
	}
	// The queue is C memory; appending is plain stores, a cgo call only to grow it.
	q := &c.l.q[c.shared]
	if q.n == q.cap && C.gp_subq_grow(q) != 0 {
		c.qmu.Unlock()
		C.prober_spec_free(cs)
		return 0, &Error{Code: StatusIO, Msg: "out of memory"}
	}
	etag := c.nextTag
	c.nextTag++
	unsafe.Slice(q.v, q.cap)[q.n] = C.gp_sub{spec: cs, tag: C.uint64_t(etag)}
	q.n++
	c.pend[etag] = pendingCheck{tag: tag, w: w}
	if c.sleeping {
		c.interrupt()
	}
	c.qmu.Unlock()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { c.cancelCheck(etag, ctx.Err(), false) })
		c.qmu.Lock()
		if p, ok := c.pend[etag]; ok {
			p.stop = stop
			c.pend[etag] = p
		} else {
			stop()
		}
		c.qmu.Unlock()
	}
	return etag, nil
}

// stoppedErr is the error of a method called after Close or after the engine failed; nil
// while the engine runs. Under qmu.
func (c *engineCore) stoppedErr() error {
	if err := c.err.Load(); err != nil {
		return err
	}
	if c.closed || c.stopped {
		return ErrClosed
	}
	return nil
}

// cancelCheck cancels the one-shot probe etag if it has not finished: a queued one is taken
// off the queue and reported here, a running one is cancelled by the engine, which reports
// it. Its event carries cause (wrapped); with forget (Check, which returns at once), nothing
// is reported.
func (c *engineCore) cancelCheck(etag uint64, cause error, forget bool) {
	// Under mu the probe is either still in the shared queue or in the engine: the driving
	// goroutine holds mu from taking the queue to starting its probes.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ptr == nil {
		return
	}
	c.qmu.Lock()
	p, ok := c.pend[etag]
	if !ok {
		c.qmu.Unlock()
		return // finished: its event is on its way
	}
	if forget {
		delete(c.pend, etag)
	} else {
		p.err = cancelled(cause)
		c.pend[etag] = p
	}
	q := &c.l.q[c.shared]
	v := unsafe.Slice(q.v, q.cap)
	queued := false
	for i := range int(q.n) {
		if uint64(v[i].tag) == etag {
			C.prober_spec_free(v[i].spec)
			copy(v[i:q.n], v[i+1:q.n])
			q.n--
			queued = true
			break
		}
	}
	if queued && !forget {
		c.synth = append(c.synth, cancelledEvent(etag))
	}
	c.kick = true
	if c.sleeping {
		c.interrupt()
	}
	c.qmu.Unlock()
	if !queued {
		C.prober_engine_cancel_check(c.ptr, C.uint64_t(etag))
	}
}

// cancelledEvent is the EventCheck of a probe cancelled before it started.
func cancelledEvent(etag uint64) Event {
	return Event{
		Kind:       EventCheck,
		Tag:        etag,
		Result:     Unknown,
		HasOutcome: true,
		Outcome: Outcome{Result: Unknown, Reason: ReasonCancelled,
			Message: "probe cancelled by the host", ExitCode: -1, Timings: unreported(0)},
	}
}

// Published is the current published value of the target's role probe. It follows the
// probes whether or not anyone receives from Events.
func (e *Engine) Published(target TargetID, role Role) (Result, error) {
	if err := role.check(); err != nil {
		return Unknown, err
	}
	var r C.uint32_t
	err := e.call(false, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		return C.gp_engine_published(p, C.uint64_t(target), C.uint32_t(role), &r, cerr)
	})
	if err != nil {
		return Unknown, err
	}
	return Result(r), nil
}

// Stats are an engine's counters, from Engine.Stats.
type Stats struct {
	// Targets is how many targets the engine has.
	Targets int
	// InFlight is how many probes run now, periodic and one-shot (Submits and Checks queued
	// but not started yet included).
	InFlight int
	// PendingEvents is how many events wait in the engine for room in the Events channel.
	PendingEvents int
	// DroppedEvents counts the EventRuns dropped because the receiver was behind (see
	// Events); it never decreases.
	DroppedEvents uint64
	// KeptConnections is how many idle kept-alive HTTP and gRPC connections (Spec.KeepAlive) the
	// engine holds now.
	KeptConnections int
	// PooledSockets is how many disconnected TCP sockets the engine keeps for reuse now
	// (see WithoutSocketReuse).
	PooledSockets int
}

// Stats reports the engine's counters.
func (e *Engine) Stats() (Stats, error) {
	if e == nil {
		return Stats{}, nilEngine{}
	}
	c := e.c
	var st C.prober_engine_stats
	queued := 0
	err := e.call(false, func(p *C.prober_engine, cerr *C.gp_err) C.prober_status {
		// Under mu, which the driving goroutine holds from taking the queue to submitting
		// it: every Submit is counted once, queued or started.
		c.qmu.Lock()
		queued = int(c.l.q[c.shared].n)
		c.qmu.Unlock()
		return C.gp_engine_stats(p, &st, cerr)
	})
	if err != nil {
		return Stats{}, err
	}
	return Stats{
		Targets:         int(st.targets),
		InFlight:        int(st.in_flight) + queued,
		PendingEvents:   int(st.pending_events),
		DroppedEvents:   uint64(st.dropped_events),
		KeptConnections: int(st.kept_connections),
		PooledSockets:   int(st.pooled_sockets),
	}, nil
}

// call runs f with exclusive use of the engine, between two turns of the driving goroutine.
// With wake, the driving goroutine then turns again (f may have added timers or events).
func (e *Engine) call(wake bool, f func(*C.prober_engine, *C.gp_err) C.prober_status) error {
	if e == nil {
		return nilEngine{}
	}
	c := e.c
	c.mu.Lock()
	if c.ptr == nil {
		c.mu.Unlock()
		return ErrClosed
	}
	c.qmu.Lock()
	err := c.stoppedErr()
	c.qmu.Unlock()
	if err != nil {
		c.mu.Unlock()
		return err
	}
	maybeGC()
	var cerr C.gp_err
	rc := f(c.ptr, &cerr)
	c.mu.Unlock()
	if wake {
		c.wake()
	}
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
		// Nothing will finish the one-shot probes left: their Checks return the engine's
		// error, their Submits get no event.
		err := c.stoppedErr()
		for etag, p := range c.pend {
			if p.stop != nil {
				p.stop()
			}
			if p.w != nil {
				p.w <- checkResult{err: err}
			}
			delete(c.pend, etag)
		}
		c.qmu.Unlock()
		close(c.park)
	}()
	for d.turn() {
		d.sleep()
	}
}

// send delivers the events that did not fit in the Events channel, one at a time, and wakes
// the driving goroutine after each; it closes Events when the driving goroutine has stopped.
func (c *engineCore) send() {
	defer func() {
		close(c.events)
		close(c.done)
	}()
	for ev := range c.park {
		select {
		case c.events <- ev:
		case <-c.quit:
			continue // closing: the rest is dropped
		}
		c.parked.Store(false)
		c.wake()
	}
}

// driver is the driving goroutine's own state.
type driver struct {
	c *engineCore
	// batch[next:] are the events taken from the engine and not delivered yet.
	batch []Event
	next  int
}

// turn turns the engine and delivers the events until there is nothing to do now; false when
// the loop must stop.
func (d *driver) turn() bool {
	c := d.c
	l := c.l
	for {
		if !d.deliver() {
			return false
		}
		// Take from the engine only what the channel has room for now (at least one, which
		// the sender goroutine delivers when room comes); the engine keeps the rest.
		room := 0
		if d.next == len(d.batch) && !c.parked.Load() {
			room = max(1, min(drainCap, cap(c.events)-len(c.events)))
		}
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
		synth := len(c.synth)
		c.qmu.Unlock()
		if d.next == len(d.batch) && c.hasRemoved.Load() {
			// Removals so far happened before this drain and after every event held here was
			// delivered: the engine drops their events.
			c.rmu.Lock()
			clear(c.removed)
			c.hasRemoved.Store(false)
			c.rmu.Unlock()
		}
		q := &l.q[mine]
		refused := int(C.gp_loop_turn(l, q, C.size_t(room)))
		first := len(d.batch)
		for i := range refused {
			d.batch = append(d.batch, refusedEvent(&unsafe.Slice(q.v, refused)[i]))
		}
		for i := range int(l.n) {
			if l.ev[i].kind == C.PROBER_EVENT_HOST_RUN {
				c.startHostRun(&l.ev[i]) // performed here, never delivered on Events
				continue
			}
			d.batch = append(d.batch, eventWithFacts(l, i))
		}
		handed := false
		if refused > 0 || synth > 0 || d.hasCheck(first) {
			handed = d.finishChecks(first)
		}
		failed := l.rc != C.PROBER_OK
		if failed {
			c.err.Store(&failedError{cause: newError(l.rc, &l.err).(*Error)})
		}
		timeout := int64(l.timeout_ms)
		c.mu.Unlock()
		delivered := len(d.batch) > first || handed
		if !d.deliver() || failed {
			return false
		}
		if delivered {
			// Let the receivers (and Check's callers) run before the next turn: what they
			// Submit in response is then started by that one turn, not trickled over several
			// or left for a wake-up from sleep.
			runtime.Gosched()
		}
		if timeout != 0 {
			return true
		}
	}
}

func (d *driver) hasCheck(first int) bool {
	for _, ev := range d.batch[first:] {
		if ev.Kind == EventCheck {
			return true
		}
	}
	return false
}

// finishChecks takes the check events made here (synth), and matches the check events of
// batch[first:] with their one-shot probes: Check's go to its caller and leave the batch,
// Submit's get the caller's tag back (and the context's error). Events of probes nobody waits
// for any more are dropped. True when a result went to a Check's caller.
func (d *driver) finishChecks(first int) (handed bool) {
	c := d.c
	c.qmu.Lock()
	d.batch = append(d.batch, c.synth...)
	clear(c.synth)
	c.synth = c.synth[:0]
	kept := first
	for _, ev := range d.batch[first:] {
		if ev.Kind == EventCheck {
			p, ok := c.pend[ev.Tag]
			if !ok {
				continue
			}
			delete(c.pend, ev.Tag)
			if p.stop != nil {
				p.stop()
			}
			if p.err != nil {
				ev.Err = p.err
			}
			if p.w != nil {
				p.w <- checkResult{out: ev.Outcome, err: ev.Err}
				handed = true
				continue
			}
			ev.Tag = p.tag
		}
		d.batch[kept] = ev
		kept++
	}
	clear(d.batch[kept:])
	d.batch = d.batch[:kept]
	c.qmu.Unlock()
	return handed
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

// deliver sends the undelivered events on the Events channel without ever blocking: when the
// channel is full, the next event goes to the sender goroutine, which waits for room and then
// wakes the driving goroutine. False when Close interrupted it.
func (d *driver) deliver() bool {
	c := d.c
	for d.next < len(d.batch) {
		if c.parked.Load() {
			return true // the sender has the event before these: they wait for it
		}
		ev := d.batch[d.next]
		if c.hasRemoved.Load() && ev.Kind != EventCheck && c.isRemoved(ev.Target) {
			d.next++
			continue
		}
		select {
		case c.events <- ev:
			d.next++
			continue
		default:
		}
		c.parked.Store(true)
		select {
		case c.park <- ev:
			d.next++
		case <-c.quit:
			return false
		}
	}
	clear(d.batch) // drop references to outcomes already handed over
	d.batch = d.batch[:0]
	d.next = 0
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
		untrack(c)
		c.qmu.Lock()
		c.closed = true
		if !c.stopped {
			c.interrupt()
		}
		c.qmu.Unlock()
		close(c.quit)
		c.hr.cancelAll()
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
