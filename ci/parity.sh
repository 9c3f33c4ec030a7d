#!/usr/bin/env bash
# The kubelet parity test: runs every case of tests/kubelet-parity through the kubelet's own
# probe code (k8s.io/kubernetes pkg/probe, fetched through the Go module proxy) and through
# `prober check` / `prober watch`, and fails on any difference not listed in
# tests/kubelet-parity/known-differences.txt (or on a listed one that no longer differs).
# Prints one summary line; the full log is kept in target/parity.log.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go

step "build prober (debug)"
cargo build --quiet -p prober-cli
export PROBER_BIN="$PWD/target/debug/prober"
log="$PWD/target/parity.log"

# The kubelet's User-Agent (kube-probe/MAJOR.MINOR) comes from these, as in a kubelet build.
kube_version=$(cd tests/kubelet-parity && go list -m -f '{{.Version}}' k8s.io/kubernetes)
major=${kube_version#v}; major=${major%%.*}
minor=${kube_version#v*.}; minor=${minor%%.*}
ldflags="-X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitVersion=$kube_version"

step "go vet (tests/kubelet-parity, k8s.io/kubernetes $kube_version)"
(cd tests/kubelet-parity && go vet ./...)

step "go test (tests/kubelet-parity)"
status=0
(cd tests/kubelet-parity && timeout 600 go test -count=1 -timeout 8m -ldflags "$ldflags" -v ./...) >"$log" 2>&1 || status=$?
# The differences that failed the run (case name, then both sides), then the summary.
grep -E -B1 'differs from the kubelet' -A2 "$log" | grep -v '^--$' || true
grep -E -B1 'agrees with the kubelet now' "$log" | grep -v '^--$' || true
grep -E 'which is not a case|only [0-9]+ cases|listed twice|has no reason|panic:|\.go:[0-9]+: .*(not found|reports version|bad JSON|running prober)' "$log" || true
grep -E '^[[:space:]]*--- FAIL|^(ok|FAIL)[[:space:]]' "$log" || true
grep -E '^parity: ' "$log" || echo "parity: no summary (the test did not finish; see $log)"
if [ "$status" -ne 0 ]; then
  echo "parity: FAILED (full log: $log)"
fi
exit "$status"
