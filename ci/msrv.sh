#!/usr/bin/env bash
# The declared rust-version is true: builds the workspace (every target: libraries, binaries,
# tests, examples, benches) with exactly the toolchain that [workspace.package] rust-version
# names, installed through rustup (minimal profile) when missing. `cargo check` only: code
# generation is the newest stable's job (ci/test.sh); what an old toolchain rejects is syntax,
# library APIs and lints that the type checker sees.
# Usage: ci/msrv.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

msrv=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)
[ -n "$msrv" ] || { echo "msrv: no rust-version in Cargo.toml"; exit 1; }
command -v rustup >/dev/null 2>&1 || { echo "msrv: rustup is needed to install Rust $msrv"; exit 1; }
if ! rustup run "$msrv" rustc --version >/dev/null 2>&1; then
  rustup toolchain install "$msrv" --profile minimal
fi
echo "rust-version $msrv: $(rustup run "$msrv" rustc --version)"
# Its own target directory: the old compiler's artefacts would otherwise sit beside (and not
# replace) the stable ones, and a later stable build would not reuse them anyway.
CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check --workspace --all-targets --locked --quiet
echo "msrv: the workspace builds with Rust $msrv"
