# Shared helpers for the ci/ scripts (sourced, not run).

step() { printf '\n=== %s\n' "$*"; }

# On CI (.ci/run sets CI) every build happens once: cargo's incremental state would only take
# disk (2.8 GB of a run's 44 GB before it was turned off), and a CI machine's disk ran out.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL=0
fi

# prune_ci_builds DIR...: on CI, removes build directories that no later step uses, and prints
# how much disk the run's build directories take and what is left, so that a run that comes
# near the machine's limit says so in its log. A developer's run keeps them (a rerun is faster).
prune_ci_builds() {
  if [ -n "${CI:-}" ]; then
    rm -rf "$@"
  fi
  echo "disk: target/ $(du -sh target 2>/dev/null | cut -f1), fuzz/target $(du -sh fuzz/target 2>/dev/null | cut -f1 || echo -), free $(df -h . | awk 'NR == 2 { print $4 }')"
}

# Makes sure a command exists, installing the Debian package that provides it when missing.
need() {
  local cmd=$1 pkg=${2:-$1}
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "ci: $cmd not found; installing the $pkg package" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    if [ -z "${PROBER_APT_UPDATED:-}" ]; then
      apt-get update -qq >/dev/null && export PROBER_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
  fi
  command -v "$cmd" >/dev/null 2>&1 || { echo "ci: $cmd is required and could not be installed" >&2; exit 1; }
}

# cargo on PATH (rustup installs it under ~/.cargo/bin).
need_cargo() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null 2>&1 || { echo "ci: cargo not found (Rust 1.86 or newer is needed)" >&2; exit 1; }
}

# The pinned cbindgen: point releases change the output, and the header is compared byte for byte.
CBINDGEN_VERSION=0.29.4
need_cbindgen() {
  export PATH="$HOME/.cargo/bin:$PATH"
  if ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
    echo "ci: installing cbindgen $CBINDGEN_VERSION" >&2
    cargo install --quiet --locked --version "$CBINDGEN_VERSION" cbindgen
  fi
}

# Installs a Debian package when FILE is missing (for libraries and sysroots, which `need`
# cannot test as commands).
need_file() {
  local file=$1 pkg=$2
  [ -e "$file" ] && return 0
  echo "ci: $file not found; installing the $pkg package" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    if [ -z "${PROBER_APT_UPDATED:-}" ]; then
      apt-get update -qq >/dev/null && export PROBER_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
  fi
  [ -e "$file" ] || { echo "ci: $file is required and could not be installed ($pkg)" >&2; exit 1; }
}

# A Rust target's standard library, through rustup when missing.
need_rust_target() {
  local target=$1
  [ -d "$(rustc --print sysroot)/lib/rustlib/$target/lib" ] && return 0
  command -v rustup >/dev/null 2>&1 || { echo "ci: the Rust target $target is missing and rustup is not there to add it" >&2; exit 1; }
  rustup target add "$target"
}

# linux/arm64 on an x86-64 Debian machine: Debian's cross compiler and glibc, qemu-user to run
# the results, the Rust target, and the environment that makes cargo and the cc crate use them.
AARCH64_SYSROOT=/usr/aarch64-linux-gnu
need_aarch64_cross() {
  need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
  need_file "$AARCH64_SYSROOT/lib/libc.so" libc6-dev-arm64-cross
  need qemu-aarch64 qemu-user
  need_rust_target aarch64-unknown-linux-gnu
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $AARCH64_SYSROOT"
  export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
  export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
}

# with_scratch NAME: a scratch directory ($dir) and a list of child processes ($pids) for a
# suite that starts servers; on exit every child gets SIGTERM (up to 10 s each to end: a
# database closes), then SIGKILL, is reaped, and on failure the last lines of each
# $dir/*.log are shown; the directory goes. INT and TERM end the script through it, also
# when the suite was started with them ignored.
with_scratch() {
  dir=$(mktemp -d "/tmp/$1.XXXXXX")
  pids=()
  trap scratch_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
scratch_cleanup() {
  local status=$? pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$status" != 0 ]; then
    for log in "$dir"/*.log; do
      [ -f "$log" ] || continue
      echo "--- $(basename "$log") (last 30 lines)" >&2
      tail -n 30 "$log" >&2
    done
  fi
  rm -rf "$dir"
  exit "$status"
}
