#!/usr/bin/env bash
# The blackbox parity test: runs the cases of blackbox_exporter's own unit tests
# (tests/blackbox-parity, ported from its prober/*_test.go) through a real blackbox_exporter
# (built once from its Go module by ci/go-tools.sh) and a real `prober serve`, and fails on a
# difference not listed in tests/blackbox-parity/known-differences.txt (whose IDs are the rows
# of docs/cli.md's table "Differences from blackbox_exporter").
# Prints the differences and the summary; the full log is kept in target/blackbox-parity.log.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/go-tools.sh
need_cargo
need_go
# The icmp cases run exporters in namespaces the harness makes and without CAP_NET_RAW.
need ip iproute2
need setpriv util-linux
# The dns cases also query Debian's nsd (cases_dns_nsd.go); it lives in /usr/sbin.
export PATH="$PATH:/usr/sbin"
need nsd nsd
# The release whose tests/blackbox-parity cases are ported (ci/bench.sh keeps its own).
BLACKBOX_VERSION=$BLACKBOX_PARITY_VERSION

step "build prober (debug)"
cargo build --quiet -p prober-cli
prober="$PWD/target/debug/prober"

step "blackbox_exporter $BLACKBOX_VERSION (cached build)"
blackbox=$(tool_path blackbox_exporter)

# Its source: the config cases read its config/testdata files (nothing of it is kept here).
upstream=$(_tool_modcache_dir "github.com/prometheus/blackbox_exporter@$BLACKBOX_VERSION")
[ -d "$upstream/config/testdata" ] || { echo "blackbox parity: no config/testdata in $upstream" >&2; exit 1; }

step "go vet and build (tests/blackbox-parity)"
(cd tests/blackbox-parity && GOWORK=off go vet . && GOWORK=off go build -o "$OLDPWD/target/blackbox-parity" .)

step "blackbox parity (blackbox_exporter $BLACKBOX_VERSION against prober serve)"
log="$PWD/target/blackbox-parity.log"
status=0
(cd tests/blackbox-parity && timeout 600 "$OLDPWD/target/blackbox-parity" \
  -blackbox "$blackbox" -prober "$prober" -upstream "$upstream" -list known-differences.txt -doc ../../docs/cli.md) \
  >"$log" 2>&1 || status=$?
# The unlisted differences, the listed cases that agree now, harness errors, then the counts.
grep -E '^differ [^ ]+: |\(listed: remove from the list\)|^harness: ' "$log" || true
grep -E '^file |^[0-9]+ passed, [0-9]+ failed$' "$log" || echo "blackbox parity: no summary (see $log)"
if [ "$status" -ne 0 ]; then
  echo "blackbox parity: FAILED (full log: $log)"
fi
exit "$status"
