#!/usr/bin/env bash
# Benchmarks of libprober against baselines run in the same invocation. Measures; never fails
# on a number (docs/benchmarks.md explains every scenario, field and target).
#
#   ci/bench.sh [SCENARIO...]      default: every scenario, in this order:
#     tcp_oneshot c_api go_api http_oneshot https_oneshot https_resume https_threads http_keepalive
#     https_keepalive grpc_oneshot grpc_keepalive exec_oneshot sched_10k sched_100k_idle sched_1m
#     netns_http netns_exec netns_scale serve_probe dns_query icmp_echo
#   on demand only (run when named): sched_100k
#
# Environment:
#   PROBER_BENCH_TARGET=HOST:PORT  use a target that is already running (it must answer GET
#                                  PROBER_BENCH_PATH with 2xx) instead of starting one
#   PROBER_BENCH_PATH=/            the HTTP path probed (default /)
#   PROBER_BENCH_QUICK=1           smoke run: small counts, short periodic runs, one repetition
#   PROBER_BENCH_REPS=N            repetitions of each one-shot measurement (default 3, exec 5;
#                                  the median by cpu_us_per_probe, for exec by rate, is reported)
#   PROBER_BENCH_NICE=N            run the target and the probing programs under `nice -n N`
#                                  (e.g. -20 as root: keeps other load on a shared machine from
#                                  delaying them; the figures of record use the default)
#   PROBER_BENCH_CLOUDPROBER=1|0   add cloudprober (impl=cloudprober, the self-scheduling peer)
#                                  to sched_10k and sched_100k; default: on when sched_100k is
#                                  named, else off. Built once from its Go module (about 3
#                                  minutes of CPU) and cached like blackbox_exporter
#
# The target is nginx from the distribution's packages (installed with apt-get when missing
# and possible; one worker, a config in a temp dir, a loopback port, `return 200 "ok\n"`),
# else the repository's prober-target (then the keep-alive scenarios are unavailable).
# grpc_oneshot's and grpc_keepalive's target is grpc-go's health server from crates/prober-testkit, built with Go
# (google.golang.org/grpc comes from the module proxy). Every probing program runs as its own
# process, so the target's CPU never counts. serve_probe compares `prober serve` with
# blackbox_exporter (built from its Go module once, ci/go-tools.sh) under the same /probe load:
# the exporter process's own CPU per /probe. dns_query and icmp_echo (bench/dns_icmp.sh): CPU
# per DNS query against bench/raw_dns.c and blackbox_exporter's dns module (the server: Debian's
# nsd), CPU per ICMP echo against fping and blackbox_exporter's icmp module. Output: per-repetition lines prefixed "# rep", then one
# `BENCH scenario=... impl=... key=value ...` line per measurement, a table, and
# `RATIO ...` lines comparing libprober with its targets.
#
# Containers (issue 29, section 5; root only, else unavailable): netns_http probes nginx inside
# an `ip netns` namespace (libprober against the same probe of the host's nginx, and against
# `nsenter --net=PATH curl` per probe); netns_exec runs /bin/true inside a runc container
# (ci/runc-container.sh) with libprober's exec in another process's namespaces, against
# `nsenter --target PID --all` and `runc exec` per run (their CPU counted as the children's);
# netns_scale: one engine probing 1,000 namespaces (CPU per probe, descriptors held), and the
# same on the host.
#
# Raw limits (issue 26, section 5; "Raw limits" below): every network scenario also runs a C
# loop doing the same work with the fewest syscalls (impl=raw_c): bench/raw_c.c (TCP, HTTP,
# HTTP keep-alive), bench/raw_tls.c (HTTPS, OpenSSL: libssl-dev is installed with apt-get when
# missing and possible), bench/raw_grpc.c (gRPC over h2c, frames written by hand); each
# libprober figure gets a `RATIO ... metric=cpu_vs_raw_c` line, target <= 1.25.
#
# The self-scheduling peer (issue 37, section 2): cloudprober v0.14.4 (built from its Go module
# once, ci/go-tools.sh) on the same targets and period as impl=prober in sched_10k and in the
# on-demand sched_100k (100,000 targets, period 10 s: the same 10,000 runs a second), measured
# from outside by prober-bench (crates/prober-bench/src/cloudprober): its CPU per run and its
# resident memory per target; RATIO lines cpu_vs_cloudprober and rss_vs_cloudprober, <= 0.3.
set -uo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. bench/lib.sh
. bench/dns_icmp.sh
ROOT=$PWD

ALL="tcp_oneshot c_api go_api http_oneshot https_oneshot https_resume https_threads http_keepalive https_keepalive \
grpc_oneshot grpc_keepalive exec_oneshot sched_10k sched_100k_idle sched_1m netns_http netns_exec netns_scale \
serve_probe dns_query icmp_echo"
# Run only when named: 100,000 targets against cloudprober take minutes and its build.
ON_DEMAND="sched_100k"
if [ $# -gt 0 ]; then
  SCENARIOS="$*"
  for s in $SCENARIOS; do
    case " $ALL $ON_DEMAND " in *" $s "*) ;; *) echo "ci/bench.sh: unknown scenario $s (known: $ALL; on demand: $ON_DEMAND)" >&2; exit 64 ;; esac
  done
else
  SCENARIOS=$ALL
fi

QUICK=${PROBER_BENCH_QUICK:-0}
[ "$QUICK" = 0 ] && QUICK=
if [ -n "$QUICK" ]; then
  N_TCP=4000 N_HTTP=4000 N_HTTPS=1000 N_GRPC=2000 N_GRPC_KA=4000 N_EXEC=300 SCHED_S=5 IDLE_S=3 REPS=${PROBER_BENCH_REPS:-1}
  N_NSENTER_CURL=20 N_NETNS_EXEC=100 N_NSENTER=50 N_RUNC_EXEC=10 NS_SCALE=100 NS_SCALE_S=3
  N_SERVE=1000 N_DNS=4000 N_ICMP=2000
  EXEC_REPS=$REPS
else
  N_TCP=40000 N_HTTP=40000 N_HTTPS=10000 N_GRPC=20000 N_GRPC_KA=40000 N_EXEC=3000 SCHED_S=30 IDLE_S=10 REPS=${PROBER_BENCH_REPS:-3}
  N_NSENTER_CURL=200 N_NETNS_EXEC=1000 N_NSENTER=500 N_RUNC_EXEC=100 NS_SCALE=1000 NS_SCALE_S=10
  N_SERVE=10000 N_DNS=40000 N_ICMP=20000
  EXEC_REPS=${PROBER_BENCH_REPS:-5}
