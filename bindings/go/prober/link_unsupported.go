//go:build !prober_pkgconfig && !(linux && (amd64 || arm64))

package prober

// No prebuilt libprober for this platform: the module carries linux/amd64 and linux/arm64 only.
// Build libprober and install it (ci/install.sh PREFIX in a checkout), then build with
// -tags prober_pkgconfig. The undefined name below makes the compiler say so.
var _ = no_prebuilt_libprober_for_this_platform__build_with_tags_prober_pkgconfig
