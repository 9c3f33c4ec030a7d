//go:build !prober_pkgconfig

package prober

// The static library for linux/amd64 and what it needs from the C library (what
// `cargo rustc --print native-static-libs` lists). See link_static.go.

// #cgo LDFLAGS: ${SRCDIR}/lib/linux_amd64/libprober.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
import "C"
