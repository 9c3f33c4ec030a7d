#!/usr/bin/env bash
# A real Prometheus against `prober serve` and `prober watch --metrics` (issue 28 section 4).
#
# Prometheus is built from its Go module once (ci/go-tools.sh; cached under
# ~/.cache/prober-ci) and run on loopback with a generated configuration:
#   - job "blackbox": blackbox_exporter's relabelling (target -> __param_target and instance,
#     __address__ -> prober serve) over two targets of prober-target: /ok and /status/503;
#   - job "watch": `prober watch --metrics` behind TLS (a CA and certificate made here with
#     openssl) and basic auth (a bcrypt hash from htpasswd), two targets ready and not ready;
#   - job "watch-badauth": the same endpoint with a wrong password, which must be refused.
# Then Prometheus' own query API must show probe_success 1 and 0, prober_ready 1 and 0, and
# up 0 for the wrong password. Every wait is for the event (the series with its value),
# bounded; nothing sleeps a fixed time to let something happen.
#
# Every process is this script's child, started with stdin from /dev/null (so that the script
# also runs in the background), and stopped on exit with SIGTERM then, should a signal be
# ignored (inherited so), SIGKILL.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/go-tools.sh
need_cargo
need_go
need curl
need jq
need openssl
need htpasswd apache2-utils

# The whole test must be seen within this many seconds once Prometheus is up; the scrape
# interval is 1 s, so this is dozens of intervals: generous for a loaded CI machine.
DEADLINE_S=${PROBER_PROMETHEUS_DEADLINE_S:-120}

step "Prometheus $PROMETHEUS_MODULE_VERSION (built once from its Go module)"
prometheus=$(tool_path prometheus)
echo "$prometheus"

step "build prober and prober-target"
cargo build --quiet --locked -p prober-cli -p prober-testkit
prober=$PWD/target/debug/prober
target_bin=$PWD/target/debug/prober-target

with_scratch prober-prometheus

fail() { echo "FAIL: $*" >&2; exit 1; }

# The first line of FILE matching the extended regex RE, with the match's first group, once
# it appears (PID must stay alive meanwhile); bounded by 30 s.
wait_line() {
  local file=$1 re=$2 pid=$3 what=$4 line
  for _ in $(seq 300); do
    line=$(sed -nE "s#$re#\\1#p" "$file" 2>/dev/null | head -n 1)
    [ -n "$line" ] && { echo "$line"; return 0; }
    kill -0 "$pid" 2>/dev/null || fail "$what exited: $(cat "$file")"
    sleep 0.1
  done
  fail "$what did not start within 30 s: $(cat "$file")"
}

# ---- the probed server ------------------------------------------------------------------------
"$target_bin" --ignore-stdin </dev/null >"$dir/target.out" 2>"$dir/target.log" &
pids+=($!)
target_port=$(wait_line "$dir/target.out" '^([0-9]+)$' "$!" prober-target)
T=127.0.0.1:$target_port

# ---- prober serve -----------------------------------------------------------------------------
cat >"$dir/blackbox.yml" <<'EOF'
modules:
  http_2xx:
    prober: http
    timeout: 5s
    allow:
      networks: ['127.0.0.0/8']
EOF
"$prober" serve --config "$dir/blackbox.yml" --listen 127.0.0.1:0 </dev/null >"$dir/serve.log" 2>&1 &
pids+=($!)
serve_addr=$(wait_line "$dir/serve.log" '.*listening on http://([0-9.:]+).*' "$!" "prober serve")
echo "prober serve at $serve_addr"

# ---- prober watch --metrics, TLS and basic auth -------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=prober \
  -keyout "$dir/prober.key" -out "$dir/prober.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/ext.cnf"
openssl x509 -req -in "$dir/prober.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days 2 -extfile "$dir/ext.cnf" -out "$dir/prober.crt" 2>/dev/null
password=$(openssl rand -hex 12)
printf '%s' "$password" >"$dir/password"
printf 'wrong-%s' "$password" >"$dir/wrong-password"
hash=$(htpasswd -nbB -C 10 prometheus "$password" | cut -d: -f2-)
cat >"$dir/web.yml" <<EOF
tls_server_config:
  cert_file: prober.crt
  key_file: prober.key
basic_auth_users:
  prometheus: '$hash'
