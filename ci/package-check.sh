#!/usr/bin/env bash
# Packaging: the shared library exports only prober_* symbols and has its SONAME; an installed
# copy is found by pkg-config and by CMake's find_package; the C example builds against it
# (shared, static, and through pkg-config) and probes a live target.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need cmake
need pkg-config
need nm binutils
need readelf binutils

prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"; [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true' EXIT
bash ci/install.sh "$prefix" >/dev/null

step "exported symbols and SONAME"
so="$prefix/lib/libprober.so.1"
bad=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^prober_' || true)
if [ -n "$bad" ]; then echo "symbols outside prober_* are exported:"; echo "$bad"; exit 1; fi
nm -D --defined-only "$so" | grep -q ' T prober__test_panic$' && { echo "release build exports prober__test_panic"; exit 1; }
count=$(nm -D --defined-only "$so" | awk '$2 == "T"' | wc -l)
echo "$count functions exported, all prober_*"
soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libprober.so.1 ] || { echo "SONAME is '$soname', expected libprober.so.1"; exit 1; }
echo "SONAME $soname"

step "release binary size (prober is copied into images as a HEALTHCHECK)"
cargo build --quiet --release -p prober-cli
size=$(stat -c %s target/release/prober)
# 6 MiB: the command is a HEALTHCHECK binary copied into images. It was 4 MiB until the
# command gained hooks, a health endpoint, systemd notify, HTTP methods and bodies, Unix
# sockets, gRPC metadata and TLS on TCP (about 4.25 MB with all of them); 4.5 MiB until
# blackbox_exporter v0.28.0's options came to prober serve: content decoding (gzip, deflate,
# brotli with its 120 KiB dictionary), configuration reload and /config (serde serialization
# of the module file), /logs, the unix prober and the cookie jar (4.54 MB -> 5.06 MB); 5 MiB
# until the rest of v0.28.0's options: CEL over JSON bodies (the cel crate's interpreter with
# its Pratt parser, optimised for size: +0.43 MB; its default ANTLR parser would add 1.47 MB),
# HTTP proxies, source addresses, rate_limit and client_allowed_sans (x509-parser reads the
# client certificate's SANs), Go's verified chains, and the ICMP probe in the engine
# (5.06 MB -> 5.79 MB). Within it since: DNS probes (the engine's `dns` feature, now on in the
# command: `prober check dns://`, watch files, serve's dns modules, DNS over TLS), ICMP in
# check, watch and serve, OAuth 2 client credentials, prober-yaml (5.82 MB -> 6.28 MB: 10 KB
# left); then the engine threads, TLS resumption and the per-namespace socket pool (6.40 MB,
# brought back to 6.26 MB by optimising prober-core, prober-watch, flate2 and the regex engine
# for size: Cargo.toml says why each can be). The next step,
# if it grows again, is a `prober serve` binary of its own rather than a higher limit here.
limit=$((6 * 1024 * 1024))
echo "target/release/prober: $size bytes (limit $limit)"
[ "$size" -le "$limit" ] || { echo "target/release/prober is larger than 6 MiB"; exit 1; }
readelf -S target/release/prober | grep -q '\.debug_info' && { echo "target/release/prober has debug info"; exit 1; }

step "pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --cflags --libs prober
pkg-config --modversion prober

step "C example against the installed copy"
cargo build --quiet -p prober-testkit --bin prober-target
coproc SERVER { exec target/debug/prober-target; }
server_pid=$SERVER_PID
read -r port <&"${SERVER[0]}"
url="http://127.0.0.1:$port/health"
cmake -S examples/c -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/probe" "$url" | tee "$work/out.txt"
grep -q 'readiness -> success' "$work/out.txt"
"$work/cmake/probe_static" "$url" >/dev/null
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror examples/c/probe.c -o "$work/probe_pc" $(pkg-config --cflags --libs prober) -Wl,-rpath,"$prefix/lib"
"$work/probe_pc" "$url" >/dev/null
# Static through pkg-config: the archive, then the Libs.private line.
cc -std=c11 -Wall -Werror examples/c/probe.c -o "$work/probe_static_pc" $(pkg-config --cflags prober) \
   "$prefix/lib/libprober.a" $(pkg-config --static --libs-only-l prober | sed 's/-lprober//')
"$work/probe_static_pc" "$url" >/dev/null
echo "examples built (CMake shared and static, pkg-config shared and static) and probed $url"
