//go:build prober_pkgconfig

package prober

// Installed build (-tags prober_pkgconfig): flags from prober.pc, as installed by
// `ci/install.sh PREFIX` (set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, and LD_LIBRARY_PATH if
// PREFIX/lib is not a system library directory).

// #cgo pkg-config: prober
import "C"
