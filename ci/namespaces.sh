#!/usr/bin/env bash
# Exec probes inside a real container's namespaces (issue 29): a runc container made by
# ci/runc-container.sh (busybox httpd on the container's own 127.0.0.1), probed with
# `prober check --namespaces-of PID` and a watch file's `namespacesOf:`. The container is torn
# down even when a check fails. Needs root (CI runs as root): fails, never skips, without it.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/runc-container.sh
need_cargo
[ "$(id -u)" = 0 ] || { echo "ci/namespaces.sh needs root (CI runs as root); it does not skip" >&2; exit 1; }

step "build prober"
cargo build --quiet -p prober-cli --bin prober
prober=$PWD/target/debug/prober

name=prober-ci-$$
# A port that nothing on the host listens on, so that "unreachable from the host" means it.
port=$((20000 + $$ % 20000))
work=$(mktemp -d)
trap 'runc_container_stop "$name"; rm -rf "$work"' EXIT

step "start a runc container ($name, httpd on its own 127.0.0.1:$port)"
pid=$(runc_container_start "$name" "$port")
echo "container init: PID $pid"

fail() { echo "FAILED: $*" >&2; exit 1; }
# check WANT_EXIT WANT_IN_OUTPUT ARGS...: prober check --json ARGS; its exit status and that
# its JSON line contains WANT_IN_OUTPUT.
check() {
  local want_exit=$1 want=$2 got=0 out
  shift 2
  out=$("$prober" check --json "$@") || got=$?
  echo "prober check $*: exit $got: $out"
  [ "$got" = "$want_exit" ] || fail "exit $got, expected $want_exit"
  [[ "$out" == *"$want"* ]] || fail "no '$want' in the output"
}

step "exec probes inside the container"
check 0 "\"output\":\"$name\\n\"" --namespaces-of "$pid" -- hostname
check 0 "hello from $name" --namespaces-of "$pid" -- wget -q -O - "http://127.0.0.1:$port/"
check 0 'httpd' --namespaces-of "$pid" -- cat /proc/1/cmdline
check 1 '"reason":"exit_code"' --namespaces-of "$pid" -- sh -c 'exit 3'
check 2 'in the namespaces of process' --namespaces-of "$pid" -- /no/such/program

step "the same server is out of the host's reach"
check 1 '"result":"failure"' --timeout 2s "http://127.0.0.1:$port/"

step "a timeout kills the command inside; nothing is left running"
check 1 '"reason":"timeout"' --timeout 300ms --namespaces-of "$pid" -- sleep 987653
if runc ps "$name" | grep -q 987653; then
  runc ps "$name"
  fail "the timed-out command is still running in the container"
fi

step "a watch file's namespacesOf: ready once the probe inside passes"
cat >"$work/watch.yaml" <<EOF
targets:
- name: inside
  namespacesOf: $pid
  readinessProbe:
    exec: {command: [wget, -q, -O, /dev/null, "http://127.0.0.1:$port/"]}
    periodMilliseconds: 200
EOF
"$prober" watch --until-ready --for 60s "$work/watch.yaml" || fail "the target inside did not become ready"

step "a container that is gone"
runc_container_stop "$name"
check 2 "could not enter the namespaces of process $pid: no such process" --namespaces-of "$pid" -- true

step "namespaces: all checks passed"
