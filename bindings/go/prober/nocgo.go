//go:build !cgo

package prober

// The package links libprober, a C library, through cgo. Without cgo (CGO_ENABLED=0, which is
// the default when cross-compiling) none of its other files is compiled, and this one makes
// the build fail with a single error that names the fix:
//
//	undefined: prober_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
const _ = prober_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler
