#!/usr/bin/env bash
# HTTP over a Unix socket against nginx (issue 25): nginx from Debian listens on a socket in a
# temporary directory, and `prober check --unix-socket` probes it as curl would. nginx runs in
# the foreground as this script's child and is stopped by its pid at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need nginx nginx-light

cargo build --quiet -p prober-cli
prober=$PWD/target/debug/prober
dir=$(mktemp -d)
sock=$dir/nginx.sock
cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server {
    listen unix:$sock;
    location = /healthz { return 200 "ok"; }
    location = /echo    { return 200 "\$request_method \$host"; }
    location = /down    { return 503 "down"; }
    location = /moved   { return 307 /echo; }
  }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
nginx_pid=$!
trap 'kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
# Wait for the socket to accept (prober itself is the readiness check), at most 10 s.
for _ in $(seq 100); do
  "$prober" check --timeout 100ms "unix://$sock" >/dev/null 2>&1 && break
  kill -0 "$nginx_pid" 2>/dev/null || { echo "nginx exited" >&2; exit 1; }
  sleep 0.1
done

fail=0
expect() { # expect EXIT_CODE OUTPUT_SUBSTRING ARGS...
  local want_code=$1 want=$2 out code=0
  shift 2
  out=$("$prober" check --json "$@") || code=$?
  if [ "$code" != "$want_code" ] || [[ "$out" != *"$want"* ]]; then
    echo "FAIL: prober check $*: exit $code, $out (want exit $want_code with $want)" >&2
    fail=1
  else
    echo "ok: prober check $* -> $want"
  fi
}
expect 0 '"output":"ok"' --unix-socket "$sock" http://localhost/healthz
expect 0 '"output":"GET api.internal"' --unix-socket "$sock" http://api.internal/echo
expect 0 '"output":"POST localhost"' --unix-socket "$sock" -d x http://localhost/echo
# nginx announces Content-Length: 2 and sends no body: a HEAD probe must not wait for it.
expect 0 '"output":"",' --unix-socket "$sock" -X HEAD --timeout 5s http://localhost/healthz
expect 1 '"http_status":503' --unix-socket "$sock" http://localhost/down
expect 0 '"output":"PUT localhost"' --unix-socket "$sock" -X PUT -d x http://localhost/moved
expect 0 '"result":"success"' "unix://$sock"
expect 1 'connect: no such file or directory' --unix-socket "$dir/none.sock" http://localhost/
exit $fail
