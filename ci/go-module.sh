#!/usr/bin/env bash
# The Go module with prebuilt libraries, as a Go module proxy directory: builds libprober.a in
# release mode for linux/amd64 and linux/arm64, strips their debug info, checks which glibc
# they need, and writes at OUT what GOPROXY=file://OUT serves:
#   OUT/github.com/libprober/prober/bindings/go/@v/list, VERSION.info, VERSION.mod, VERSION.zip
# The zip holds bindings/go as in the tree with two things that are symbolic links in a checkout
# (and which module zips leave out) as real files: prober/include/prober.h and
# prober/lib/linux_{amd64,arm64}/libprober.a. OUT/tree is the same tree unzipped: the content of
# the release tag's commit (docs/releasing.md). The version comes from one place, the
# workspace's version in Cargo.toml; the last line printed is that version (vX.Y.Z).
# Usage: ci/go-module.sh OUT
set -euo pipefail
[ $# = 1 ] || { echo "usage: ci/go-module.sh OUT" >&2; exit 64; }
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need python3
need strip binutils
need objdump binutils
need_aarch64_cross
mkdir -p "$1"
out=$(cd "$1" && pwd)
module=github.com/libprober/prober/bindings/go
version=v$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ "$version" != v ] || { echo "go-module: no version in Cargo.toml" >&2; exit 1; }

step "libprober.a for linux/amd64 and linux/arm64 (release, without test features)"
# Plain builds: ci/go-tests.sh and ci/c-tests.sh build with the test-panic feature, which must
# never ship (checked below).
cargo build --quiet --release --locked -p prober-ffi
cargo build --quiet --release --locked -p prober-ffi --target aarch64-unknown-linux-gnu

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir -p "$tree"
# Regular files only: the checkout's symbolic links are replaced below; built test binaries
# (*.test) are not sources. examples/ holds modules of their own (examples/cri), which are not
# part of this one, as the go command leaves out any directory with a go.mod.
(cd bindings/go && find . -path ./examples -prune -o -type f ! -name '*.test' -print0) |
  (cd bindings/go && xargs -0 cp --parents -t "$tree")
mkdir -p "$tree/prober/include" "$tree/prober/lib/linux_amd64" "$tree/prober/lib/linux_arm64"
cp include/prober.h "$tree/prober/include/prober.h"
# Debug info is most of a Rust static library (the standard library's included); the symbol
# table stays, the linker needs it.
strip --strip-debug -o "$tree/prober/lib/linux_amd64/libprober.a" target/release/libprober.a
aarch64-linux-gnu-strip --strip-debug -o "$tree/prober/lib/linux_arm64/libprober.a" \
  target/aarch64-unknown-linux-gnu/release/libprober.a
for p in amd64 arm64; do
  a=$tree/prober/lib/linux_$p/libprober.a
  echo "linux/$p: libprober.a $(stat -c %s "$a") bytes stripped"
  if nm "$a" 2>/dev/null | grep -q ' T prober__test_panic$'; then
    echo "go-module: linux/$p libprober.a has the test-panic export; it must not ship" >&2; exit 1
  fi
done

step "the oldest glibc the archives need"
# Every symbol an archive takes from the C library (undefined, not weak, defined nowhere in the
# archive) must exist in the oldest glibc named in bindings/go/README.md. A symbol's oldest
# version in this machine's glibc is the release that introduced it. The stat family is the
# exception: before glibc 2.33 those were inline wrappers in libc_nonshared.a (always linked),
# so any glibc has them. Rust's standard library itself needs 2.17 on both targets.
baseline=2.17
glibc_check() { # ARCHIVE NM OBJDUMP LIBDIR
  local archive=$1 nm=$2 objdump=$3 libdir=$4
  "$nm" "$archive" 2>/dev/null | awk '$1 == "U" {print $2}' | sort -u >"$work/undef"
  "$nm" --defined-only "$archive" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$work/defined"
  comm -23 "$work/undef" "$work/defined" >"$work/external"
  : >"$work/versions"
  for lib in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libgcc_s.so.1 \
             ld-linux-x86-64.so.2 ld-linux-aarch64.so.1; do
    [ -e "$libdir/$lib" ] || continue
    "$objdump" -T "$libdir/$lib" | awk '!/\*UND\*/ && NF >= 6 {print $NF, $(NF-1)}' >>"$work/versions"
  done
  python3 - "$work/external" "$work/versions" "$baseline" <<'PY'
import sys
external = open(sys.argv[1]).read().split()
baseline = tuple(int(x) for x in sys.argv[3].split('.'))
nonshared = {'stat64', 'fstat64', 'lstat64', 'fstatat64', 'mknod', 'mknodat', 'stat', 'fstat', 'lstat', 'fstatat'}
oldest = {}
for line in open(sys.argv[2]):
    name, ver = line.split()
    ver = ver.strip('()')
    for prefix in ('GLIBC_', 'GCC_'):
        if ver.startswith(prefix) and ver[len(prefix):][:1].isdigit():
            v = (prefix,) + tuple(int(x) for x in ver[len(prefix):].split('.'))
            oldest[name] = min(oldest.get(name, v), v)
# The linker defines _GLOBAL_OFFSET_TABLE_ itself.
missing = [s for s in external if s not in oldest and s != "_GLOBAL_OFFSET_TABLE_"]
if missing:
    print('not found in glibc, its dynamic loader or libgcc_s:', ' '.join(missing)); sys.exit(1)
glibc = sorted(((oldest[s][1:], s) for s in external if s in oldest and oldest[s][0] == "GLIBC_" and s not in nonshared))
top = glibc[-1]
print('%d symbols from glibc; the newest is %s (GLIBC_%s)' % (len(glibc), top[1], '.'.join(map(str, top[0]))))
if top[0] > baseline:
    newer = [s for v, s in glibc if v > baseline]
    print('newer than glibc %s: %s' % (sys.argv[3], ' '.join(newer))); sys.exit(1)
print('needs glibc %s or newer (the baseline)' % sys.argv[3])
PY
}
echo "linux/amd64:"
glibc_check "$tree/prober/lib/linux_amd64/libprober.a" nm objdump "$(dirname "$(gcc -print-file-name=libc.so.6)")"
echo "linux/arm64:"
glibc_check "$tree/prober/lib/linux_arm64/libprober.a" aarch64-linux-gnu-nm aarch64-linux-gnu-objdump "$AARCH64_SYSROOT/lib"

step "module proxy directory $out for $module@$version"
dir=$out/$module/@v
mkdir -p "$dir"
cp "$tree/go.mod" "$dir/$version.mod"
when=$(date -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)" +%Y-%m-%dT%H:%M:%SZ)
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$when" >"$dir/$version.info"
python3 - "$tree" "$module@$version" "$dir/$version.zip" <<'PY'
import os, sys, zipfile
tree, prefix, out = sys.argv[1:]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for root, dirs, files in os.walk(tree):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            info = zipfile.ZipInfo(prefix + '/' + os.path.relpath(path, tree), (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, 'rb') as fh:
                z.writestr(info, fh.read())
PY
# list: every version this directory serves (earlier runs' included).
{ [ -e "$dir/list" ] && cat "$dir/list"; echo "$version"; } | sort -u -V >"$work/list"
mv "$work/list" "$dir/list"
rm -rf "$out/tree"
cp -a "$tree" "$out/tree"
echo "$dir/$version.zip: $(stat -c %s "$dir/$version.zip") bytes (the Go proxy's limit: 500 MB)"
echo "$version"
