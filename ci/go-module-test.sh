#!/usr/bin/env bash
# What a Go user does, without Rust and without this repository: builds the module proxy
# directory (ci/go-module.sh target/go-module), then, in an empty GOPATH, module cache and build
# cache, with a PATH that has Go and a C compiler but no cargo or rustc, and GOPROXY=file://...
# as the only source of modules, a new module runs
#   go get github.com/libprober/prober/bindings/go@VERSION
# and builds a program that imports .../bindings/go/prober and probes a loopback HTTP server it
# starts itself: natively (linux/amd64), and cross-built for linux/arm64 (GOARCH=arm64
# CC=aarch64-linux-gnu-gcc), run under qemu-aarch64. Prints the highest GLIBC_ symbol version
# each linked program needs (objdump -T).
# Usage: ci/go-module-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
need cc gcc
need objdump binutils

step "the module proxy directory (ci/go-module.sh)"
proxy=$PWD/target/go-module
mkdir -p target  # run alone on a fresh clone, nothing has made it yet
bash ci/go-module.sh "$proxy" | tee target/go-module.log
version=$(tail -n 1 target/go-module.log)
module=github.com/libprober/prober/bindings/go

need_aarch64_cross
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
goroot=$(go env GOROOT)
# A PATH of Go, the C compilers and the base system: no ~/.cargo/bin.
clean_path="$goroot/bin:/usr/local/bin:/usr/bin:/bin"
in_clean() { # runs "$@" as a new user would, in $work/app
  env -i HOME="$work/home" PATH="$clean_path" TMPDIR="$work/tmp" \
    GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod" GOCACHE="$work/gocache" \
    GOPROXY="file://$proxy" GONOSUMDB="$module" GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off \
    CGO_ENABLED=1 "$@"
}
mkdir -p "$work/home" "$work/tmp" "$work/app"
if in_clean sh -c 'command -v cargo || command -v rustc'; then
  echo "go-module-test: cargo or rustc is on the clean PATH ($clean_path)" >&2; exit 1
fi

cat >"$work/app/main.go" <<'GO'
// A new user's program: probes a loopback HTTP server it starts, through the published module.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad := false
	for _, c := range []struct {
		path string
		want prober.Result
	}{{"/healthz", prober.Success}, {"/missing", prober.Failure}} {
		o, err := prober.Check(ctx, prober.HTTP("http://"+ln.Addr().String()+c.path))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %v: %s\n", c.path, o.Result, o.Message)
		bad = bad || o.Result != c.want
	}
	if bad {
		os.Exit(1)
	}
}
GO
cd "$work/app"
step "go get $module@$version (GOPROXY=file://$proxy, empty GOPATH, no cargo or rustc)"
in_clean go mod init example.com/newuser
in_clean go get "$module@$version"
grep "$module" go.mod

expect_probes() { # OUTPUT
  echo "$1"
  grep -q '^/healthz: success: ' <<<"$1" || { echo "go-module-test: /healthz was not a success" >&2; exit 1; }
  grep -q '^/missing: failure: HTTP probe failed with statuscode: 404' <<<"$1" || { echo "go-module-test: /missing was not a 404 failure" >&2; exit 1; }
}
glibc_needed() { # OBJDUMP BINARY
  "$1" -T "$2" | grep -o 'GLIBC_[0-9.]*' | sort -u -V | tail -n 1
}

step "linux/amd64: build and run"
in_clean go build -o app-amd64 .
expect_probes "$(./app-amd64)"
echo "app-amd64: $(stat -c %s app-amd64) bytes; needs $(glibc_needed objdump app-amd64) as linked on this machine"

step "linux/arm64: cross-build (CC=aarch64-linux-gnu-gcc) and run under qemu-aarch64"
in_clean env GOARCH=arm64 CC=aarch64-linux-gnu-gcc go build -o app-arm64 .
expect_probes "$(qemu-aarch64 -L "$AARCH64_SYSROOT" ./app-arm64)"
echo "app-arm64: $(stat -c %s app-arm64) bytes; needs $(glibc_needed aarch64-linux-gnu-objdump app-arm64) as linked here"
echo
echo "go-module-test: $module@$version builds and probes from the module proxy alone (amd64, arm64)"
