//go:build !debug

package prober

// maybeGC is a no-op; build with -tags debug to force a collection before every engine call,
// which makes a missing runtime.KeepAlive or a premature cleanup show up in tests.
func maybeGC() {}