fi
CONC_NET=64 CONC_EXEC=16 CONC_SERVE=8
SCHED_TARGETS=10000 IDLE_TARGETS=100000
# sched_100k: 100,000 targets at a 10 s period, sched_10k's 10,000 runs a second.
PEER_TARGETS=100000 PEER_PERIOD_MS=10000
# sched_1m (issue 37, section 2): a million targets, one period (60 s) so that each runs once;
# a smoke run adds a tenth of them and runs 5 s.
if [ -n "$QUICK" ]; then MILLION_TARGETS=100000 MILLION_S=5; else MILLION_TARGETS=1000000 MILLION_S=60; fi
URL_PATH=${PROBER_BENCH_PATH:-/}
NICE=()
[ -n "${PROBER_BENCH_NICE:-}" ] && NICE=(nice -n "$PROBER_BENCH_NICE")

WORK=$(mktemp -d /tmp/prober-bench.XXXXXX)
RUNC_NAME=
cleanup() {
  stop_netns_target
  [ -z "$RUNC_NAME" ] || bash ci/runc-container.sh stop "$RUNC_NAME"
  declare -F stop_exporters >/dev/null && stop_exporters
  stop_bench_nsd
  stop_grpc_health
  bench_stop_target
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Tens of thousands of sockets and a 100k-worker engine: raise the descriptor limit.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

want() { case " $SCENARIOS " in *" $1 "*) return 0 ;; esac; return 1; }
want_grpc() { want grpc_oneshot || want grpc_keepalive; }

# ---- raw limits (issue 26, section 5) --------------------------------------------------------
# The C loops that are each technique's physical limit (docs/benchmarks.md, "Raw limits"), kept
# in these functions: raw_limit_spec adds a scenario's raw_c line to its specs, and
# raw_limit_ratios prints the RATIO lines against them.

RAW_TLS_ERR= RAW_GRPC_ERR=

build_raw_limits() {
  if want https_oneshot || want https_keepalive; then
    # OpenSSL's headers, installed like nginx: when missing, as root, with apt-get.
    if ! printf '#include <openssl/ssl.h>\n' | cc -E -x c - >/dev/null 2>&1 &&
       [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing libssl-dev from the distribution's packages"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev; } >/dev/null 2>&1
    fi
    cc -O2 -o "$WORK/raw_tls" bench/raw_tls.c -lssl -lcrypto >"$WORK/raw_tls.log" 2>&1 || {
      RAW_TLS_ERR=build_failed; echo "raw_tls unavailable (no OpenSSL headers?)"; head -n 3 "$WORK/raw_tls.log"; }
  fi
  cc -O2 -o "$WORK/raw_grpc" bench/raw_grpc.c >"$WORK/raw_grpc.log" 2>&1 || {
    RAW_GRPC_ERR=build_failed; cat "$WORK/raw_grpc.log"; }
}

# raw_limit_spec SCENARIO ARRAY: appends the scenario's raw C loop ("raw_c CMD...") to the
# specs in ARRAY (before go_kubelet, which runs last), or records why it is unavailable.
raw_limit_spec() {
  local -n _specs=$2
  local cmd= err= t
  case $1 in
    http_keepalive) cmd="$WORK/raw_c http-keepalive ${KA_TARGET%:*} ${KA_TARGET##*:} $N_HTTP $CONC_NET $URL_PATH" ;;
    https_oneshot) t=$TLS_TARGET err=$RAW_TLS_ERR
      cmd="$WORK/raw_tls https ${t%:*} ${t##*:} $N_HTTPS $CONC_NET $URL_PATH" ;;
    https_keepalive) t=$KA_TLS_TARGET err=$RAW_TLS_ERR
      cmd="$WORK/raw_tls https-keepalive ${t%:*} ${t##*:} $N_HTTP $CONC_NET $URL_PATH" ;;
    grpc_oneshot) t=$GRPC_TARGET err=$RAW_GRPC_ERR
      cmd="$WORK/raw_grpc grpc ${t%:*} ${t##*:} $N_GRPC $CONC_NET" ;;
    grpc_keepalive) t=$GRPC_TARGET err=$RAW_GRPC_ERR
      cmd="$WORK/raw_grpc grpc-keepalive ${t%:*} ${t##*:} $N_GRPC_KA $CONC_NET" ;;
    *) return 0 ;;
  esac
  if [ -n "$err" ]; then unavailable "$1" raw_c "$err"; else _specs+=("raw_c $cmd"); fi
  return 0
}

# RATIO lines of every libprober figure against its raw limit measured in the same run
# (tcp_oneshot's and http_oneshot's are printed by the summary above).
raw_limit_ratios() {
  awk '
    function field(line, key,   i, n, parts) {
      n = split(line, parts, " ")
      for (i = 2; i <= n; i++) if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
      return "" }
    /^BENCH / { s = field($0, "scenario"); i = field($0, "impl")
      C[s, i] = field($0, "cpu_us_per_probe"); KA[s, i] = field($0, "keep_alive") }
    END {
      n = split("https_oneshot http_keepalive https_keepalive grpc_oneshot grpc_keepalive", S, " ")
      for (k = 1; k <= n; k++) {
        s = S[k]; p = C[s, "prober"]; r = C[s, "raw_c"]
        if (p == "" && r == "") continue
        note = (s ~ /keepalive/ && p != "" && KA[s, "prober"] == "0") ? " prober_keep_alive=off" : ""
        if (p == "" && s == "grpc_keepalive") note = " waiting_for=prober_grpc_keepalive"
        if (p == "" || r == "" || r + 0 == 0) {
          printf "RATIO scenario=%s metric=cpu_vs_raw_c value=- target=<=1.25 met=unknown%s\n", s, note; continue }
        v = p / r
        printf "RATIO scenario=%s metric=cpu_vs_raw_c value=%.4g target=<=1.25 met=%s%s\n", s, v, v <= 1.25 ? "yes" : "no", note }
    }' "$RESULTS"
}

# ---- build ---------------------------------------------------------------------------------

step "build"
need_cargo
need cc gcc
cargo build --release --quiet -p prober-bench -p prober-ffi -p prober-testkit -p prober-cli 2>&1 || {
  echo "ci/bench.sh: cargo build failed" >&2; exit 1; }
BENCH_BIN=$ROOT/target/release/prober-bench
cc -O2 -o "$WORK/raw_c" bench/raw_c.c || { echo "ci/bench.sh: cannot build bench/raw_c.c" >&2; exit 1; }
cc -O2 -o "$WORK/raw_spawn" bench/raw_spawn.c || { echo "ci/bench.sh: cannot build bench/raw_spawn.c" >&2; exit 1; }
build_raw_limits
# Copied first: another build in the shared target dir may replace it while we link.
cp target/release/libprober.a "$WORK/libprober.a"
C_API_ERR=
cc -O2 -std=c11 -Wall -Iinclude -o "$WORK/c_api" bench/c_api.c "$WORK/libprober.a" \
   -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc 2>"$WORK/c_api.log" || C_API_ERR="build_failed"

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
GO_KUBELET_ERR= GO_API_ERR= GO_GRPC_ERR=
if ! command -v go >/dev/null 2>&1; then
  GO_KUBELET_ERR=no_go_toolchain GO_API_ERR=no_go_toolchain GO_GRPC_ERR=no_go_toolchain
