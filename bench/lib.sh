# Shared by ci/bench.sh and bench/profile.sh (sourced, not run): the benchmark target and the
# TIME_WAIT count. Expects ROOT (the repository), WORK (a temp dir) and URL_PATH to be set; the
# target runs under NICE (an array, e.g. (nice -n -20)) when it is set, like the probers.

TARGET_PID=
TLS_TARGET= KA_TARGET= KA_TLS_TARGET= GRPC_TARGET= RESUME_TLS_TARGET=
# The loopback addresses the target also answers on at its port (sched_1m spreads a million
# targets over them: more source-port room per destination); nginx listens on four.
TARGET_HOSTS=

listening() { # PORT: is anything listening on 127.0.0.1/::1 PORT?
  local hex; hex=$(printf '%04X' "$1")
  awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

http_ok() { # HOST PORT PATH: does GET answer 2xx?
  local status
  status=$( { exec 3<>"/dev/tcp/$1/$2" &&
    printf 'GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$3" "$1" "$2" >&3 &&
    head -c 12 <&3; } 2>/dev/null)
  case "$status" in "HTTP/1."?" 2"*) return 0 ;; esac
  return 1
}

free_port() {
  local p=18080
  while listening "$p"; do p=$((p + 1)); done
  echo "$p"
}

free_port_after() { # PORT: the first free port above PORT
  local p=$(($1 + 1))
  while listening "$p"; do p=$((p + 1)); done
  echo "$p"
}

# A second listener with TLS on TLS_PORT when openssl can make a self-signed certificate
# (TLS_TARGET=127.0.0.1:TLS_PORT, else empty): the target of https_oneshot. A second server
# with keep-alive on (the same location; KA_TARGET, and KA_TLS_TARGET with the certificate):
# the target of http_keepalive and https_keepalive. Its connections stay open for 75 s idle
# and for any number of requests (keepalive_requests would otherwise close one after 1,000).
# A third server with the certificate that resumes TLS sessions (a session cache and tickets,
# TLS 1.3 and 1.2; RESUME_TLS_TARGET): the target of https_resume.
start_nginx() {
  local port conf dir=$WORK/nginx tls_listen= ka_port ka_tls_listen= resume_server=
  mkdir -p "$dir/tmp"
  port=$(free_port)
  ka_port=$(free_port_after "$port")
  TLS_TARGET= KA_TARGET=127.0.0.1:$ka_port KA_TLS_TARGET= RESUME_TLS_TARGET=
  if command -v openssl >/dev/null 2>&1 &&
     openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
       -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
       -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1; then
    local tls_port ka_tls_port resume_port
    tls_port=$(free_port_after "$ka_port")
    ka_tls_port=$(free_port_after "$tls_port")
    resume_port=$(free_port_after "$ka_tls_port")
    resume_server="server {
    listen 127.0.0.1:$resume_port ssl backlog=4096;
    ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:resume:10m; ssl_session_tickets on; ssl_session_timeout 1h;
    location / { default_type text/plain; return 200 \"ok\\n\"; }
  }"
    RESUME_TLS_TARGET=127.0.0.1:$resume_port
    tls_listen="listen 127.0.0.1:$tls_port ssl backlog=4096;
    ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem;
    ssl_session_cache off; ssl_session_tickets off;"
    ka_tls_listen="listen 127.0.0.1:$ka_tls_port ssl backlog=4096;
    ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem;
    ssl_session_cache off; ssl_session_tickets off;"
    TLS_TARGET=127.0.0.1:$tls_port KA_TLS_TARGET=127.0.0.1:$ka_tls_port
  fi
  conf=$dir/nginx.conf
  cat >"$conf" <<EOF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 65536; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  keepalive_timeout 0;
  server {
    listen 127.0.0.1:$port backlog=4096;
    listen 127.0.0.2:$port backlog=4096;
    listen 127.0.0.3:$port backlog=4096;
    listen 127.0.0.4:$port backlog=4096;
    $tls_listen
    location / { default_type text/plain; return 200 "ok\n"; }
  }
  server {
    listen 127.0.0.1:$ka_port backlog=4096;
    $ka_tls_listen
    keepalive_timeout 75s;
    keepalive_requests 1000000000;
    location / { default_type text/plain; return 200 "ok\n"; }
  }
  $resume_server
}
EOF
  ${NICE[@]+"${NICE[@]}"} nginx -e "$dir/error.log" -p "$dir" -c "$conf" </dev/null >"$dir/out.log" 2>&1 &
  TARGET_PID=$!
  for _ in $(seq 50); do
    http_ok 127.0.0.1 "$port" "$URL_PATH" && {
      TARGET=127.0.0.1:$port TARGET_HOSTS=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4; return 0; }
    kill -0 "$TARGET_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "ci/bench.sh: nginx did not start:" >&2; cat "$dir/error.log" "$dir/out.log" >&2 2>/dev/null
  kill "$TARGET_PID" 2>/dev/null; wait "$TARGET_PID" 2>/dev/null; TARGET_PID=
  return 1
}

