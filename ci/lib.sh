# Shared helpers for the ci/ scripts (sourced, not run).

step() { printf '\n=== %s\n' "$*"; }

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
  command -v cargo >/dev/null 2>&1 || { echo "ci: cargo not found (Rust 1.85 or newer is needed)" >&2; exit 1; }
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
