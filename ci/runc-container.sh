#!/usr/bin/env bash
# A real OCI container without an image registry: Debian's runc with a root file system made
# from busybox-static. Its busybox httpd listens on the container's own 127.0.0.1:PORT, which
# the host cannot reach (the container has a network namespace of its own, loopback only).
# Used by ci/namespaces.sh; reusable for network-namespace probes and benchmarks.
#
#   ci/runc-container.sh start NAME [PORT]   make the bundle, start the container (host name
#                                            NAME, httpd on 127.0.0.1:PORT, default 8080,
#                                            serving /www/index.html "hello from NAME"),
#                                            print its init's PID (as the host sees it)
#   ci/runc-container.sh pid NAME            print that PID again
#   ci/runc-container.sh stop NAME           kill and delete the container, remove the bundle
#                                            (quiet and successful when there is nothing)
#
# As a library: `. ci/runc-container.sh` defines runc_container_start/_pid/_stop; a caller
# should `trap 'runc_container_stop NAME' EXIT` before starting, so that a failing test still
# tears the container down. Needs root; installs runc, busybox-static and jq when missing.
set -euo pipefail

RUNC_CONTAINER_ROOT=${RUNC_CONTAINER_ROOT:-/run/prober-runc}

runc_container_start() {
  local name=$1 port=${2:-8080}
  local dir="$RUNC_CONTAINER_ROOT/$name"
  [ "$(id -u)" = 0 ] || { echo "runc-container: needs root (CI runs as root)" >&2; return 1; }
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  # shellcheck source=ci/lib.sh
  . "$here/lib.sh"
  need runc
  need busybox busybox-static
  need jq
  runc_container_stop "$name"
  mkdir -p "$dir/rootfs"/{bin,proc,sys,dev,tmp,www,etc}
  cp "$(command -v busybox)" "$dir/rootfs/bin/busybox"
  # Relative links: `busybox --install` would write the host's path of the binary.
  local applet
  for applet in $("$dir/rootfs/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$dir/rootfs/bin/$applet"
  done
  echo "hello from $name" >"$dir/rootfs/www/index.html"
  echo "root:x:0:0:root:/:/bin/sh" >"$dir/rootfs/etc/passwd"
  (cd "$dir" && rm -f config.json && runc spec)
  # No terminal (detached); loopback up, then httpd in the foreground as the container's init.
  # CAP_NET_ADMIN only for `ip link set lo up`.
  jq --arg name "$name" --arg port "$port" '
      .process.terminal = false
    | .process.args = ["/bin/sh", "-c",
        "ip link set lo up && exec httpd -f -p 127.0.0.1:" + $port + " -h /www"]
    | .hostname = $name
    | .process.capabilities |= with_entries(.value += ["CAP_NET_ADMIN"])
    ' "$dir/config.json" >"$dir/config.json.new"
  mv "$dir/config.json.new" "$dir/config.json"
  runc run -d --bundle "$dir" "$name" </dev/null >"$dir/runc.log" 2>&1 || {
    echo "runc-container: runc run failed:" >&2
    cat "$dir/runc.log" >&2
    return 1
  }
  runc_container_pid "$name"
}

runc_container_pid() {
  local pid
  pid=$(runc state "$1" | jq -r .pid)
  [ -n "$pid" ] && [ "$pid" != 0 ] && [ "$pid" != null ] || {
    echo "runc-container: $1 has no running init" >&2
    return 1
  }
  echo "$pid"
}

runc_container_stop() {
  local name=$1
  if command -v runc >/dev/null 2>&1 && runc state "$name" >/dev/null 2>&1; then
    runc kill "$name" KILL >/dev/null 2>&1 || true
    runc delete --force "$name" >/dev/null 2>&1 || true
  fi
  rm -rf "${RUNC_CONTAINER_ROOT:?}/$name"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    start) runc_container_start "${2:?NAME}" "${3:-8080}" ;;
    pid) runc_container_pid "${2:?NAME}" ;;
    stop) runc_container_stop "${2:?NAME}" ;;
    *)
      echo "usage: $0 start NAME [PORT] | pid NAME | stop NAME" >&2
      exit 64
      ;;
  esac
fi
