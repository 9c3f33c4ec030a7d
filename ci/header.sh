#!/usr/bin/env bash
# Regenerates include/prober.h with the pinned cbindgen. With --check, fails when the committed
# header differs from what would be generated (CI runs it that way).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need_cbindgen
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# cbindgen reads prober-ffi after macro expansion (its C enums are macro tables), which needs
# rustc's nightly flags: RUSTC_BOOTSTRAP lets the stable compiler accept them.
RUSTC_BOOTSTRAP=1 cbindgen --quiet --config crates/prober-ffi/cbindgen.toml --crate prober-ffi --output "$tmp"
if [ "${1:-}" = "--check" ]; then
  if ! diff -u include/prober.h "$tmp"; then
    echo "include/prober.h is out of date: run ci/header.sh and commit the result" >&2
    exit 1
  fi
  echo "include/prober.h matches cbindgen $CBINDGEN_VERSION"
else
  cp "$tmp" include/prober.h
  echo "wrote include/prober.h"
fi
