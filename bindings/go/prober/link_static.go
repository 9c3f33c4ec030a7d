//go:build !prober_pkgconfig

package prober

// Default build: libprober linked statically from lib/<goos>_<goarch>/libprober.a (the
// per-platform files link_linux_amd64.go and link_linux_arm64.go name it), with the header in
// include/. The module as published (ci/go-module.sh, docs/releasing.md) carries both, built and
// stripped for each platform: `go get` and a C compiler are all a user needs, no Rust.
//
// In a checkout of the repository, include/prober.h and lib/<platform>/libprober.a are
// symbolic links to the repository's include/ and to what cargo builds
// (`cargo build --release -p prober-ffi`, for arm64 with `--target aarch64-unknown-linux-gnu`),
// so development links the freshly built library. Module zips leave symbolic links out.
//
// Build with -tags prober_pkgconfig to use an installed copy found through pkg-config instead
// (distributions, Alpine/musl, other platforms).

// #cgo CFLAGS: -I${SRCDIR}/include
import "C"
