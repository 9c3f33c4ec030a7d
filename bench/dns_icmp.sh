# The dns_query and icmp_echo scenarios of ci/bench.sh (issue 36), sourced by it (not run):
# needs its WORK, NICE, BENCH_BIN, SERVE_* and BLACKBOX_* variables and its oneshot, unavailable,
# start_exporters and stop_exporters functions. docs/benchmarks.md explains both.
#
# dns_query: libprober's UDP queries (prober-bench dns_query) against bench/raw_dns.c (the same
# queries with the fewest syscalls: impl=raw_c), then the same module (type A, IPv4) under the
# same /probe load on prober serve (impl=prober_serve) and blackbox_exporter. The server is
# Debian's nsd (installed with apt-get when missing and possible), serving bench.test. on a
# loopback port, as prober-dns's tests start it; its CPU never counts.
# icmp_echo: libprober's echo probes of 127.0.0.1 (prober-bench icmp_echo) against fping
# (Debian's; one process pinging CONC loopback addresses, -c K each, its CPU counted as a child
# of prober-bench's command_each), then the icmp module on prober serve and blackbox_exporter.

BENCH_NSD_PID= BENCH_NSD_PORT=
DNS_NAME=a.bench.test

# Installs Debian's package $1 (command $2) when the command is missing, as root with apt-get.
bench_need_package() {
  command -v "$2" >/dev/null 2>&1 || [ -x "/usr/sbin/$2" ] && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  echo "installing $1 from the distribution's packages"
  { apt-get install -y -qq "$1" || { apt-get update -qq && apt-get install -y -qq "$1"; }; } >/dev/null 2>&1
  command -v "$2" >/dev/null 2>&1 || [ -x "/usr/sbin/$2" ]
}

# NSD serving bench.test. (the name queried: a.bench.test A 192.0.2.1) on 127.0.0.1, UDP and
# TCP on one free port, one server process; ready once bench/raw_dns gets an answer. Response
# rate limiting off: Debian's NSD limits a /24 to 200 answers a second by default, then drops
# queries or answers them truncated and empty (its "slip"), which would measure the limit.
start_bench_nsd() {
  local nsd dir=$WORK/nsd i
  bench_need_package nsd nsd || return 1
  nsd=$(command -v nsd || echo /usr/sbin/nsd)
  mkdir -p "$dir"
  printf '$ORIGIN bench.test.\n$TTL 3600\n@ IN SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ IN NS ns1\nns1 IN A 127.0.0.1\na IN A 192.0.2.1\n' \
    >"$dir/bench.test.zone"
  BENCH_NSD_PORT=$(free_port_after 15353)
  cat >"$dir/nsd.conf" <<CONF
server:
  ip-address: 127.0.0.1@$BENCH_NSD_PORT
  port: $BENCH_NSD_PORT
  username: ""
  chroot: ""
  zonesdir: "$dir"
  database: ""
  pidfile: "$dir/nsd.pid"
  xfrdfile: "$dir/xfrd.state"
  zonelistfile: "$dir/zone.list"
  xfrdir: "$dir"
  logfile: "$dir/nsd.log"
  server-count: 1
  do-ip6: no
  verbosity: 0
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: bench.test
  zonefile: "bench.test.zone"
CONF
  "${NICE[@]}" "$nsd" -d -c "$dir/nsd.conf" </dev/null >"$dir/out.log" 2>&1 &
  BENCH_NSD_PID=$!
  for i in $(seq 20); do
    "$WORK/raw_dns" 127.0.0.1 "$BENCH_NSD_PORT" "$DNS_NAME" 1 1 2>/dev/null | grep -q ' ok=1 ' && return 0
    kill -0 "$BENCH_NSD_PID" 2>/dev/null || break
  done
  echo "nsd did not answer:" >&2; cat "$dir/nsd.log" "$dir/out.log" >&2 2>/dev/null
  stop_bench_nsd
  return 1
}

stop_bench_nsd() {
  # SIGTERM: NSD's main process stops its server and xfrd children with it.
  [ -n "$BENCH_NSD_PID" ] && { kill "$BENCH_NSD_PID" 2>/dev/null; wait "$BENCH_NSD_PID" 2>/dev/null; }
  BENCH_NSD_PID=
}

# serve_load_pair SCENARIO CONFIG QUERY: the /probe load QUERY (path and query string) on prober
# serve (impl=prober_serve) and blackbox_exporter with the module file CONFIG.
serve_load_pair() {
  local scen=$1 conf=$2 q=$3
  local -a specs
  if [ -n "$SERVE_ERR" ]; then
    unavailable "$scen" blackbox_exporter "$SERVE_ERR"
  elif ! start_exporters "$conf"; then
    unavailable "$scen" prober_serve did_not_start
  else
    specs=("prober_serve $WORK/serve_load -url http://$SERVE_ADDR$q -pid $SERVE_PID -n $N_SERVE -conc $CONC_SERVE -label $scen -impl prober_serve")
    [ -z "$BLACKBOX_ERR" ] && specs+=("blackbox_exporter $WORK/serve_load -url http://$BLACKBOX_ADDR$q -pid $BLACKBOX_PID -n $N_SERVE -conc $CONC_SERVE -label $scen -impl blackbox_exporter")
    TW=0 oneshot "$scen" "${specs[@]}"
    [ -n "$BLACKBOX_ERR" ] && unavailable "$scen" blackbox_exporter "$BLACKBOX_ERR"
    stop_exporters
  fi
}

