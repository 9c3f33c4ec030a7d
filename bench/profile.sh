#!/usr/bin/env bash
# Profiles libprober's side of the benchmark scenarios (docs/benchmarks.md, "Profile").
#
#   bench/profile.sh [tcp_oneshot|http_oneshot|sched_10k|http_keepalive|grpc_oneshot ...]
#                                                  default: the first three
#
# 1. syscalls per probe: strace -f -c of prober-bench and of the raw_c and go_kubelet
#    baselines doing the same work (5,000 probes; sched_10k: 2,000 workers for 5 s;
#    http_keepalive and grpc_oneshot against their raw limits, bench/raw_c.c http-keepalive
#    and bench/raw_grpc.c, see docs/benchmarks.md "Raw limits");
# 2. user-space instructions per probe and the top functions: valgrind --tool=callgrind
#    (reproducible: instruction counts do not depend on the machine's load);
# 3. where the CPU goes, kernel included: perf record -g (cpu-clock sampling) of a full-size
#    run, when perf works here (Debian: apt-get install linux-perf).
#
# Uses the same target as ci/bench.sh (PROBER_BENCH_TARGET, else nginx, else prober-target).
# Raw outputs are kept in $PROBER_PROFILE_OUT (default target/bench-profile); a summary goes to
# stdout. Like ci/bench.sh it measures and never fails on a number.
set -uo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. bench/lib.sh
ROOT=$PWD
URL_PATH=${PROBER_BENCH_PATH:-/}
SCENARIOS=${*:-tcp_oneshot http_oneshot sched_10k}
OUT=${PROBER_PROFILE_OUT:-$ROOT/target/bench-profile}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/prober-profile.XXXXXX)
trap 'stop_grpc_health; bench_stop_target; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
ulimit -n 65536 2>/dev/null || true

step "build"
need_cargo
need cc gcc
need strace
need valgrind
# The profiling profile: release code with line tables and symbols, so profiles name functions.
cargo build --profile profiling --quiet -p prober-bench -p prober-testkit || exit 1
BENCH_BIN=$ROOT/target/profiling/prober-bench
cc -O2 -o "$WORK/raw_c" bench/raw_c.c || exit 1
cc -O2 -o "$WORK/raw_grpc" bench/raw_grpc.c || exit 1
[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
GOK=
if command -v go >/dev/null 2>&1 && (cd bench/go_kubelet && go build -o "$WORK/go_kubelet" .); then
  GOK=$WORK/go_kubelet
fi
PERF=
if command -v perf >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 &&
     DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null 2>&1; }; then
  perf record -q -o "$WORK/probe.data" true >/dev/null 2>&1 && PERF=perf
fi

step "target"
bench_target || exit 1
echo "target $TARGET_KIND at $TARGET"
case " $SCENARIOS " in *" grpc_oneshot "*)
  # grpc-go's health server, as ci/bench.sh's gRPC scenarios (Go needed).
  start_grpc_health || exit 1
  echo "grpc-go health server at $GRPC_TARGET" ;;
esac

# The work of each scenario for each tool: "impl command..." (5,000 probes; 2,000 workers).
cmds() { # SCENARIO SIZE(small|full)
  local n=5000 sched="--targets 2000 --duration-s 5" gsched="-targets 2000 -duration 5s"
  [ "$2" = full ] && n=40000 sched="--duration-s 10" gsched="-duration 10s"
  case $1 in
    tcp_oneshot)
      echo "prober $BENCH_BIN tcp_oneshot --target $TARGET --n $n"
      echo "raw_c $WORK/raw_c tcp $T_HOST $T_PORT $n 64"
      [ -n "$GOK" ] && echo "go_kubelet $GOK tcp_oneshot -target $TARGET -n $n" ;;
    http_oneshot)
      echo "prober $BENCH_BIN http_oneshot --target $TARGET --path $URL_PATH --n $n"
      echo "raw_c $WORK/raw_c http $T_HOST $T_PORT $n 64 $URL_PATH"
      [ -n "$GOK" ] && echo "go_kubelet $GOK http_oneshot -target $TARGET -path $URL_PATH -n $n" ;;
    http_keepalive)
      [ -n "$KA_TARGET" ] || return 0 # prober-target has no keep-alive listener
      echo "prober $BENCH_BIN http_keepalive --target $KA_TARGET --path $URL_PATH --n $n"
      echo "raw_c $WORK/raw_c http-keepalive ${KA_TARGET%:*} ${KA_TARGET##*:} $n 64 $URL_PATH" ;;
    grpc_oneshot)
      echo "prober $BENCH_BIN grpc_oneshot --target $GRPC_TARGET --n $n"
      echo "raw_c $WORK/raw_grpc grpc ${GRPC_TARGET%:*} ${GRPC_TARGET##*:} $n 64" ;;
    sched_10k)
      echo "prober $BENCH_BIN sched_10k --target $TARGET $sched"
      [ -n "$GOK" ] && echo "go_kubelet $GOK sched_10k -target $TARGET $gsched" ;;
  esac
  return 0
}

