//go:build cgo

package prober

// TB is the part of testing.TB that NewTestEngine uses (the package does not import testing).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewTestEngine makes an engine for a test and closes it through t.Cleanup when the test
// ends; a failure to make it fails the test.
func NewTestEngine(t TB, opts ...EngineOption) *Engine {
	t.Helper()
	e, err := NewEngine(opts...)
	if err != nil {
		t.Fatalf("prober.NewEngine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}
