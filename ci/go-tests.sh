#!/usr/bin/env bash
# The Go suite: builds libprober (release, static) and the prober-target server, then runs
# go vet and go test -race on bindings/go, the tests again with -tags debug (a GC before every
# engine call, to expose KeepAlive and cleanup bugs), and a pass against an installed copy
# found through pkg-config (-tags prober_pkgconfig).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

# Go 1.24 or newer (runtime.AddCleanup). Use the one on PATH or in /usr/local/go; install
# Debian's golang-go only when there is none.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
need cc gcc
need pkg-config
echo "using $(go version) at $(command -v go)"
export CGO_ENABLED=1

step "build libprober (release, with the test-panic probe) and prober-target"
# The test-panic feature adds the deliberately panicking probe that the isolation test
# (-tags prober_testpanic) needs; the installed-copy pass below builds without it.
cargo build --quiet --release -p prober-ffi --features test-panic
cargo build --quiet -p prober-testkit --bin prober-target
# The tests fail (they do not skip) when this binary is missing.
export PROBER_TARGET_BIN="$PWD/target/debug/prober-target"

cd bindings/go

step "go vet"
go vet -tags prober_testpanic ./...

step "go test -race"
go test -race -tags prober_testpanic -count=1 ./...

step "go test -tags debug"
go test -tags debug,prober_testpanic -count=1 ./...

step "go test -tags prober_pkgconfig (installed copy, shared library)"
prefix="$(cd ../.. && pwd)/target/go-pkgconfig"
rm -rf "$prefix"
bash ../../ci/install.sh "$prefix" >/dev/null
# The Go build cache does not key packages on pkg-config's output (only on the command), so a
# package compiled against another prefix would be reused with its -L path. CGO_CPPFLAGS is
# part of the key: naming the prefix there makes the cache follow it.
export CGO_CPPFLAGS="-I$prefix/include${CGO_CPPFLAGS:+ $CGO_CPPFLAGS}"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
go vet -tags prober_pkgconfig ./...
go test -tags prober_pkgconfig -count=1 ./...
