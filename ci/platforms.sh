#!/usr/bin/env bash
# Compile checks for the Unix systems other than Linux: the library and the command must build
# for FreeBSD (x86_64). Linux is the only platform whose tests run; the others are compiled
# only, and docs/platforms.md says what works there.
# Usage: ci/platforms.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

target=x86_64-unknown-freebsd
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  rustup target add "$target"
fi
step "cargo check --target $target (library crates and the prober command)"
cargo check --target "$target" --workspace --lib --bins --locked --quiet
echo "platforms: $target compiles"