start_prober_target() {
  local port
  ${NICE[@]+"${NICE[@]}"} "$ROOT/target/release/prober-target" --ignore-stdin </dev/null >"$WORK/target.out" 2>&1 &
  TARGET_PID=$!
  for _ in $(seq 50); do
    port=$(head -n1 "$WORK/target.out" 2>/dev/null)
    if [ -n "$port" ] && http_ok 127.0.0.1 "$port" "$URL_PATH"; then TARGET=127.0.0.1:$port; return 0; fi
    sleep 0.1
  done
  echo "ci/bench.sh: prober-target did not start" >&2
  return 1
}

# Sets TARGET (HOST:PORT) and TARGET_KIND: PROBER_BENCH_TARGET if set; else nginx from the
# distribution's packages (installed with apt-get when missing and we are root), started on a
# free loopback port with a config in $WORK/nginx; else the repository's prober-target.
bench_target() {
  if [ -n "${PROBER_BENCH_TARGET:-}" ]; then
    TARGET=$PROBER_BENCH_TARGET TARGET_KIND=external
  else
    if ! command -v nginx >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing nginx-light from the distribution's packages"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light \
          || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; } >/dev/null 2>&1
    fi
    if command -v nginx >/dev/null 2>&1 && start_nginx; then
      TARGET_KIND="nginx/$(nginx -v 2>&1 | sed 's|.*nginx/||')"
    else
      [ -x "$ROOT/target/release/prober-target" ] || cargo build --release --quiet -p prober-testkit
      start_prober_target || return 1
      TARGET_KIND=prober-target
    fi
  fi
  T_HOST=${TARGET%:*} T_HOST=${T_HOST#[} T_HOST=${T_HOST%]} T_PORT=${TARGET##*:}
  [ -n "$TARGET_HOSTS" ] || TARGET_HOSTS=$T_HOST
}

# grpc-go's health server (crates/prober-testkit/grpc-health-server, the one the tests use),
# built into $WORK by `go build` (Go fetches google.golang.org/grpc from the module proxy the
# first time) and started on a free loopback port: sets GRPC_TARGET=127.0.0.1:PORT. It serves
# "" as SERVING and runs until its stdin, a FIFO held open here, is closed.
GRPC_PID= GRPC_FD=
start_grpc_health() {
  local bin=$WORK/grpc-health-server port
  (cd "$ROOT/crates/prober-testkit/grpc-health-server" && go build -buildvcs=false -o "$bin" .) \
    >"$WORK/grpc-health-server.log" 2>&1 || { cat "$WORK/grpc-health-server.log" >&2; return 1; }
  mkfifo "$WORK/grpc-health-server.in"
  exec {GRPC_FD}<>"$WORK/grpc-health-server.in"
  ${NICE[@]+"${NICE[@]}"} "$bin" <"$WORK/grpc-health-server.in" >"$WORK/grpc-health-server.out" 2>&1 &
  GRPC_PID=$!
  for _ in $(seq 50); do
    port=$(head -n1 "$WORK/grpc-health-server.out" 2>/dev/null)
    if [ -n "$port" ] && listening "$port"; then GRPC_TARGET=127.0.0.1:$port; return 0; fi
    kill -0 "$GRPC_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "ci/bench.sh: the gRPC health server did not start:" >&2; cat "$WORK/grpc-health-server.out" >&2
  stop_grpc_health
  return 1
}

stop_grpc_health() {
  if [ -n "$GRPC_FD" ]; then exec {GRPC_FD}>&-; GRPC_FD=; fi
  if [ -n "$GRPC_PID" ]; then
    kill "$GRPC_PID" 2>/dev/null
    wait "$GRPC_PID" 2>/dev/null
    GRPC_PID=
  fi
}

bench_stop_target() {
  if [ -n "$TARGET_PID" ]; then
    kill "$TARGET_PID" 2>/dev/null
    wait "$TARGET_PID" 2>/dev/null
    TARGET_PID=
  fi
}

# TIME_WAIT sockets on the target port (either end) created since START (seconds since the
# epoch, fractional): the kernel prints each one's remaining time (USER_HZ ticks of a 60 s
# TIME_WAIT), so entries older than the run (an earlier impl's) are left out. Counted 0.3 s
# after the run, once the last closing handshakes are over.
timewait_since() {
  local port=$1 start=$2 hex elapsed
  sleep 0.3
  hex=$(printf '%04X' "$port")
  elapsed=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%d", (n - s) * 100 + 2 }')
  awk -v p=":$hex" -v min=$((6000 - elapsed)) '
    function hex2dec(h,   i, v) { v = 0; h = toupper(h)
      for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789ABCDEF", substr(h, i, 1)) - 1
      return v }
    $4 == "06" && (substr($2, length($2) - 4) == p || substr($3, length($3) - 4) == p) {
      split($6, t, ":"); if (hex2dec(t[2]) >= min) n++ }
    END { print n + 0 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# A network namespace made with `ip netns` (NETNS_NAME, path /run/netns/NAME) with the same
# kind of target as the host's inside, on 127.0.0.1:PORT (the host target's port: the same
# URL, another server): nginx with the one-shot server's configuration when the host's target
# is nginx, else prober-target. For netns_http. Sets NETNS_NAME and NETNS_TARGET_PID.
NETNS_NAME= NETNS_TARGET_PID=
start_netns_target() {
  local port=$1 kind=$2 dir=$WORK/nginx-netns
  NETNS_NAME=prober-bench-$$
  ip netns add "$NETNS_NAME" || { NETNS_NAME=; return 1; }
  ip -n "$NETNS_NAME" link set lo up || return 1
  case $kind in
    nginx/*)
      mkdir -p "$dir/tmp"
      cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 65536; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  keepalive_timeout 0;
  server {
    listen 127.0.0.1:$port backlog=4096;
    location / { default_type text/plain; return 200 "ok\n"; }
  }
}
EOF
      # `ip netns exec` execs nginx: the PID is nginx's master.
      ${NICE[@]+"${NICE[@]}"} ip netns exec "$NETNS_NAME" nginx -e "$dir/error.log" -p "$dir" -c "$dir/nginx.conf" \
        </dev/null >"$dir/out.log" 2>&1 &
      ;;
    *)
      ${NICE[@]+"${NICE[@]}"} ip netns exec "$NETNS_NAME" "$ROOT/target/release/prober-target" --port "$port" \
        --ignore-stdin </dev/null >"$WORK/netns-target.out" 2>&1 &
      ;;
  esac
  NETNS_TARGET_PID=$!
  for _ in $(seq 50); do
    ip netns exec "$NETNS_NAME" curl -sf -o /dev/null "http://127.0.0.1:$port$URL_PATH" && return 0
    kill -0 "$NETNS_TARGET_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "ci/bench.sh: the target inside $NETNS_NAME did not start" >&2
  cat "$dir/error.log" "$dir/out.log" "$WORK/netns-target.out" >&2 2>/dev/null
  return 1
}

stop_netns_target() {
  if [ -n "$NETNS_TARGET_PID" ]; then
    kill "$NETNS_TARGET_PID" 2>/dev/null
    wait "$NETNS_TARGET_PID" 2>/dev/null
    NETNS_TARGET_PID=
  fi
  if [ -n "$NETNS_NAME" ]; then
    ip netns del "$NETNS_NAME" 2>/dev/null
    NETNS_NAME=
  fi
}