else
  (cd bench/go_kubelet && go build -o "$WORK/go_kubelet" .) >"$WORK/go_kubelet.log" 2>&1 \
    || GO_KUBELET_ERR=build_failed
  if want go_api; then
    if [ ! -d bindings/go/prober ]; then
      GO_API_ERR=no_bindings_go_prober
    elif ! (cd bench/go_api && CGO_ENABLED=1 go build -o "$WORK/go_api" .) >"$WORK/go_api.log" 2>&1; then
      GO_API_ERR="bindings_go_build_failed:$(grep -m1 -v '^#' "$WORK/go_api.log" | tr ' =' '_:' | cut -c1-120)"
    fi
  fi
  # gRPC: the kubelet's probe needs google.golang.org/grpc, fetched by `go build` from the
  # module proxy (GOPROXY) into the module cache the first time.
  if want_grpc &&
     ! (cd bench/go_kubelet_grpc && go build -o "$WORK/go_kubelet_grpc" .) >"$WORK/go_kubelet_grpc.log" 2>&1; then
    GO_GRPC_ERR=build_failed
  fi
fi
# serve_probe: the load generator (bench/serve_load) and blackbox_exporter, built once from
# its Go module through the module proxy and cached (ci/go-tools.sh).
SERVE_ERR= BLACKBOX_ERR= BLACKBOX_BIN=
if want serve_probe || want dns_query || want icmp_echo; then
  if ! command -v go >/dev/null 2>&1; then
    SERVE_ERR=no_go_toolchain
  else
    (cd bench/serve_load && go build -o "$WORK/serve_load" .) >"$WORK/serve_load.log" 2>&1 \
      || { SERVE_ERR=build_failed; cat "$WORK/serve_load.log"; }
    . ci/go-tools.sh
    BLACKBOX_BIN=$(tool_path blackbox_exporter 2>"$WORK/blackbox_build.log") \
      || { BLACKBOX_ERR=build_failed; cat "$WORK/blackbox_build.log"; }
  fi
fi
# The self-scheduling peer: cloudprober, built once from its Go module and cached
# (ci/go-tools.sh), when asked for: PROBER_BENCH_CLOUDPROBER=1, or sched_100k named.
CLOUDPROBER=${PROBER_BENCH_CLOUDPROBER:-}
if [ -z "$CLOUDPROBER" ]; then
  if want sched_100k; then CLOUDPROBER=1; else CLOUDPROBER=0; fi
fi
CLOUDPROBER_ERR= CLOUDPROBER_BIN=
if [ "$CLOUDPROBER" != 1 ]; then
  CLOUDPROBER_ERR="on_demand(PROBER_BENCH_CLOUDPROBER=1)"
elif want sched_10k || want sched_100k; then
  if ! command -v go >/dev/null 2>&1; then
    CLOUDPROBER_ERR=no_go_toolchain
  else
    . ci/go-tools.sh
    if CLOUDPROBER_BIN=$(tool_path cloudprober 2>"$WORK/cloudprober_build.log"); then
      grep '^ci: built' "$WORK/cloudprober_build.log"
      echo "cloudprober $CLOUDPROBER_VERSION: $CLOUDPROBER_BIN"
    else
      CLOUDPROBER_ERR=build_failed
      echo "cloudprober unavailable (build_failed):"; tail -n 20 "$WORK/cloudprober_build.log"
    fi
  fi
fi
[ -n "$GO_GRPC_ERR" ] && want_grpc && { echo "go_kubelet_grpc unavailable ($GO_GRPC_ERR)"; cat "$WORK/go_kubelet_grpc.log" 2>/dev/null; }
[ -n "$GO_KUBELET_ERR" ] && { echo "go_kubelet unavailable ($GO_KUBELET_ERR)"; cat "$WORK/go_kubelet.log" 2>/dev/null; }
[ -n "$GO_API_ERR" ] && { echo "go_api unavailable ($GO_API_ERR)"; cat "$WORK/go_api.log" 2>/dev/null; }

# ---- target --------------------------------------------------------------------------------

NEEDS_TARGET=
for s in $SCENARIOS; do
  case $s in exec_oneshot | grpc_oneshot | grpc_keepalive | netns_exec | netns_scale | dns_query | icmp_echo) ;;
    *) NEEDS_TARGET=1 ;;
  esac
done
TARGET= TARGET_KIND=none
if [ -n "$NEEDS_TARGET" ]; then
  step "target"
  bench_target || exit 1
  echo "target $TARGET_KIND at $TARGET (HTTP path $URL_PATH)"
fi
GRPC_ERR=
if want_grpc; then
  step "gRPC target"
  if ! command -v go >/dev/null 2>&1; then
    GRPC_ERR=no_go_toolchain
  elif start_grpc_health; then
    echo "grpc-go health server at $GRPC_TARGET"
  else
    GRPC_ERR=health_server_failed
  fi