bench_dns_query() {
  if ! cc -O2 -o "$WORK/raw_dns" bench/raw_dns.c; then
    unavailable dns_query prober raw_dns_build_failed; return
  fi
  if ! start_bench_nsd; then
    unavailable dns_query prober no_nsd; return
  fi
  local target=127.0.0.1:$BENCH_NSD_PORT
  TW=0 oneshot dns_query \
    "prober $BENCH_BIN dns_query --target $target --name $DNS_NAME --n $N_DNS --conc $CONC_NET" \
    "raw_c $WORK/raw_dns 127.0.0.1 $BENCH_NSD_PORT $DNS_NAME $N_DNS $CONC_NET"
  printf 'modules:\n  dns_a:\n    prober: dns\n    timeout: 5s\n    dns:\n      query_name: %s\n      query_type: A\n      preferred_ip_protocol: ip4\n' \
    "$DNS_NAME" >"$WORK/dns.yml"
  serve_load_pair dns_query "$WORK/dns.yml" "/probe?module=dns_a&target=$target"
  stop_bench_nsd
}

bench_icmp_echo() {
  local per=$((N_ICMP / CONC_NET)) argv i
  [ "$per" -ge 1 ] || per=1
  argv=fping,-q,-c,$per,-p,1,-i,0
  for i in $(seq "$CONC_NET"); do argv=$argv,127.0.0.$i; done
  local -a specs=("prober $BENCH_BIN icmp_echo --host 127.0.0.1 --n $N_ICMP --conc $CONC_NET")
  if bench_need_package fping fping; then
    specs+=("fping $BENCH_BIN command_each --argv $argv --n 1 --per-run $((per * CONC_NET)) --label icmp_echo --impl fping")
  fi
  TW=0 oneshot icmp_echo "${specs[@]}"
  bench_need_package fping fping || unavailable icmp_echo fping no_fping
  printf 'modules:\n  icmp:\n    prober: icmp\n    timeout: 5s\n    icmp:\n      preferred_ip_protocol: ip4\n' >"$WORK/icmp.yml"
  serve_load_pair icmp_echo "$WORK/icmp.yml" "/probe?module=icmp&target=127.0.0.1"
}

# RATIO lines of both scenarios. cpu_vs_blackbox_exporter compares like with like: prober
# serve and blackbox_exporter under the same /probe load (the HTTP request and the metrics
# page counted on both sides); lib_cpu_vs_blackbox_exporter, the library's own figure against
# the exporter's, is printed without a target.
dns_icmp_ratios() {
  awk '
    function field(line, key,   i, n, parts) {
      n = split(line, parts, " ")
      for (i = 2; i <= n; i++) if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
      return "" }
    function ratio(s, what, a, b, limit) {
      if (C[s, a] == "" && C[s, b] == "") return
      if (C[s, a] == "" || C[s, b] == "" || C[s, b] + 0 == 0) {
        printf "RATIO scenario=%s metric=%s value=- target=%s met=%s\n", s, what, limit == "" ? "none" : "<=" limit, limit == "" ? "-" : "unknown"; return }
      v = C[s, a] / C[s, b]
      if (limit == "") printf "RATIO scenario=%s metric=%s value=%.4g target=none met=-\n", s, what, v
      else printf "RATIO scenario=%s metric=%s value=%.4g target=<=%s met=%s\n", s, what, v, limit, v <= limit + 0 ? "yes" : "no" }
    /^BENCH / { C[field($0, "scenario"), field($0, "impl")] = field($0, "cpu_us_per_probe") }
    END {
      ratio("dns_query", "cpu_vs_raw_c", "prober", "raw_c", 1.25)
      ratio("dns_query", "cpu_vs_blackbox_exporter", "prober_serve", "blackbox_exporter", 0.3)
      ratio("dns_query", "lib_cpu_vs_blackbox_exporter", "prober", "blackbox_exporter", "")
      ratio("icmp_echo", "cpu_vs_fping", "prober", "fping", 1.25)
      ratio("icmp_echo", "cpu_vs_blackbox_exporter", "prober_serve", "blackbox_exporter", 0.3)
      ratio("icmp_echo", "lib_cpu_vs_blackbox_exporter", "prober", "blackbox_exporter", "")
    }' "$RESULTS"
}
