#!/usr/bin/env bash
# The measurements behind the resource requests of deploy/ (deploy/README.md): CPU and peak
# RSS of
#   - `prober serve` answering a steady /probe load (RATE a second, 8 keep-alive clients;
#     HTTP module, a new connection per probe to prober-target on loopback) for SECONDS;
#   - `prober watch --metrics` with the DaemonSet's watch file shape (4 HTTP and TCP targets)
#     at a 1 s period, ten times the DaemonSet's 10 s, scraped once a second, for SECONDS.
# CPU is utime+stime of the process from /proc/PID/stat over the measured time, in
# millicores; RSS is VmHWM. Release build of this checkout (the image's is the static musl
# build of the same code).
#
#   deploy/measure.sh [RATE] [SECONDS]      defaults: 20 /probe a second, 60 s
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/go-tools.sh
need_cargo
need_go
need curl
rate=${1:-20} secs=${2:-60}

cargo build --release --quiet --locked -p prober-cli -p prober-testkit
prober=$PWD/target/release/prober
dir=$(mktemp -d /tmp/prober-measure.XXXXXX)
(cd bench/serve_load && go build -o "$dir/serve_load" .)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# The first line of FILE that the sed expression S prints, once there (30 s at most).
first() {
  local out
  for _ in $(seq 300); do
    out=$(sed -n "$2" "$1" 2>/dev/null | head -n 1)
    [ -n "$out" ] && { echo "$out"; return 0; }
    sleep 0.1
  done
  echo "deploy/measure.sh: nothing in $1:" >&2; cat "$1" >&2; return 1
}
ticks() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

target/release/prober-target --ignore-stdin </dev/null >"$dir/target.out" 2>&1 &
pids+=($!)
port=$(first "$dir/target.out" '/^[0-9]*$/p')

printf 'modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n' >"$dir/blackbox.yml"
"$prober" serve --config "$dir/blackbox.yml" --listen 127.0.0.1:0 </dev/null >"$dir/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
addr=$(first "$dir/serve.log" 's#.*listening on http://\([0-9.:]*\).*#\1#p')
"$dir/serve_load" -url "http://$addr/probe?module=http_2xx&target=http://127.0.0.1:$port/ok" \
  -pid "$serve_pid" -n $((rate * secs)) -conc 8 -warmup 100 -rate "$rate" -label serve_steady

cat >"$dir/watch.yaml" <<EOF
targets:
  - {name: kubelet, readinessProbe: {httpGet: {host: 127.0.0.1, port: $port, path: /ok}, periodSeconds: 1}}
  - {name: kube-proxy, readinessProbe: {httpGet: {host: 127.0.0.1, port: $port, path: /ok}, periodSeconds: 1}}
  - {name: apiserver, readinessProbe: {tcpSocket: {host: 127.0.0.1, port: $port}, periodSeconds: 1}}
  - {name: cluster-dns, readinessProbe: {tcpSocket: {host: 127.0.0.1, port: $port}, periodSeconds: 1}}
EOF
"$prober" watch "$dir/watch.yaml" --metrics 127.0.0.1:0 </dev/null >"$dir/watch.out" 2>"$dir/watch.log" &
watch_pid=$!
pids+=("$watch_pid")
maddr=$(first "$dir/watch.log" 's#.*metrics at http://\([0-9.:]*\)/metrics.*#\1#p')
curl -fsS "http://$maddr/metrics" >/dev/null
t0=$(ticks "$watch_pid") start=$(date +%s.%N)
for _ in $(seq "$secs"); do
  curl -fsS "http://$maddr/metrics" >/dev/null
  sleep 1 # the scrape interval being measured, not a wait for an event
done
t1=$(ticks "$watch_pid") end=$(date +%s.%N)
awk -v t="$((t1 - t0))" -v s="$start" -v e="$end" -v h="$(hwm "$watch_pid")" 'BEGIN {
  printf "BENCH scenario=watch_steady impl=prober targets=4 period_s=1 scrape_s=1 wall_s=%.1f cpu_millicores=%.1f rss_kb=%d\n",
    e - s, t * 10 / (e - s), h }'