fi
T_HOST=${TARGET%:*} T_HOST=${T_HOST#[} T_HOST=${T_HOST%]} T_PORT=${TARGET##*:}

# ---- serve_probe's exporters ---------------------------------------------------------------
# prober serve and blackbox_exporter with the same module file (CONFIG; by default serve_probe's:
# HTTP, 2xx, IPv4), each on a free loopback port, under NICE like the probing programs; stopped
# by cleanup.
SERVE_PID= BLACKBOX_PID= SERVE_ADDR= BLACKBOX_ADDR=
start_exporters() { # [CONFIG]
  local port i conf=${1:-$WORK/blackbox.yml}
  [ -n "${1:-}" ] ||
    printf 'modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      preferred_ip_protocol: ip4\n' \
      >"$conf"
  SERVE_ADDR= BLACKBOX_ADDR=
  "${NICE[@]}" "$ROOT/target/release/prober" serve --config "$conf" --listen 127.0.0.1:0 \
    </dev/null >"$WORK/serve.log" 2>&1 &
  SERVE_PID=$!
  for i in $(seq 100); do
    SERVE_ADDR=$(sed -n 's#.*listening on http://\([0-9.:]*\).*#\1#p' "$WORK/serve.log")
    [ -n "$SERVE_ADDR" ] && break
    sleep 0.1
  done
  [ -n "$SERVE_ADDR" ] || { echo "prober serve did not start:" >&2; cat "$WORK/serve.log" >&2; return 1; }
  if [ -z "$BLACKBOX_ERR" ]; then
    port=$(free_port_after 19115)
    "${NICE[@]}" "$BLACKBOX_BIN" --config.file="$conf" --web.listen-address="127.0.0.1:$port" \
      </dev/null >"$WORK/blackbox.log" 2>&1 &
    BLACKBOX_PID=$!
    for i in $(seq 100); do
      http_ok 127.0.0.1 "$port" / && { BLACKBOX_ADDR=127.0.0.1:$port; break; }
      kill -0 "$BLACKBOX_PID" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$BLACKBOX_ADDR" ] || { BLACKBOX_ERR=did_not_start; cat "$WORK/blackbox.log" >&2; }
  fi
}
stop_exporters() {
  local pid
  for pid in $SERVE_PID $BLACKBOX_PID; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  SERVE_PID= BLACKBOX_PID=
}

# ---- measuring -----------------------------------------------------------------------------

RESULTS=$WORK/results
: >"$RESULTS"

# run SCENARIO IMPL TIMEWAIT(0|1) CMD...: runs one measurement and echoes its BENCH line
# (with timewait= when asked), or a status=failed line.
run() {
  local scen=$1 impl=$2 tw=$3 start out rc line
  shift 3
  start=$(date +%s.%N)
  out=$("${NICE[@]}" "$@" 2>"$WORK/stderr")
  rc=$?
  line=$(printf '%s\n' "$out" | grep '^BENCH ' | tail -n1)
  if [ $rc -ne 0 ] || [ -z "$line" ]; then
    line="BENCH scenario=$scen impl=$impl status=failed reason=exit_$rc"
    sed 's/^/  | /' "$WORK/stderr" | tail -n 5 >&2
  else
    grep -v '^$' "$WORK/stderr" | sed "s/^/  ($impl) /" | head -n 3 >&2
    [ "$tw" = 1 ] && line="$line timewait=$(timewait_since "$T_PORT" "$start")"
  fi
  printf '%s\n' "$line"
}

unavailable() { # SCENARIO IMPL REASON
  local line="BENCH scenario=$1 impl=$2 status=unavailable reason=$3"
  echo "$line"; echo "$line" >>"$RESULTS"
}

# oneshot SCENARIO "IMPL CMD..." ...: REPS interleaved repetitions of every impl; reports each
# impl's median repetition by KEY (default cpu_us_per_probe), with the spread of cpu_us_per_probe
# (and of rate_per_s when KEY is the rate).
oneshot() {
  local scen=$1 rep i line impl key=${KEY:-cpu_us_per_probe} reps=${REPS_OVERRIDE:-$REPS}
  shift
  local -a specs=("$@")
  : >"$WORK/reps"
  for rep in $(seq "$reps"); do
    for i in "${!specs[@]}"; do
      read -r impl cmd <<<"${specs[$i]}"
      # shellcheck disable=SC2086
      line=$(run "$scen" "$impl" "${TW:-0}" $cmd)
      echo "# rep $rep: $line"
      echo "$line" >>"$WORK/reps"
    done
  done
  for i in "${!specs[@]}"; do
    read -r impl _ <<<"${specs[$i]}"
    line=$(awk -v impl="$impl" -v key="$key" '
      function val(k,   i) { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "x" }
      $0 ~ (" impl=" impl "( |$)") {
        k = val(key); if (k == "x") { failed = $0; next }
        n++; v[n] = k + 0; l[n] = $0; c = val("cpu_us_per_probe") + 0; r = val("rate_per_s") + 0
        if (n == 1 || c < cmin) cmin = c; if (n == 1 || c > cmax) cmax = c
        if (n == 1 || r < rmin) rmin = r; if (n == 1 || r > rmax) rmax = r }
      END {
        if (n == 0) { print failed; exit }
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) {
          t = v[i]; v[i] = v[j]; v[j] = t; t = l[i]; l[i] = l[j]; l[j] = t }
        printf "%s reps=%d median_of=%s cpu_us_min=%.2f cpu_us_max=%.2f", l[int((n + 1) / 2)], n, key, cmin, cmax
        if (key == "rate_per_s") printf " rate_min=%.1f rate_max=%.1f", rmin, rmax
        printf "\n" }' "$WORK/reps")
    echo "$line"; echo "$line" >>"$RESULTS"
  done
}

single() { # SCENARIO IMPL TIMEWAIT CMD...
  local line
  line=$(run "$@")
  echo "$line"; echo "$line" >>"$RESULTS"
}

# peer_cloudprober SCENARIO TARGETS PERIOD_MS: cloudprober on a periodic scenario's targets
# and period, GOMAXPROCS 1 (impl=prober's one engine thread); after the Go model, its FIN
# closes leaving TIME_WAIT sockets as go_kubelet's do.
peer_cloudprober() {
  if [ -n "$CLOUDPROBER_ERR" ]; then unavailable "$1" cloudprober "$CLOUDPROBER_ERR"; return 0; fi
  single "$1" cloudprober 1 "$BENCH_BIN" cloudprober --bin "$CLOUDPROBER_BIN" --target "$TARGET" \
    --targets "$2" --period-ms "$3" --duration-s "$SCHED_S" --gomaxprocs 1 --work "$WORK" \
    --label "$1" --impl cloudprober
}

step "machine"
echo "nproc=$(nproc) cpu=\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')\" kernel=$(uname -r)"
echo "loadavg=\"$(cut -d' ' -f1-3 /proc/loadavg)\" quick=${QUICK:-0} reps=$REPS nice=${PROBER_BENCH_NICE:-0}"

GOK=$WORK/go_kubelet
for s in $SCENARIOS; do
  step "$s"
  case $s in
    tcp_oneshot)
      specs=("prober $BENCH_BIN tcp_oneshot --target $TARGET --n $N_TCP --conc $CONC_NET"
             "raw_c $WORK/raw_c tcp $T_HOST $T_PORT $N_TCP $CONC_NET"
             "raw_c_reuse $WORK/raw_c tcp-reuse $T_HOST $T_PORT $N_TCP $CONC_NET")
      [ -z "$GO_KUBELET_ERR" ] && specs+=("go_kubelet $GOK tcp_oneshot -target $TARGET -n $N_TCP -conc $CONC_NET")
      TW=1 oneshot tcp_oneshot "${specs[@]}"
      [ -n "$GO_KUBELET_ERR" ] && unavailable tcp_oneshot go_kubelet "$GO_KUBELET_ERR"
      ;;
    http_oneshot)
      specs=("prober $BENCH_BIN http_oneshot --target $TARGET --path $URL_PATH --n $N_HTTP --conc $CONC_NET"
             "raw_c $WORK/raw_c http $T_HOST $T_PORT $N_HTTP $CONC_NET $URL_PATH"
             "raw_c_reuse $WORK/raw_c http-reuse $T_HOST $T_PORT $N_HTTP $CONC_NET $URL_PATH")
      [ -z "$GO_KUBELET_ERR" ] && specs+=("go_kubelet $GOK http_oneshot -target $TARGET -path $URL_PATH -n $N_HTTP -conc $CONC_NET")
      TW=1 oneshot http_oneshot "${specs[@]}"
      [ -n "$GO_KUBELET_ERR" ] && unavailable http_oneshot go_kubelet "$GO_KUBELET_ERR"
      ;;
    https_oneshot)
      # nginx's TLS listener (a self-signed certificate, no session cache or tickets); every
      # implementation makes a full handshake per probe, as the kubelet does.
      if [ -z "${TLS_TARGET:-}" ]; then
        unavailable https_oneshot prober "no_tls_target($TARGET_KIND)"
      else
        specs=("prober $BENCH_BIN https_oneshot --target $TLS_TARGET --path $URL_PATH --n $N_HTTPS --conc $CONC_NET")
        raw_limit_spec https_oneshot specs
        [ -z "$GO_KUBELET_ERR" ] && specs+=("go_kubelet $GOK https_oneshot -target $TLS_TARGET -path $URL_PATH -n $N_HTTPS -conc $CONC_NET")
        oneshot https_oneshot "${specs[@]}"
        [ -n "$GO_KUBELET_ERR" ] && unavailable https_oneshot go_kubelet "$GO_KUBELET_ERR"
      fi
      ;;
    https_resume)
      # TLS session resumption (issue 37, section 3): https_oneshot's GETs of one spec against
      # nginx's listener that resumes (session cache and tickets on), with resumption on
      # (impl=prober: the spec's prepared plan keeps its sessions; the line counts the runs
      # that resumed) and off (prober_full: a full handshake each, as the kubelet), over TLS
      # 1.3 (nginx's default) and limited to TLS 1.2 (_tls12), interleaved.
      if [ -z "${RESUME_TLS_TARGET:-}" ]; then
        unavailable https_resume prober "no_tls_target($TARGET_KIND)"
      else
        specs=()
        for v in 1.3 1.2; do
          sfx=; [ "$v" = 1.2 ] && sfx=_tls12
          for on in 1 0; do
            impl=prober; [ "$on" = 0 ] && impl=prober_full
            impl=$impl$sfx
            specs+=("$impl $BENCH_BIN https_resume --target $RESUME_TLS_TARGET --path $URL_PATH --n $N_HTTPS --conc $CONC_NET --resumption $on --tls-max-version $v --impl $impl")
          done
        done
        oneshot https_resume "${specs[@]}"
      fi
      ;;
    https_threads)
      # https_oneshot's checks (the same nginx TLS listener, a full handshake each) through a
      # group of 1 and of 2 engines behind one handle (spawn_sharded), interleaved; the median
      # repetition by rate. speedup_2_threads is the ratio of the rates. The target's one
      # nginx worker and the probing program share this machine's cores.
      if [ -z "${TLS_TARGET:-}" ]; then
        unavailable https_threads prober_1_thread "no_tls_target($TARGET_KIND)"
      else
        specs=()
        for th in 1 2; do
          impl=prober_${th}_thread; [ "$th" = 1 ] || impl=${impl}s
          specs+=("$impl $BENCH_BIN https_threads --target $TLS_TARGET --path $URL_PATH --n $N_HTTPS --conc $CONC_NET --threads $th --impl $impl")
        done
        KEY=rate_per_s oneshot https_threads "${specs[@]}"
      fi
      ;;
    http_keepalive | https_keepalive)
      # nginx's keep-alive server (plain, or TLS as https_oneshot's). impl=prober is
      # http_oneshot's code path with keep-alive on (prober-bench's http_keepalive; its line
      # says keep_alive=1|0); prober_oneshot is libprober's one-shot figure of the same
      # protocol against the same nginx's one-shot listener, run alongside for the target
      # against it; go_net_http is Go's net/http with keep-alive.
      if [ "$s" = http_keepalive ]; then
        ka=$KA_TARGET one=$TARGET n=$N_HTTP n_one=$N_HTTP oneshot_scen=http_oneshot
      else
        ka=$KA_TLS_TARGET one=${TLS_TARGET:-} n=$N_HTTP n_one=$N_HTTPS oneshot_scen=https_oneshot
      fi
      if [ -z "$ka" ] || [ -z "$one" ]; then
        unavailable "$s" prober "no_keepalive_target($TARGET_KIND)"
      else
        specs=("prober $BENCH_BIN $s --target $ka --path $URL_PATH --n $n --conc $CONC_NET"
               "prober_oneshot $BENCH_BIN $oneshot_scen --target $one --path $URL_PATH --n $n_one --conc $CONC_NET --label $s --impl prober_oneshot")
        raw_limit_spec "$s" specs
        [ -z "$GO_KUBELET_ERR" ] && specs+=("go_net_http $GOK $s -target $ka -path $URL_PATH -n $n -conc $CONC_NET")
        TW=0 oneshot "$s" "${specs[@]}"
        [ -n "$GO_KUBELET_ERR" ] && unavailable "$s" go_net_http "$GO_KUBELET_ERR"
      fi
      ;;
    grpc_oneshot)
      # grpc-go's health server; each probe a new connection, the HTTP/2 handshake, one Check.
      if [ -n "$GRPC_ERR" ]; then
        unavailable grpc_oneshot prober "$GRPC_ERR"
      else
        G_PORT=${GRPC_TARGET##*:}
        specs=("prober $BENCH_BIN grpc_oneshot --target $GRPC_TARGET --n $N_GRPC --conc $CONC_NET")
        raw_limit_spec grpc_oneshot specs
        [ -z "$GO_GRPC_ERR" ] && specs+=("go_kubelet $WORK/go_kubelet_grpc grpc_oneshot -target $GRPC_TARGET -n $N_GRPC -conc $CONC_NET")
        T_PORT=$G_PORT TW=1 oneshot grpc_oneshot "${specs[@]}"
        [ -n "$GO_GRPC_ERR" ] && unavailable grpc_oneshot go_kubelet "$GO_GRPC_ERR"
      fi
      ;;
    grpc_keepalive)
      # The same server and checks as grpc_oneshot. impl=prober: keep-alive on, one kept
      # HTTP/2 connection per check in flight, one stream per check (its line says
      # keep_alive=1); prober_oneshot: grpc_oneshot's code path, alongside for the target
      # against it; go_grpc_shared: grpc-go with one ClientConn shared by every goroutine
      # (one connection, streams multiplexed), dialed before the measured loop.
      if [ -n "$GRPC_ERR" ]; then
        unavailable grpc_keepalive prober "$GRPC_ERR"
      else
        specs=("prober $BENCH_BIN grpc_keepalive --target $GRPC_TARGET --n $N_GRPC_KA --conc $CONC_NET"
               "prober_oneshot $BENCH_BIN grpc_oneshot --target $GRPC_TARGET --n $N_GRPC --conc $CONC_NET --label grpc_keepalive --impl prober_oneshot")
        raw_limit_spec grpc_keepalive specs
        [ -z "$GO_GRPC_ERR" ] && specs+=("go_grpc_shared $WORK/go_kubelet_grpc grpc_keepalive -target $GRPC_TARGET -n $N_GRPC_KA -conc $CONC_NET -impl go_grpc_shared")
        TW=0 oneshot grpc_keepalive "${specs[@]}"
        [ -n "$GO_GRPC_ERR" ] && unavailable grpc_keepalive go_grpc_shared "$GO_GRPC_ERR"
      fi
      ;;
    exec_oneshot)
      specs=("prober $BENCH_BIN exec_oneshot --n $N_EXEC --conc $CONC_EXEC --argv /bin/true"
             "raw_spawn $WORK/raw_spawn $N_EXEC $CONC_EXEC /bin/true")
      [ -z "$GO_KUBELET_ERR" ] && specs+=("go_kubelet $GOK exec_oneshot -n $N_EXEC -conc $CONC_EXEC -argv /bin/true")
      # The target is a rate, and exec rates are noisy: median by rate of at least 5.
      REPS_OVERRIDE=$EXEC_REPS KEY=rate_per_s TW=0 oneshot exec_oneshot "${specs[@]}"
      [ -n "$GO_KUBELET_ERR" ] && unavailable exec_oneshot go_kubelet "$GO_KUBELET_ERR"
      ;;
    c_api)
      if [ -n "$C_API_ERR" ]; then
        cat "$WORK/c_api.log"; unavailable c_api prober "$C_API_ERR"
      else
        TW=1 oneshot c_api \
          "prober $WORK/c_api $T_HOST $T_PORT $N_TCP $CONC_NET c_api" \
          "rust $BENCH_BIN tcp_oneshot --target $TARGET --n $N_TCP --conc $CONC_NET --label c_api --impl rust"
      fi
      ;;
    go_api)
      if [ -n "$GO_API_ERR" ]; then
        unavailable go_api prober "$GO_API_ERR"
      else
        TW=1 oneshot go_api \
          "prober $WORK/go_api -target $TARGET -n $N_TCP -conc $CONC_NET -label go_api" \
          "rust $BENCH_BIN tcp_oneshot --target $TARGET --n $N_TCP --conc $CONC_NET --label go_api --impl rust"
      fi
      ;;
    netns_http)
      # The host's target and the same kind inside a namespace on the same port: the same URL,
      # the same probe, one with --netns. nsenter_curl: what scripts do today, one `nsenter
      # --net=PATH curl` per probe (fewer of them: each costs milliseconds).
      if [ "$(id -u)" != 0 ]; then
        unavailable netns_http prober needs_root
      elif ! start_netns_target "$T_PORT" "$TARGET_KIND"; then
        unavailable netns_http prober netns_target_failed
      else
        ns_path=/run/netns/$NETNS_NAME
        specs=("prober $BENCH_BIN netns_http --target $TARGET --path $URL_PATH --netns $ns_path --n $N_HTTP --conc $CONC_NET"
               "prober_host $BENCH_BIN http_oneshot --target $TARGET --path $URL_PATH --n $N_HTTP --conc $CONC_NET --label netns_http --impl prober_host")
        if command -v nsenter >/dev/null && command -v curl >/dev/null; then
          specs+=("nsenter_curl $BENCH_BIN command_each --argv nsenter,--net=$ns_path,curl,-sf,-o,/dev/null,http://$TARGET$URL_PATH --n $N_NSENTER_CURL --label netns_http --impl nsenter_curl")
        fi
        TW=0 oneshot netns_http "${specs[@]}"
        command -v nsenter >/dev/null && command -v curl >/dev/null || unavailable netns_http nsenter_curl no_nsenter_or_curl
        stop_netns_target
      fi
      ;;
    netns_exec)
      # /bin/true (busybox's) inside a runc container: libprober's exec in the namespaces of the
      # container's init, against `nsenter --target PID --all` and `runc exec` per run. Every
      # line's cpu_us_per_probe counts the processes a run starts (prober-bench's
      # common_with_children); one run at a time everywhere.
      if [ "$(id -u)" != 0 ]; then
        unavailable netns_exec prober needs_root
      else
        RUNC_NAME=prober-bench-$$
        if ! runc_pid=$(bash ci/runc-container.sh start "$RUNC_NAME" "$(free_port)"); then
          unavailable netns_exec prober runc_container_failed
        else
          specs=("prober $BENCH_BIN netns_exec --pid $runc_pid --argv /bin/true --n $N_NETNS_EXEC --conc 1"
                 "nsenter $BENCH_BIN command_each --argv nsenter,--target,$runc_pid,--all,/bin/true --n $N_NSENTER --label netns_exec --impl nsenter"
                 "runc_exec $BENCH_BIN command_each --argv runc,exec,$RUNC_NAME,/bin/true --n $N_RUNC_EXEC --label netns_exec --impl runc_exec")
          TW=0 oneshot netns_exec "${specs[@]}"
        fi
        bash ci/runc-container.sh stop "$RUNC_NAME"
        RUNC_NAME=
      fi
      ;;
    netns_scale)
      if [ "$(id -u)" != 0 ]; then
        unavailable netns_scale prober needs_root
      else
        single netns_scale prober 0 "$BENCH_BIN" netns_scale --namespaces $NS_SCALE --duration-s $NS_SCALE_S
        single netns_scale prober_host 0 "$BENCH_BIN" netns_scale --where host --namespaces $NS_SCALE \
          --duration-s $NS_SCALE_S --label netns_scale --impl prober_host
      fi
      ;;
    sched_10k)
      single sched_10k prober 1 "$BENCH_BIN" sched_10k --target "$TARGET" --targets $SCHED_TARGETS \
        --period-ms 1000 --duration-s $SCHED_S
      if [ -z "$GO_KUBELET_ERR" ]; then
        single sched_10k go_kubelet 1 "$GOK" sched_10k -target "$TARGET" -targets $SCHED_TARGETS \
          -period 1s -duration ${SCHED_S}s
      else
        unavailable sched_10k go_kubelet "$GO_KUBELET_ERR"
      fi
      peer_cloudprober sched_10k $SCHED_TARGETS 1000
      ;;
    sched_100k)
      # On demand: ten times sched_10k's targets at ten times its period (the same 10,000 runs
      # a second), against cloudprober.
      single sched_100k prober 1 "$BENCH_BIN" sched_100k --target "$TARGET" --targets $PEER_TARGETS \
        --period-ms $PEER_PERIOD_MS --duration-s $SCHED_S
      peer_cloudprober sched_100k $PEER_TARGETS $PEER_PERIOD_MS
      ;;
    serve_probe)
      # The same /probe load (CONC_SERVE keep-alive clients, N_SERVE requests, every answer
      # checked for probe_success 1) on prober serve and on blackbox_exporter, one after the
      # other, REPS times interleaved; each probe a new connection to the one-shot nginx.
      if [ -n "$SERVE_ERR" ]; then
        unavailable serve_probe prober "$SERVE_ERR"
      elif ! start_exporters; then
        unavailable serve_probe prober did_not_start
      else
        q="/probe?module=http_2xx&target=http://$TARGET$URL_PATH"
        specs=("prober $WORK/serve_load -url http://$SERVE_ADDR$q -pid $SERVE_PID -n $N_SERVE -conc $CONC_SERVE -impl prober")
        [ -z "$BLACKBOX_ERR" ] && specs+=("blackbox_exporter $WORK/serve_load -url http://$BLACKBOX_ADDR$q -pid $BLACKBOX_PID -n $N_SERVE -conc $CONC_SERVE -impl blackbox_exporter")
        TW=0 oneshot serve_probe "${specs[@]}"
        [ -n "$BLACKBOX_ERR" ] && unavailable serve_probe blackbox_exporter "$BLACKBOX_ERR"
        stop_exporters
      fi
      ;;
    dns_query) bench_dns_query ;;
    icmp_echo) bench_icmp_echo ;;
    sched_1m)
      # TCP connects to the target's port on each of TARGET_HOSTS (nginx: four loopback
      # addresses), about 16,700 a second; every socket is reset, none waits in TIME_WAIT.
      single sched_1m prober 0 "$BENCH_BIN" sched_1m --target "$TARGET" --hosts "$TARGET_HOSTS" \
        --targets $MILLION_TARGETS --period-ms 60000 --duration-s $MILLION_S
      ;;
    sched_100k_idle)
      single sched_100k_idle prober 0 "$BENCH_BIN" sched_100k_idle --target "$TARGET" \
        --targets $IDLE_TARGETS --period-ms 60000 --duration-s $IDLE_S
      if [ -z "$GO_KUBELET_ERR" ]; then
        single sched_100k_idle go_kubelet 0 "$GOK" sched_100k_idle -target "$TARGET" \
          -targets $IDLE_TARGETS -period 60s -duration ${IDLE_S}s
      else
        unavailable sched_100k_idle go_kubelet "$GO_KUBELET_ERR"
      fi
      ;;
  esac
