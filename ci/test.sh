#!/usr/bin/env bash
# Runs every test suite of libprober. This is the command the README gives and .ci/run calls.
# It installs or finds what the suites need by itself; a fresh machine must pass it.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "ci/test.sh: cargo not found (Rust 1.85 or newer is needed)" >&2
    exit 1
  fi
fi

# Tests run many probes, children and sockets at once; make sure the descriptor limit allows it.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

step "cargo test --workspace"
cargo test --workspace --locked 2>&1

step "all suites passed"
