#!/usr/bin/env bash
# Builds libprober in release mode and installs it under PREFIX:
#   PREFIX/include/prober.h
#   PREFIX/lib/libprober.a, libprober.so.VERSION (+ libprober.so.1 and libprober.so links)
#   PREFIX/lib/pkgconfig/prober.pc              -> pkg-config --cflags --libs prober
#   PREFIX/lib/cmake/prober/proberConfig*.cmake -> find_package(prober): prober::prober (shared)
#                                                  and prober::prober_static
set -euo pipefail
[ $# = 1 ] || { echo "usage: ci/install.sh PREFIX" >&2; exit 64; }
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
prefix=$(mkdir -p "$1" && cd "$1" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
abi=1
# What `cargo rustc --print native-static-libs` reports for the static library.
static_deps="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

cargo build --quiet --release -p prober-ffi
install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/prober"
install -m 644 include/prober.h "$prefix/include/prober.h"
install -m 644 target/release/libprober.a "$prefix/lib/libprober.a"
install -m 755 target/release/libprober.so "$prefix/lib/libprober.so.$version"
ln -sf "libprober.so.$version" "$prefix/lib/libprober.so.$abi"
ln -sf "libprober.so.$abi" "$prefix/lib/libprober.so"

cat > "$prefix/lib/pkgconfig/prober.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: prober
Description: kubelet-grade health probing (TCP, HTTP(S), exec, gRPC) with a poll-driven engine
Version: $version
Libs: -L\${libdir} -lprober
Libs.private: $static_deps
Cflags: -I\${includedir}
PC

cat > "$prefix/lib/cmake/prober/proberConfig.cmake" <<CM
# find_package(prober) support for an installed libprober $version.
get_filename_component(_prober_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET prober::prober)
  add_library(prober::prober SHARED IMPORTED)
  set_target_properties(prober::prober PROPERTIES
    IMPORTED_LOCATION "\${_prober_prefix}/lib/libprober.so.$abi"
    IMPORTED_SONAME "libprober.so.$abi"
    INTERFACE_INCLUDE_DIRECTORIES "\${_prober_prefix}/include")
  add_library(prober::prober_static STATIC IMPORTED)
  set_target_properties(prober::prober_static PROPERTIES
    IMPORTED_LOCATION "\${_prober_prefix}/lib/libprober.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_prober_prefix}/include"
    INTERFACE_LINK_LIBRARIES "gcc_s;util;rt;pthread;m;dl;c")
endif()
set(prober_VERSION $version)
unset(_prober_prefix)
CM

cat > "$prefix/lib/cmake/prober/proberConfigVersion.cmake" <<CM
# Compatible when this version is the one asked for or later with the same major version: the
# C ABI of libprober.so.1 only grows (a minor version adds, never changes), also before 1.0.
set(PACKAGE_VERSION "$version")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(PACKAGE_FIND_VERSION VERSION_LESS_EQUAL PACKAGE_VERSION)
  string(REPLACE "." ";" _have "\${PACKAGE_VERSION}")
  list(GET _have 0 _have_major)
  if(PACKAGE_FIND_VERSION_MAJOR EQUAL _have_major)
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
CM
echo "installed libprober $version under $prefix"

# The dynamic loader finds libprober.so.1 only in its cache or on a path it is told about.
case "$prefix" in
  /usr | /usr/local)
    if [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then
      ldconfig && echo "ran ldconfig: programs linked with -lprober find libprober.so.$abi"
    else
      echo "run 'ldconfig' as root so that programs find libprober.so.$abi"
    fi
    ;;
  *)
    echo "$prefix/lib is not a system library directory: link programs with"
    echo "  -Wl,-rpath,$prefix/lib   (or set LD_LIBRARY_PATH=$prefix/lib when running them)"
    ;;
esac
