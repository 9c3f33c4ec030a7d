#!/usr/bin/env bash
# A static `prober` for x86_64-unknown-linux-musl: builds it (the Rust target through rustup,
# musl-gcc from Debian's musl-tools for ring's C and assembly), checks that it is statically
# linked, and probes a local HTTP server and a TCP port with it. Prints where the binary is.
#
# Exits 3, saying why, when the musl target or musl-gcc cannot be installed on this machine
# (ci/test.sh then prints that the static build was not run: nothing is skipped silently); any
# other failure exits 1. Usage: ci/musl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need file
need ldd libc-bin
need python3

target=x86_64-unknown-linux-musl

step "Rust target $target"
sysroot_has_target() { [ -d "$(rustc --print sysroot)/lib/rustlib/$target/lib" ]; }
if ! sysroot_has_target; then
  if ! command -v rustup >/dev/null 2>&1; then
    echo "musl: the Rust target $target is not installed and rustup is not available to add it;"
    echo "musl: no static build. Install the target (rustup target add $target) and run again."
    exit 3
  fi
  if ! rustup target add "$target"; then
    echo "musl: 'rustup target add $target' failed (no network to the Rust distribution?);"
    echo "musl: no static build."
    exit 3
  fi
fi
sysroot_has_target || { echo "musl: the Rust target $target is still missing; no static build."; exit 3; }
echo "installed"

step "musl C compiler (ring compiles C and assembly)"
if ! command -v musl-gcc >/dev/null 2>&1 && ! { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }; then
  echo "musl: musl-gcc is missing and cannot be installed here (Debian: apt-get install musl-tools);"
  echo "musl: no static build."
  exit 3
fi
( need musl-gcc musl-tools ) || { echo "musl: musl-gcc could not be installed (apt-get install musl-tools); no static build."; exit 3; }
musl-gcc --version | head -n 1

step "build"
# ring's build script asks the cc crate for this target's compiler: musl-gcc, named explicitly.
export CC_x86_64_unknown_linux_musl=musl-gcc
cargo build --release --locked -p prober-cli --target "$target"
bin="target/$target/release/prober"
echo "$bin: $(stat -c %s "$bin") bytes"

step "statically linked"
desc=$(file -b "$bin")
echo "file: $desc"
case "$desc" in
  *"statically linked"* | *"static-pie linked"*) ;;
  *) echo "musl: $bin is not statically linked"; exit 1 ;;
esac
# ldd fails (not a dynamic executable) or says "statically linked"; any "=>" is a library.
ldd_out=$(ldd "$bin" 2>&1 || true)
echo "ldd: $ldd_out"
if grep -q '=>' <<<"$ldd_out"; then echo "musl: $bin loads shared libraries"; exit 1; fi
if command -v readelf >/dev/null 2>&1 && readelf -d "$bin" 2>/dev/null | grep -q NEEDED; then
  echo "musl: $bin has NEEDED entries:"; readelf -d "$bin" | grep NEEDED; exit 1
fi

step "probes with the static binary"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/www"
echo ok >"$work/www/healthz"
# Port 0: the system picks a free port, which the server prints (unbuffered with -u).
python3 -u -m http.server --bind 127.0.0.1 --directory "$work/www" 0 >"$work/server.log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 1 100); do   # at most 10 s for the server to listen
  port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$work/server.log" | head -n 1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "musl: the test server exited:"; cat "$work/server.log"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "musl: the test server did not start listening within 10 s:"; cat "$work/server.log"; exit 1; }
echo "test server on 127.0.0.1:$port"

expect() {  # expect STATUS TEXT -- ARGS...: runs the binary, checks its exit status and output
  local want_status=$1 want_text=$2; shift 3
  local out status=0
  out=$(timeout 30 "$bin" "$@" 2>&1) || status=$?
  echo "prober $*: $out (exit $status)"
  [ "$status" = "$want_status" ] || { echo "musl: expected exit $want_status"; exit 1; }
  case "$out" in *"$want_text"*) ;; *) echo "musl: expected '$want_text' in the output"; exit 1 ;; esac
}
expect 0 "success (HTTP 200" -- check "http://127.0.0.1:$port/healthz"
expect 1 "failure: HTTP probe failed with statuscode: 404" -- check "http://127.0.0.1:$port/missing"
expect 0 '{"result":"success"' -- check --json "tcp://127.0.0.1:$port"
cat >"$work/watch.yaml" <<EOF
targets:
  - name: web
    readinessProbe:
      httpGet: {path: /healthz, port: $port}
      periodMilliseconds: 100
EOF
expect 0 " web readiness success (HTTP 200)  started=yes ready=yes live=yes" -- watch --until-ready --for 20s "$work/watch.yaml"

echo
echo "musl: $bin is static and probes: copy it into a FROM scratch or distroless/static image."
