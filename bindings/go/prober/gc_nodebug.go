//go:build cgo && !debug

package prober

// maybeGC is a no-op; build with -tags debug to force a collection before every engine call,
// which makes a missing runtime.KeepAlive or a reachability bug show up in tests.
func maybeGC() {}

// trackLeak does nothing; with -tags debug it records the engine for leak checks.
func trackLeak(*Engine) {}

func untrack(*engineCore) {}

// openEngines is empty; with -tags debug it lists the engines not closed yet.
func openEngines() []string { return nil }