EOF
cat >"$dir/watch.yaml" <<EOF
targets:
  - name: up
    readinessProbe:
      httpGet: {host: 127.0.0.1, port: $target_port, path: /ok}
      periodMilliseconds: 500
  - name: down
    readinessProbe:
      httpGet: {host: 127.0.0.1, port: $target_port, path: /status/503}
      periodMilliseconds: 500
      failureThreshold: 1
EOF
"$prober" watch "$dir/watch.yaml" --metrics 127.0.0.1:0 --web-config "$dir/web.yml" \
  </dev/null >"$dir/watch.out" 2>"$dir/watch.log" &
pids+=($!)
watch_addr=$(wait_line "$dir/watch.log" '.*metrics at https://([0-9.:]+)/metrics.*' "$!" "prober watch")
echo "prober watch --metrics at https://$watch_addr (TLS, basic auth)"

# ---- Prometheus -------------------------------------------------------------------------------
cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: blackbox
    metrics_path: /probe
    params: {module: [http_2xx]}
    static_configs:
      - targets: ['http://$T/ok', 'http://$T/status/503']
    relabel_configs:
      - {source_labels: [__address__], target_label: __param_target}
      - {source_labels: [__param_target], target_label: instance}
      - {target_label: __address__, replacement: '$serve_addr'}
  - job_name: watch
    scheme: https
    tls_config: {ca_file: $dir/ca.crt}
    basic_auth: {username: prometheus, password_file: $dir/password}
    static_configs: [{targets: ['$watch_addr']}]
  - job_name: watch-badauth
    scheme: https
    tls_config: {ca_file: $dir/ca.crt}
    basic_auth: {username: prometheus, password_file: $dir/wrong-password}
    static_configs: [{targets: ['$watch_addr']}]
EOF
# Prometheus cannot be told to pick a port and say which; take one that is free now.
. bench/lib.sh
prom_port=$(free_port)
"$prometheus" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$prom_port" </dev/null >"$dir/prometheus.log" 2>&1 &
prom_pid=$!
pids+=("$prom_pid")
api=http://127.0.0.1:$prom_port
for i in $(seq 300); do
  curl -fsS "$api/-/ready" >/dev/null 2>&1 && break
  kill -0 "$prom_pid" 2>/dev/null || fail "Prometheus exited"
  [ "$i" = 300 ] && fail "Prometheus was not ready within 30 s"
  sleep 0.1
done
echo "Prometheus at $api"

# query PROMQL: "LABEL_VALUE VALUE" lines for each series (LABEL from $label).
query() {
  curl -fsS --get "$api/api/v1/query" --data-urlencode "query=$1" |
    jq -r --arg l "$2" '.data.result[] | "\(.metric[$l]) \(.value[1])"' | sort
}

# expect PROMQL LABEL WANT: polls until the answer is WANT (the sorted lines above).
expect() {
  local promql=$1 label=$2 want=$3 got= start=$SECONDS
  while :; do
    got=$(query "$promql" "$label" 2>/dev/null || true)
    if [ "$got" = "$want" ]; then
      echo "ok: $promql -> $(echo "$got" | paste -sd, -) (after $((SECONDS - start)) s)"
      return 0
    fi
    if [ $((SECONDS - start)) -ge "$DEADLINE_S" ]; then
      echo "FAIL: $promql: want" >&2; echo "$want" | sed 's/^/    /' >&2
      echo "  got (after $DEADLINE_S s)" >&2; echo "${got:-(nothing)}" | sed 's/^/    /' >&2
      echo "  targets:" >&2
      curl -fsS "$api/api/v1/targets" |
        jq -r '.data.activeTargets[] | "    \(.labels.job) \(.labels.instance) \(.health) \(.lastError)"' >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

status=0
expect 'probe_success{job="blackbox"}' instance "http://$T/ok 1
http://$T/status/503 0" || status=1
expect 'probe_http_status_code{job="blackbox"}' instance "http://$T/ok 200
http://$T/status/503 503" || status=1
expect 'prober_ready{job="watch"}' target "down 0
up 1" || status=1
expect 'up' job "blackbox 1
blackbox 1
watch 1
watch-badauth 0" || status=1
# Why the wrong password's scrape failed, as Prometheus reports it.
reason=$(curl -fsS "$api/api/v1/targets" |
  jq -r '.data.activeTargets[] | select(.labels.job == "watch-badauth") | .lastError')
case $reason in
  *401*) echo "ok: the wrong password is refused: $reason" ;;
  *) echo "FAIL: watch-badauth: want a 401, got: $reason" >&2; status=1 ;;
esac
exit $status