done

# ---- summary -------------------------------------------------------------------------------

step "results (target $TARGET_KIND; CPU = user+sys of the probing process per probe; loadavg now $(cut -d" " -f1-3 /proc/loadavg))"
awk '
  function field(line, key,   i, n, parts) {
    n = split(line, parts, " ")
    for (i = 2; i <= n; i++) if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
    return "" }
  function get(s, i, k) { return (s SUBSEP i SUBSEP k) in V ? V[s, i, k] : "" }
  function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "" : a / b }
  function show(v) { return v == "" ? "-" : v }
  # note: appended to the line (e.g. prober_keep_alive=off: the keep-alive scenario measured
  # the one-shot code path because this build cannot switch keep-alive on).
  function check(s, what, value, op, limit, note,   met, vs) {
    if (note != "") note = " " note
    if (value == "") { printf "RATIO scenario=%s metric=%s value=- target=%s%s met=unknown%s\n", s, what, op, limit, note; return }
    met = (op == "<=") ? (value + 0 <= limit + 0) : (op == ">=") ? (value + 0 >= limit + 0) : (value + 0 < limit + 0)
    printf "RATIO scenario=%s metric=%s value=%.4g target=%s%s met=%s%s\n", s, what, value, op, limit, met ? "yes" : "no", note }
  function info(s, what, value, note) { # a figure with no target of the project: printed, not judged
    if (note != "") note = " " note
    if (value != "") printf "RATIO scenario=%s metric=%s value=%.4g target=none met=-%s\n", s, what, value, note }
  # The self-scheduling peer: CPU per run and resident memory per target against those of
  # cloudprober; memory at the end of the window on both sides (what running holds) when both
  # lines have it, else after set-up on both. A side whose runs failed more than 1 % (a
  # starved target: timeouts hold sockets and, on its side, log lines) is named in the note.
  function failed_pct(s, i,   n) { n = get(s, i, "n"); return n + 0 > 0 ? 100 * get(s, i, "fail") / n : 0 }
  function peer(s,   st, note, k, i, f) {
    st = get(s, "cloudprober", "status")
    note = st == "" ? "" : "cloudprober=" st ":" get(s, "cloudprober", "reason")
    split("prober cloudprober", I, " ")
    for (i = 1; i <= 2; i++) if ((f = failed_pct(s, I[i])) > 1) note = note (note == "" ? "" : " ") sprintf("%s_failed_pct=%.1f", I[i], f)
    check(s, "cpu_vs_cloudprober", ratio(get(s, "prober", "cpu_us_per_probe"), get(s, "cloudprober", "cpu_us_per_probe")), "<=", 0.3, note)
    k = "rss_per_target_end_b"
    if (get(s, "prober", k) == "" || get(s, "cloudprober", k) == "") k = "rss_per_target_b"
    check(s, "rss_vs_cloudprober", ratio(get(s, "prober", k), get(s, "cloudprober", k)), "<=", 0.3, (note == "" ? "" : note " ") "of=" k)
    info(s, "cloudprober_kept_up", get(s, "cloudprober", "kept_up")) }
  function ka_note(s) { return get(s, "prober", "keep_alive") == "1" ? "" : "prober_keep_alive=off" }
  /^BENCH / {
    s = field($0, "scenario"); i = field($0, "impl")
    for (k = 3; k <= NF; k++) { split($k, kv, "="); V[s, i, kv[1]] = substr($k, length(kv[1]) + 2) }
    rows[++nrows] = s SUBSEP i }
  END {
    fmt = "%-16s %-14s %7s %10s %9s %9s %8s %8s %8s %8s %9s\n"
    printf fmt, "scenario", "impl", "n", "rate/s", "cpu_us/p", "rss_kb", "timewait", "p50_ms", "p99_ms", "max_ms", "status"
    for (r = 1; r <= nrows; r++) {
      split(rows[r], si, SUBSEP); s = si[1]; i = si[2]
      st = get(s, i, "status"); if (st == "") st = "ok"
      printf fmt, s, i, show(get(s, i, "n")), show(get(s, i, "rate_per_s")), show(get(s, i, "cpu_us_per_probe")),
        show(get(s, i, "rss_kb")), show(get(s, i, "timewait")), show(get(s, i, "lateness_p50_ms")),
        show(get(s, i, "lateness_p99_ms")), show(get(s, i, "lateness_max_ms")), st }
    print ""
    c = "cpu_us_per_probe"
    if (("tcp_oneshot", "prober", c) in V) {
      check("tcp_oneshot", "cpu_vs_raw_c", ratio(get("tcp_oneshot", "prober", c), get("tcp_oneshot", "raw_c", c)), "<=", 1.25)
      check("tcp_oneshot", "cpu_vs_go_kubelet", ratio(get("tcp_oneshot", "prober", c), get("tcp_oneshot", "go_kubelet", c)), "<=", 0.5)
      check("tcp_oneshot", "timewait", get("tcp_oneshot", "prober", "timewait"), "<=", 0)
      info("tcp_oneshot", "cpu_vs_raw_c_reuse", ratio(get("tcp_oneshot", "prober", c), get("tcp_oneshot", "raw_c_reuse", c))) }
    if (("http_oneshot", "prober", c) in V) {
      check("http_oneshot", "cpu_vs_raw_c", ratio(get("http_oneshot", "prober", c), get("http_oneshot", "raw_c", c)), "<=", 1.25)
      check("http_oneshot", "cpu_vs_go_kubelet", ratio(get("http_oneshot", "prober", c), get("http_oneshot", "go_kubelet", c)), "<=", 0.65)
      info("http_oneshot", "cpu_vs_raw_c_reuse", ratio(get("http_oneshot", "prober", c), get("http_oneshot", "raw_c_reuse", c))) }
    if (("https_oneshot", "prober", c) in V)
      info("https_oneshot", "cpu_vs_go_kubelet", ratio(get("https_oneshot", "prober", c), get("https_oneshot", "go_kubelet", c)))
    if (("https_resume", "prober", c) in V) {
      check("https_resume", "cpu_vs_full_handshake", ratio(get("https_resume", "prober", c), get("https_resume", "prober_full", c)), "<=", 0.4, "resumed=" get("https_resume", "prober", "resumed") "/" get("https_resume", "prober", "n"))
      info("https_resume", "cpu_vs_full_handshake_tls12", ratio(get("https_resume", "prober_tls12", c), get("https_resume", "prober_full_tls12", c)), "resumed=" get("https_resume", "prober_tls12", "resumed") "/" get("https_resume", "prober_tls12", "n")) }
    if (("https_threads", "prober_2_threads", c) in V) {
      r = "rate_per_s"; one = "prober_1_thread"; two = "prober_2_threads"
      check("https_threads", "speedup_2_threads", ratio(get("https_threads", two, r), get("https_threads", one, r)), ">=", 1.8)
      info("https_threads", "cpu_per_probe_2_threads_vs_1", ratio(get("https_threads", two, c), get("https_threads", one, c)))
      info("https_threads", "cpu_pct_2_threads_vs_1", ratio(get("https_threads", two, "cpu_pct"), get("https_threads", one, "cpu_pct"))) }
    if (("http_keepalive", "prober", c) in V) {
      n = ka_note("http_keepalive")
      check("http_keepalive", "cpu_vs_prober_oneshot", ratio(get("http_keepalive", "prober", c), get("http_keepalive", "prober_oneshot", c)), "<=", 0.35, n)
      check("http_keepalive", "cpu_vs_go_net_http", ratio(get("http_keepalive", "prober", c), get("http_keepalive", "go_net_http", c)), "<=", 0.4, n) }
    if (("https_keepalive", "prober", c) in V) {
      n = ka_note("https_keepalive")
      check("https_keepalive", "cpu_vs_prober_oneshot", ratio(get("https_keepalive", "prober", c), get("https_keepalive", "prober_oneshot", c)), "<=", 0.1, n)
      info("https_keepalive", "cpu_vs_go_net_http", ratio(get("https_keepalive", "prober", c), get("https_keepalive", "go_net_http", c)), n) }
    if (("grpc_oneshot", "prober", c) in V)
      check("grpc_oneshot", "cpu_vs_go_kubelet", ratio(get("grpc_oneshot", "prober", c), get("grpc_oneshot", "go_kubelet", c)), "<=", 0.25)
    if (("grpc_keepalive", "prober", c) in V) {
      n = ka_note("grpc_keepalive")
      check("grpc_keepalive", "cpu_vs_prober_oneshot", ratio(get("grpc_keepalive", "prober", c), get("grpc_keepalive", "prober_oneshot", c)), "<=", 0.2, n)
      check("grpc_keepalive", "cpu_vs_go_grpc_shared", ratio(get("grpc_keepalive", "prober", c), get("grpc_keepalive", "go_grpc_shared", c)), "<=", 0.5, n) }
    if (("exec_oneshot", "prober", c) in V)
      check("exec_oneshot", "rate_vs_raw_spawn", ratio(get("exec_oneshot", "prober", "rate_per_s"), get("exec_oneshot", "raw_spawn", "rate_per_s")), ">=", 0.9)
    if (("sched_10k", "prober", c) in V) {
      check("sched_10k", "cpu_vs_go_kubelet", ratio(get("sched_10k", "prober", c), get("sched_10k", "go_kubelet", c)), "<=", 0.5)
      check("sched_10k", "lateness_p99_ms", get("sched_10k", "prober", "lateness_p99_ms"), "<=", 5)
      peer("sched_10k") }
    if (("sched_100k", "prober", c) in V) {
      check("sched_100k", "lateness_p99_ms", get("sched_100k", "prober", "lateness_p99_ms"), "<=", 5)
      peer("sched_100k") }
    if (("sched_100k_idle", "prober", c) in V) {
      check("sched_100k_idle", "add_s", get("sched_100k_idle", "prober", "add_s"), "<", 1)
      check("sched_100k_idle", "rss_per_target_b", get("sched_100k_idle", "prober", "rss_per_target_b"), "<=", 2048) }
    if (("sched_1m", "prober", c) in V) {
      check("sched_1m", "rss_bytes_per_target", get("sched_1m", "prober", "rss_bytes_per_target"), "<=", 1024)
      check("sched_1m", "late_p99_ms", get("sched_1m", "prober", "late_p99_ms"), "<=", 5)
      info("sched_1m", "cpu_us_per_run", get("sched_1m", "prober", "cpu_us_per_run")) }
    if (("netns_http", "prober", c) in V) {
      check("netns_http", "cpu_vs_host", ratio(get("netns_http", "prober", c), get("netns_http", "prober_host", c)), "<=", 1.1)
      check("netns_http", "cpu_vs_nsenter_curl", ratio(get("netns_http", "prober", c), get("netns_http", "nsenter_curl", c)), "<=", 0.01) }
    if (("netns_exec", "prober", c) in V) {
      check("netns_exec", "cpu_vs_nsenter", ratio(get("netns_exec", "prober", c), get("netns_exec", "nsenter", c)), "<=", 1.0)
      info("netns_exec", "cpu_vs_runc_exec", ratio(get("netns_exec", "prober", c), get("netns_exec", "runc_exec", c))) }
    if (("netns_scale", "prober", c) in V) {
      info("netns_scale", "cpu_vs_host", ratio(get("netns_scale", "prober", c), get("netns_scale", "prober_host", c)))
      check("netns_scale", "ns_fds", get("netns_scale", "prober", "ns_fds"), "<=", get("netns_scale", "prober", "namespaces"))
      check("netns_scale", "ns_fds_after", get("netns_scale", "prober", "ns_fds_after"), "<=", 0) }
    if (("serve_probe", "prober", c) in V)
      check("serve_probe", "cpu_vs_blackbox_exporter", ratio(get("serve_probe", "prober", c), get("serve_probe", "blackbox_exporter", c)), "<=", 0.1)
    if (("c_api", "prober", c) in V)
      check("c_api", "cpu_vs_rust", ratio(get("c_api", "prober", c), get("c_api", "rust", c)), "<=", 1.2)
    if (("go_api", "prober", c) in V)
      check("go_api", "cpu_vs_rust", ratio(get("go_api", "prober", c), get("go_api", "rust", c)), "<=", 1.2)
    else if (get("go_api", "prober", "status") == "unavailable")
      printf "RATIO scenario=go_api metric=cpu_vs_rust value=- target=<=1.2 met=unavailable\n"
  }' "$RESULTS"
raw_limit_ratios
dns_icmp_ratios
exit 0
