//go:build cgo && debug

package prober

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
)

// maybeGC forces a collection (debug builds), so that reachability bugs surface.
func maybeGC() { runtime.GC() }

// open holds every engine made by NewEngine and not closed yet, with the stack that made it
// (debug builds): OpenEngines lists them for a leak check at the end of a test run.
var open struct {
	mu sync.Mutex
	m  map[*engineCore]string
}

// trackLeak records e as open and, should the collector find it unreachable before Close,
// reports it on standard error. The engine is not closed: its goroutine still owns it (and
// its Events channel may still be in use).
func trackLeak(e *Engine) {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	var b strings.Builder
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
	stack := b.String()
	open.mu.Lock()
	if open.m == nil {
		open.m = make(map[*engineCore]string)
	}
	open.m[e.c] = stack
	open.mu.Unlock()
	runtime.AddCleanup(e, func(c *engineCore) {
		c.qmu.Lock()
		leaked := !c.closed && c.leakCheck
		c.qmu.Unlock()
		if leaked {
			fmt.Fprintf(os.Stderr, "prober: an Engine was dropped without Close; it keeps "+
				"running. Made by:\n%s", stack)
		}
	}, e.c)
}

// untrack forgets a closed engine.
func untrack(c *engineCore) {
	open.mu.Lock()
	delete(open.m, c)
	open.mu.Unlock()
}

// openEngines is the stacks that made the engines still open (leak-checked ones only).
func openEngines() []string {
	open.mu.Lock()
	defer open.mu.Unlock()
	var out []string
	for c, stack := range open.m {
		c.qmu.Lock()
		if c.leakCheck {
			out = append(out, stack)
		}
		c.qmu.Unlock()
	}
	return out
}
