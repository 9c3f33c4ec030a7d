#!/usr/bin/env bash
# Probes of a real container (issue 29): a runc container made by ci/runc-container.sh (busybox
# httpd on the container's own 127.0.0.1), probed
# - with exec probes inside its namespaces: `prober check --namespaces-of PID`, a watch file's
#   `namespacesOf:`;
# - with network probes through its /proc/PID/ns/net, on all four surfaces: `prober check
#   --netns`, a watch file's `netns:` beside a host target on the same port, a C program against
#   libprober (c-tests/container_netns.c) and the Go binding (go test -tags prober_container).
# The container (and the host's server) are torn down even when a check fails. Needs root and
# Go (CI has both): fails, never skips, without them.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/runc-container.sh
need_cargo
[ "$(id -u)" = 0 ] || { echo "ci/namespaces.sh needs root (CI runs as root); it does not skip" >&2; exit 1; }

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
need cc gcc

step "build prober, libprober (the C program's and the Go binding's) and the C program"
cargo build --quiet -p prober-cli --bin prober
prober=$PWD/target/debug/prober
# The same builds as ci/c-tests.sh (debug) and ci/go-tests.sh (release, which the Go binding
# links), both with test-panic, so that ci/test.sh builds each once.
cargo build --quiet -p prober-ffi --features test-panic
cargo build --quiet --release -p prober-ffi --features test-panic
# The Go package's TestMain starts prober-target (and fails without it), as in ci/go-tests.sh.
cargo build --quiet -p prober-testkit --bin prober-target
export PROBER_TARGET_BIN="$PWD/target/debug/prober-target"
work=$(mktemp -d)
cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$work/container_netns" c-tests/container_netns.c \
  target/debug/libprober.a -lpthread -ldl -lm -lrt -lutil -lgcc_s -lc

name=prober-ci-$$
# A port that nothing on the host listens on, so that "unreachable from the host" means it.
port=$((20000 + $$ % 20000))
host_httpd=
cleanup() {
  [ -z "$host_httpd" ] || kill "$host_httpd" 2>/dev/null || true
  runc_container_stop "$name"
  rm -rf "$work"
}
trap cleanup EXIT

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

netns=/proc/$pid/ns/net
url=http://127.0.0.1:$port/
step "network probes through the container's $netns: prober check --netns"
check 0 "hello from $name" --netns "$netns" "$url"
check 0 '"result":"success"' --netns "$netns" "tcp://127.0.0.1:$port"

step "C: libprober's one-shot check and engine, prober_spec_set_netns"
"$work/container_netns" "$netns" "$url" "hello from $name" || fail "c-tests/container_netns.c"

step "Go: Spec.Netns (go test -tags prober_container)"
(cd bindings/go && PROBER_CONTAINER_NETNS=$netns PROBER_CONTAINER_URL=$url \
  PROBER_CONTAINER_BODY="hello from $name" \
  go test -tags prober_container -run '^TestContainerNetns$' -count=1 ./prober) ||
  fail "the Go binding's container test"

step "a server on the host on the same port: each probe reaches its own"
# The host's server has /host.html and no index (/ is a 404 there); the container's has only
# its index. A probe that reached the other server would fail.
mkdir -p "$work/www"
echo "hello from the host" >"$work/www/host.html"
busybox httpd -f -p "127.0.0.1:$port" -h "$work/www" &
host_httpd=$!
for _ in $(seq 100); do
  "$prober" check --timeout 1s "http://127.0.0.1:$port/host.html" >/dev/null 2>&1 && break
  kill -0 "$host_httpd" 2>/dev/null || fail "busybox httpd on the host did not start"
  sleep 0.1
done
check 0 'hello from the host' "http://127.0.0.1:$port/host.html"
check 1 '"http_status":404' "$url"
check 0 "hello from $name" --netns "$netns" "$url"

step "a watch file: netns: beside a host target, and with namespacesOf: on one target"
cat >"$work/watch-netns.yaml" <<EOF
targets:
- name: container
  netns: $netns
  readinessProbe:
    httpGet: {path: /, port: $port}
    periodMilliseconds: 200
- name: host
  readinessProbe:
    httpGet: {path: /host.html, port: $port}
    periodMilliseconds: 200
- name: container-both
  netns: $netns
  namespacesOf: $pid
  readinessProbe:
    httpGet: {path: /, port: $port}
    periodMilliseconds: 200
  livenessProbe:
    exec: {command: [wget, -q, -O, /dev/null, "http://127.0.0.1:$port/"]}
    periodMilliseconds: 200
EOF
"$prober" watch --until-ready --for 60s "$work/watch-netns.yaml" ||
  fail "not every target of the netns watch file became ready"

step "a container that is gone"
runc_container_stop "$name"
check 2 "could not enter the namespaces of process $pid: no such process" --namespaces-of "$pid" -- true
check 2 '"reason":"namespace"' --netns "$netns" "$url"

step "namespaces: all checks passed"
