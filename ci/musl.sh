#!/usr/bin/env bash
# Static `prober` binaries for x86_64-unknown-linux-musl and aarch64-unknown-linux-musl: builds
# them (the Rust targets through rustup; for amd64 musl-gcc from Debian's musl-tools compiles
# ring's C and assembly; for arm64, which Debian has no musl cross compiler for, the glibc cross
# compiler aarch64-linux-gnu-gcc compiles ring (freestanding code: of the C library it calls
# memcpy and memset only) and links with Rust's self-contained musl, the crt objects and libc.a
# of the target's rust-std), checks that they are statically linked, and probes a local HTTP
# server and a TCP port with each, the arm64 one under qemu-aarch64. Prints where the binaries
# are and their sizes.
#
# Exits 3, saying why, when the musl target or musl-gcc cannot be installed on this machine
# (ci/test.sh then prints that the static build was not run: nothing is skipped silently); any
# other failure exits 1. Usage: ci/musl.sh [amd64|arm64] (both by default)
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need file
need ldd libc-bin
need python3
case "${1:-both}" in
  amd64) arches=(amd64) ;;
  arm64) arches=(arm64) ;;
  both) arches=(amd64 arm64) ;;
  *) echo "usage: ci/musl.sh [amd64|arm64]" >&2; exit 64 ;;
esac

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The Rust target, through rustup when missing; exits 3 when it cannot be installed.
musl_target() { # TARGET
  local target=$1
  step "Rust target $target"
  if [ ! -d "$(rustc --print sysroot)/lib/rustlib/$target/lib" ]; then
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
  [ -d "$(rustc --print sysroot)/lib/rustlib/$target/lib" ] ||
    { echo "musl: the Rust target $target is still missing; no static build."; exit 3; }
  echo "installed"
}

# The test server, started once: python's http.server on a port the system picks.
port=
start_server() {
  [ -z "$server_pid" ] || return 0
  mkdir "$work/www"
  echo ok >"$work/www/healthz"
  # Port 0: the system picks a free port, which the server prints (unbuffered with -u).
  python3 -u -m http.server --bind 127.0.0.1 --directory "$work/www" 0 >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do   # at most 10 s for the server to listen
    port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$work/server.log" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "musl: the test server exited:"; cat "$work/server.log"; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "musl: the test server did not start listening within 10 s:"; cat "$work/server.log"; exit 1; }
  echo "test server on 127.0.0.1:$port"
  cat >"$work/watch.yaml" <<EOF
targets:
  - name: web
    readinessProbe:
      httpGet: {path: /healthz, port: $port}
      periodMilliseconds: 100
EOF
}

# Checks that BIN is static, then probes with it, run through RUNNER... (none: directly).
check_static() { # BIN RUNNER...
  local bin=$1; shift
  local runner=("$@") desc ldd_out
  step "$bin: statically linked"
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
  if command -v readelf >/dev/null 2>&1; then
    if readelf -d "$bin" 2>/dev/null | grep -q NEEDED; then
      echo "musl: $bin has NEEDED entries:"; readelf -d "$bin" | grep NEEDED; exit 1
    fi
    if readelf -l "$bin" 2>/dev/null | grep -q INTERP; then
      echo "musl: $bin asks for a program interpreter"; exit 1
    fi
  fi

  step "$bin: probes${runner[*]:+ (under ${runner[*]})}"
  start_server
  expect() {  # expect STATUS TEXT -- ARGS...: runs the binary, checks its exit status and output
    local want_status=$1 want_text=$2; shift 3
    local out status=0
    out=$(timeout 60 "${runner[@]}" "$bin" "$@" 2>&1) || status=$?
    echo "prober $*: $out (exit $status)"
    [ "$status" = "$want_status" ] || { echo "musl: expected exit $want_status"; exit 1; }
    case "$out" in *"$want_text"*) ;; *) echo "musl: expected '$want_text' in the output"; exit 1 ;; esac
  }
  expect 0 "success (HTTP 200" -- check "http://127.0.0.1:$port/healthz"
  expect 1 "failure: HTTP probe failed with statuscode: 404" -- check "http://127.0.0.1:$port/missing"
  expect 0 '{"result":"success"' -- check --json "tcp://127.0.0.1:$port"
  expect 0 " web readiness success (HTTP 200)  started=yes ready=yes live=yes" -- watch --until-ready --for 20s "$work/watch.yaml"
}

built=()
for arch in "${arches[@]}"; do
  case $arch in
    amd64)
      target=x86_64-unknown-linux-musl
      musl_target "$target"
      step "musl C compiler (ring compiles C and assembly)"
      if ! command -v musl-gcc >/dev/null 2>&1 && ! { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }; then
        echo "musl: musl-gcc is missing and cannot be installed here (Debian: apt-get install musl-tools);"
        echo "musl: no static build."
        exit 3
      fi
      ( need musl-gcc musl-tools ) || { echo "musl: musl-gcc could not be installed (apt-get install musl-tools); no static build."; exit 3; }
      musl-gcc --version | head -n 1
      step "build ($target)"
      # ring's build script asks the cc crate for this target's compiler: musl-gcc, named explicitly.
      CC_x86_64_unknown_linux_musl=musl-gcc cargo build --release --locked -p prober-cli --target "$target"
      runner=()
      ;;
    arm64)
      target=aarch64-unknown-linux-musl
      musl_target "$target"
      step "arm64 cross compiler and qemu-user"
      ( need_aarch64_cross ) || { echo "musl: the arm64 cross compiler or qemu-user could not be installed; no static arm64 build."; exit 3; }
      need_aarch64_cross
      step "build ($target)"
      # Debian has no aarch64 musl compiler. The glibc cross compiler compiles ring's C and
      # assembly (freestanding code: the only C library functions it calls are memcpy and
      # memset, which musl's libc.a has) and links: with link-self-contained, rustc gives it the
      # target's own musl crt objects and libc.a and keeps the system's libraries out
      # (-nostartfiles -nodefaultlibs). The checks below hold the result to it: static, no
      # program interpreter, and it runs.
      CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc \
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc \
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=yes" \
        cargo build --release --locked -p prober-cli --target "$target"
      # A static binary: qemu needs no sysroot (-L) for it.
      runner=(qemu-aarch64)
      ;;
  esac
  bin="target/$target/release/prober"
  echo "$bin: $(stat -c %s "$bin") bytes"
  check_static "$bin" "${runner[@]}"
  built+=("$bin")
done

echo
for bin in "${built[@]}"; do
  echo "musl: $bin: static, $(stat -c %s "$bin") bytes, probes"
done
echo "musl: copy them into FROM scratch or distroless/static images."
