#!/usr/bin/env bash
# The Go suite: builds libprober (release, static) and the prober-target server, then runs
# go vet and staticcheck on bindings/go, builds every Go block of bindings/go/README.md, checks
# that a build without cgo fails with the one message that names cgo, runs go test -race, the
# tests again with -tags debug (a GC before every engine call, to expose reachability bugs, and
# a check that every engine the tests made was closed), the examples/cri module (host-run exec
# probes through a fake CRI runtime), and a pass against an installed copy found through
# pkg-config (-tags prober_pkgconfig).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

# Go 1.24 or newer. Use the one on PATH or in /usr/local/go; install
# Debian's golang-go only when there is none.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
need cc gcc
need pkg-config
# dns_test.go starts Debian's nsd (in /usr/sbin, which a non-root PATH may lack).
export PATH="$PATH:/usr/sbin"
need nsd nsd
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
# prober_container: container_test.go, run by ci/namespaces.sh against a runc container.
go vet -tags prober_testpanic,prober_container ./...

step "staticcheck"
# Installed with the go command into GOPATH/bin, which caches it: rebuilt only when the pinned
# module version (staticcheck 2026.2.2) changes.
staticcheck_version=0.8.2
staticcheck="$(go env GOPATH)/bin/staticcheck"
if ! "$staticcheck" -version 2>/dev/null | grep -qF "($staticcheck_version)"; then
  go install "honnef.co/go/tools/cmd/staticcheck@v$staticcheck_version"
fi
"$staticcheck" -tags prober_testpanic,prober_container ./...
"$staticcheck" -tags debug ./...

step "README examples (every Go block is a whole program; each is built)"
examples="$(cd ../.. && pwd)/target/go-readme-examples"
rm -rf "$examples"
mkdir -p "$examples"
awk -v dir="$examples" '
  /^```go$/ { n++; inside = 1; d = sprintf("%s/ex%02d", dir, n); system("mkdir -p " d); f = d "/main.go"; next }
  /^```$/ && inside { inside = 0; close(f); next }
  inside { print > f }
' README.md
count=$(find "$examples" -name main.go | wc -l)
if [ "$count" -eq 0 ]; then
  echo "no Go block found in bindings/go/README.md" >&2
  exit 1
fi
printf 'module readme.example\n\ngo 1.24\n\nrequire github.com/libprober/prober/bindings/go v0.0.0\n\nreplace github.com/libprober/prober/bindings/go => %s\n' \
  "$PWD" > "$examples/go.mod"
(cd "$examples" && go vet ./...)
echo "$count README examples build"

step "a build without cgo fails with one message naming cgo"
if out=$(CGO_ENABLED=0 go build ./... 2>&1); then
  echo "CGO_ENABLED=0 go build succeeded" >&2
  exit 1
fi
echo "$out"
if [ "$(echo "$out" | grep -c '\.go:')" != 1 ] ||
   ! echo "$out" | grep -q 'undefined: prober_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler'; then
  echo "expected exactly one error, naming cgo" >&2
  exit 1
fi

step "go test -race"
go test -race -tags prober_testpanic -count=1 ./...

step "go test -tags debug"
go test -tags debug,prober_testpanic -count=1 ./...

step "examples/cri: exec probes through a fake CRI runtime's ExecSync (a module of its own)"
# Its own module, so that the binding's users do not get k8s.io/cri-api and gRPC as
# dependencies; it uses this checkout's binding through a replace directive.
(cd examples/cri && go vet ./... && "$staticcheck" ./... && go test -race -count=1 ./...)

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
