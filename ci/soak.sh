#!/usr/bin/env bash
# Soak run (not part of ci/test.sh): ci/soak.sh [PROBES] [CONCURRENCY]
# One million (default) mixed one-shot probes (HTTP, 20% of all keep-alive, 5% of all
# against a server that closes or resets its connections now and then; TCP; about 1.5% exec)
# through one engine, against prober-target and two keep-alive servers in processes of their
# own. Checks that no event is lost or duplicated, every result is the expected one, and that
# descriptors (less the idle connections the engine keeps), child processes, threads and RSS
# are back at their baseline at the end and where they were before the engine once it is
# dropped (details in crates/prober-soak/src/main.rs). The full log is
# kept in target/soak.log; docs/reliability.md has the figures of a full run.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

probes=${1:-1000000}
concurrency=${2:-256}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

step "build prober-soak and prober-target (release)"
cargo build --release --locked --quiet -p prober-soak -p prober-testkit --bins

step "soak: $probes probes, at most $concurrency in flight"
start=$(date +%s)
set +e
target/release/prober-soak --probes "$probes" --concurrency "$concurrency" \
  --target-bin target/release/prober-target 2>&1 | tee target/soak.log
status=${PIPESTATUS[0]}
set -e
echo "soak: exit status $status after $(( $(date +%s) - start )) s (log: target/soak.log)"
exit "$status"
