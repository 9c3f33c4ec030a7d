//go:build debug

package prober

import "runtime"

// maybeGC forces a collection (debug builds), so that cleanup and KeepAlive bugs surface.
func maybeGC() { runtime.GC() }
