#!/usr/bin/env bash
# Runs every test suite of libprober. This is the command the README gives and .ci/run calls.
# It installs or finds what the suites need by itself; a fresh machine must pass it.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

# Tests run many probes, children and sockets at once; make sure the descriptor limit allows it.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

step "include/prober.h is what cbindgen generates"
bash ci/header.sh --check

step "the C ABI only grows (abidiff against abi/, self-test, old client)"
bash ci/abi-check.sh --self-test
bash ci/abi-check.sh

step "lints: the house rules (ci/house.sh), rustfmt, clippy and rustdoc with warnings denied, gofmt"
bash ci/house.sh
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt clippy
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked --quiet -- -D warnings
# Without default features (no TLS): code behind `#[cfg(feature = "tls")]` leaves other code
# dead or irrefutable, and only this build sees it. Clippy lints every workspace crate it builds
# for the facade, so the TLS-bearing crates under it (engine, http, grpc, transport) are covered.
cargo clippy -p prober --no-default-features --all-targets --locked --quiet -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
# The fuzz targets live outside the workspace (cargo-fuzz's layout); they must keep building
# against the library's API (ci/fuzz.sh runs them).
cargo check --manifest-path fuzz/Cargo.toml --bins --locked --quiet

step "the facade's feature combinations the README promises (default: TLS on; without TLS)"
cargo check -p prober --locked --quiet
cargo check -p prober --no-default-features --locked --quiet
cargo check -p prober --features dns --locked --quiet

step "the declared rust-version builds the workspace (ci/msrv.sh)"
bash ci/msrv.sh

step "the crates package and build from their .crate files (cargo publish --dry-run)"
# Every published crate is packaged and built from its .crate in dependency order, against
# the others' packages (not the workspace): a dev-dependency on a crate above it, or a file
# outside its directory, fails here. --allow-dirty: a dry run publishes nothing, and CI may run
# on an uncommitted tree.
# Cargo takes the packaged crates as if they came from crates.io, whose crates never change: it
# neither unpacks a name and version it finds in ~/.cargo/registry/src again nor rebuilds one it
# has built. A previous dry run's sources and builds of the same version would be verified
# instead of these: remove ours first (the dry run has a target directory of its own, so that
# only its builds of our crates go, and the other crates' builds are kept).
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  for crate in crates/*/; do
    rm -rf "$dir$(basename "$crate")-$version"
  done
done
publish_dir=target/publish
rm -rf "$publish_dir/package"
if [ -d "$publish_dir/debug" ]; then
  find "$publish_dir/debug" -mindepth 2 -maxdepth 2 \( -name 'prober*' -o -name 'libprober*' \) \
    -exec rm -rf {} +
fi
cargo publish --workspace --dry-run --locked --allow-dirty --quiet --target-dir "$publish_dir"

# The gRPC suites build grpc-go's own health server (Go 1.24+, modules from the Go proxy).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
# The proxy suites (prober-http's tests/proxy.rs and those of prober check and serve) run
# Debian's tinyproxy on loopback.
need tinyproxy tinyproxy
# The DNS suites (prober-dns's tests/nsd.rs) run Debian's nsd on loopback; it lives in /usr/sbin.
export PATH="$PATH:/usr/sbin"
need nsd nsd
unformatted=$(gofmt -l bindings bench tests 2>/dev/null || true)
[ -z "$unformatted" ] || { echo "gofmt: these files are not formatted:"; echo "$unformatted"; exit 1; }

step "other platforms compile (FreeBSD)"
bash ci/platforms.sh

step "cargo test --workspace"
cargo test --workspace --locked 2>&1

step "the server-side parsers, fuzzed briefly (ci/fuzz.sh)"
# What a client sends the endpoints (prober-httpd's request head and basic credentials, prober
# serve's query and scrape-timeout header) is parsed before any authentication, and a panic in
# that parsing once killed the server's thread; the web config is read by the same crate. Each
# of these targets runs 20 s on every CI run, so that a regression is found here (the full set
# of targets runs in ci/fuzz.sh, outside CI's budget).
FUZZ_TARGETS="httpd_head httpd_query httpd_auth web_config" bash ci/fuzz.sh 20

step "kubelet parity (the kubelet's own pkg/probe against prober on the same servers)"
bash ci/parity.sh

step "blackbox parity (blackbox_exporter's own test cases against prober serve)"
bash ci/blackbox-parity.sh

step "C suite (ctest: plain, ASan+UBSan, valgrind)"
bash ci/c-tests.sh

# The C suite's builds (two CMake trees of 36 statically linked tests) are not used again.
prune_ci_builds target/c-tests

step "a runc container: exec probes in its namespaces, network probes through its netns (ci/namespaces.sh)"
bash ci/namespaces.sh

step "HTTP over a Unix socket against nginx"
bash ci/nginx-unix.sh

step "a real Prometheus scrapes prober serve (blackbox relabelling) and prober watch (TLS, bcrypt)"
bash ci/prometheus.sh

step "deploy/ manifests: server-side dry run against a real kube-apiserver (ci/deploy-check.sh)"
bash ci/deploy-check.sh

step "Go binding (go vet, go test -race, -tags debug, installed copy)"
bash ci/go-tests.sh

step "packaging (symbols, SONAME, pkg-config, find_package, C example)"
bash ci/package-check.sh

# Before the arm64 build (the largest after the native one): the native builds no later step
# uses (the packaging dry run's, the MSRV check's, the fuzzers').
prune_ci_builds target/publish target/msrv fuzz/target target/debug/incremental

step "linux/arm64: cross-built, Rust, C and Go suites under qemu-aarch64 (ci/arm64.sh)"
bash ci/arm64.sh

prune_ci_builds target/aarch64-unknown-linux-gnu/debug target/c-tests-arm64

step "the Go module with prebuilt archives, from a file:// proxy without Rust (ci/go-module-test.sh)"
bash ci/go-module-test.sh

step "static prober binaries (x86_64 and aarch64 musl) that probe a local server"
musl_status=0
bash ci/musl.sh || musl_status=$?
case $musl_status in
  0) ;;
  3) echo "NOTE: the static musl build was NOT RUN: this machine cannot install its target (see above)" ;;
  *) exit "$musl_status" ;;
esac

step "all suites passed"
