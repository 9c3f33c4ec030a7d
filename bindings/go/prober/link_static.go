//go:build !prober_pkgconfig

package prober

// Default build: the static library that `cargo build -p prober-ffi --release` leaves in the
// repository's target directory, and the header from include/. Build with -tags
// prober_pkgconfig to use an installed copy found through pkg-config instead.

// #cgo CFLAGS: -I${SRCDIR}/../../../include
// #cgo LDFLAGS: ${SRCDIR}/../../../target/release/libprober.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
import "C"
