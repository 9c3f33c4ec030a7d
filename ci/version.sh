#!/usr/bin/env bash
# Sets the release version everywhere it is written, from one argument: the workspace's version
# ([workspace.package] in Cargo.toml, which every crate, the C library's prober_version() and the
# Go module's tag (ci/go-module.sh) take), the version requirements between the workspace's
# crates ([workspace.dependencies] and the path dependencies that name a version), and the
# header's PROBER_VERSION_* (crates/prober-ffi/cbindgen.toml; then ci/header.sh regenerates
# include/prober.h). Prints what it changed. Usage: ci/version.sh X.Y.Z
set -euo pipefail
[ $# = 1 ] && [[ $1 =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { echo "usage: ci/version.sh X.Y.Z" >&2; exit 64; }
cd "$(dirname "$0")/.."
new=$1 major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} patch=${BASH_REMATCH[3]}
old=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ "$old" != "$new" ] || { echo "version: already $new"; exit 0; }
# The workspace version, and every requirement on a workspace crate ("prober-…", path = …).
sed -i "s/^version = \"$old\"/version = \"$new\"/" Cargo.toml
sed -i "/path = \"[^\"]*prober[^\"]*\"/s/version = \"$old\"/version = \"$new\"/" Cargo.toml crates/*/Cargo.toml
sed -i -e "s/^#define PROBER_VERSION_MAJOR .*/#define PROBER_VERSION_MAJOR $major/" \
       -e "s/^#define PROBER_VERSION_MINOR .*/#define PROBER_VERSION_MINOR $minor/" \
       -e "s/^#define PROBER_VERSION_PATCH .*/#define PROBER_VERSION_PATCH $patch/" crates/prober-ffi/cbindgen.toml
bash ci/header.sh
cargo update --workspace --quiet
left=$(grep -rn "\"$old\"" Cargo.toml crates/*/Cargo.toml | grep prober || true)
[ -z "$left" ] || { echo "version: still $old here:"; echo "$left"; exit 1; }
git --no-pager diff --stat
echo "version: $old -> $new"