probes_of() { grep -m1 '^BENCH ' "$1" | tr ' ' '\n' | sed -n 's/^n=//p'; }

for s in $SCENARIOS; do
  step "$s: syscalls per probe (strace -f -c)"
  while read -r impl cmd; do
    # shellcheck disable=SC2086
    strace -f -c -o "$OUT/$s.$impl.strace" $cmd >"$OUT/$s.$impl.strace.out" 2>/dev/null
    n=$(probes_of "$OUT/$s.$impl.strace.out")
    [ -n "$n" ] && [ "$n" -gt 0 ] || { echo "$impl: no result"; continue; }
    awk -v impl="$impl" -v n="$n" '
      $NF ~ /^[a-z_0-9]+$/ && $(NF) != "total" && ($4 ~ /^[0-9]+$/) {
        calls = $4; name = $NF; per[name] = calls / n; tot += calls / n }
      END {
        line = sprintf("%-10s %6.2f syscalls/probe:", impl, tot)
        while (1) { best = ""; for (k in per) if (best == "" || per[k] > per[best]) best = k
          if (best == "" || per[best] < 0.01) break
          line = line sprintf(" %s %.2f", best, per[best]); delete per[best] }
        print line }' "$OUT/$s.$impl.strace"
  done < <(cmds "$s" small)

  step "$s: user-space instructions (callgrind, prober only)"
  read -r _ cmd < <(cmds "$s" small)
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$s.callgrind" $cmd >"$OUT/$s.callgrind.out" 2>"$OUT/$s.callgrind.log"
  n=$(probes_of "$OUT/$s.callgrind.out")
  total=$(sed -n 's/.*refs: *//p' "$OUT/$s.callgrind.log" | tr -d ,)
  if [ -n "$n" ] && [ -n "$total" ]; then
    echo "instructions per probe (whole process, set-up included): $((total / n)) (Ir $total, probes $n)"
    callgrind_annotate "$OUT/$s.callgrind" 2>/dev/null >"$OUT/$s.callgrind.txt"
    callgrind_annotate --inclusive=yes "$OUT/$s.callgrind" 2>/dev/null >"$OUT/$s.callgrind.incl.txt"
    echo "top functions by own instructions (Ir per probe, share):"
    awk -v n="$n" 'match($0, /^ *[0-9,]+ \( *[0-9.]+%\) +/) && !/PROGRAM TOTALS/ {
        head = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
        split(head, h, "("); ir = h[1]; gsub(/[ ,]/, "", ir); pct = h[2]; gsub(/[ )]/, "", pct)
        sub(/ \[[^]]*\]$/, "", rest); i = index(rest, ":")
        file = substr(rest, 1, i - 1); sub(/.*\//, "", file); fn = substr(rest, i + 1)
        printf "  %7.0f %6s  %s\n", ir / n, pct, substr(file ":" fn, 1, 110); if (++k == 15) exit }' \
      "$OUT/$s.callgrind.txt"
  else
    echo "callgrind: no result (see $OUT/$s.callgrind.log)"
  fi

  if [ -n "$PERF" ]; then
    step "$s: CPU profile, kernel included (perf record -g, full size, prober only)"
    read -r _ cmd < <(cmds "$s" full)
    # shellcheck disable=SC2086
    perf record -q -F 2000 -g -o "$OUT/$s.perf.data" $cmd >"$OUT/$s.perf.out" 2>/dev/null
    grep '^BENCH' "$OUT/$s.perf.out" | cut -c1-160
    perf report -i "$OUT/$s.perf.data" --children --sort sym --stdio -g none 2>/dev/null >"$OUT/$s.perf.children.txt"
    perf report -i "$OUT/$s.perf.data" --no-children --sort sym --stdio -g none 2>/dev/null >"$OUT/$s.perf.self.txt"
    echo "share of CPU by syscall (inclusive):"
    grep -E '\[k\] __x64_sys_' "$OUT/$s.perf.children.txt" | head -n 10 | awk '{printf "  %7s %s\n", $1, $4}'
    echo "user-space share (own samples of [.] symbols): $(awk '$2 == "[.]" { s += $1 } END { printf "%.1f%%", s }' "$OUT/$s.perf.self.txt")"
    echo "top symbols by own samples:"
    grep -E '^ +[0-9.]+%' "$OUT/$s.perf.self.txt" | head -n 12 | awk '{ $2 = $2; printf "  %s\n", substr($0, 1, 110) }'
  fi
done
echo
echo "raw outputs: $OUT"
