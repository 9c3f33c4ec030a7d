# shellcheck shell=bash
# Builds the third-party Go programs the integration tests and benchmarks run against
# (Prometheus and promtool, blackbox_exporter, etcd, kube-apiserver, cloudprober) from their Go
# modules,
# through the Go module proxy, once: each build is cached under $PROBER_TOOLS_CACHE keyed by
# name and version, so only the first run on a machine pays it. Nothing of theirs is kept in
# this repository. Sourced, not run; needs ci/lib.sh first.
#
#   tool_path NAME      prints the cached binary's path (building it first when missing):
#                       prometheus, promtool, blackbox_exporter, etcd, kube-apiserver,
#                       cloudprober (ci/bench.sh's on-demand peer; not in tool_build_all)
#   tool_build_all      builds every tool not yet cached (for warming a cache ahead of time)
#
# Builds are plain `go build -trimpath` of the one command each test needs: no race detector,
# no web assets, no tests; GOFLAGS from the environment is ignored so that a -race or -mod
# setting meant for our own Go suites cannot slow these down or break them.
#
# The first build on a machine, measured on 2 cores (load average 0.1-5 from other work),
# module cache already filled, empty build cache: kube-apiserver 356 s (523 s of CPU),
# prometheus + promtool 237 s (301 s), etcd 47 s (85 s), blackbox_exporter 30 s (56 s):
# about 11 minutes in all, once; later runs take the cached binaries. cloudprober (ci/bench.sh's
# on-demand peer, not in tool_build_all): 483 s with its modules downloaded in the same go build
# (189 s of CPU; load average 7-16 from other work), a 58 MB binary.

PROBER_TOOLS_CACHE=${PROBER_TOOLS_CACHE:-$HOME/.cache/prober-ci}

PROMETHEUS_MODULE_VERSION=v0.316.0 # Prometheus 3.16.0 (its Go module numbers are v0.3MM.P)
BLACKBOX_VERSION=v0.25.0 # ci/bench.sh's serve_probe baseline (docs/benchmarks.md's figures)
# The current release, for ci/blackbox-parity.sh, which runs its unit-test cases; cached beside
# the other (the cache is keyed by version): that script sets BLACKBOX_VERSION to it.
BLACKBOX_PARITY_VERSION=v0.28.0
ETCD_VERSION=v3.6.16
CLOUDPROBER_VERSION=v0.14.4 # ci/bench.sh's self-scheduling peer (issue 37): sched_10k, sched_100k
KUBERNETES_VERSION=v1.37.2
# shellcheck disable=SC2034 # read by ci/deploy-check.sh, which sources this file
PROMETHEUS_OPERATOR_VERSION=v0.85.0 # its Probe CRD

# go on PATH (the official tarball installs it under /usr/local/go/bin).
need_go() {
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  fi
  need go golang-go
}

# Environment for every go command here: the user's proxy settings are kept, nothing else.
_tool_go() {
  env GOFLAGS=-buildvcs=false GOWORK=off GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" CGO_ENABLED=0 go "$@"
}

# The module cache directory of MODULE@VERSION, downloaded through the proxy when missing.
_tool_modcache_dir() {
  local mod=$1
  _tool_go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

# _tool_build_TOOL OUT: builds TOOL's binaries into the directory OUT; called with a scratch
# directory as the working directory.
_tool_build_prometheus() {
  local out=$1 dir
  # prometheus and promtool (for `promtool check config`) in one build, inside the module's own
  # copy, so that its go.mod (versions, replaces) is the one used. Without the `builtinassets`
  # tag the React UI is not embedded (it is not in the module zip anyway; the UI's pages
  # answer an error): the HTTP API, which is all the tests use, works the same.
  # `remove_all_sd` leaves out the cloud service discoveries (AWS, Azure, GCE and a dozen
  # more: most of the build); `enable_kubernetes_sd` keeps the one deploy/prometheus.yml uses;
  # static_configs are always there.
  dir=$(_tool_modcache_dir "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION")
  (cd "$dir" && _tool_go build -trimpath -ldflags=-s -tags remove_all_sd,enable_kubernetes_sd \
    -o "$out/" ./cmd/prometheus ./cmd/promtool)
}

_tool_build_blackbox_exporter() {
  local out=$1 dir
  # `go install ...@VERSION` needs the module's version list, which the proxy may not serve;
  # a download of the exact version and a build in its own copy do not.
  dir=$(_tool_modcache_dir "github.com/prometheus/blackbox_exporter@$BLACKBOX_VERSION")
  (cd "$dir" && _tool_go build -trimpath -ldflags=-s -o "$out/blackbox_exporter" .)
}

_tool_build_cloudprober() {
  local out=$1 dir
  # The command the project's own release builds (its Makefile: CGO_ENABLED=0, -s -w), in the
  # module's own copy so that its go.mod is the one used; no version stamped in (main.version
  # stays empty: nothing in the benchmark reads it).
  dir=$(_tool_modcache_dir "github.com/cloudprober/cloudprober@$CLOUDPROBER_VERSION")
  (cd "$dir" && _tool_go build -trimpath -ldflags='-s -w' -o "$out/cloudprober" ./cmd/cloudprober)
}

_tool_build_etcd() {
  local out=$1
  # etcd's own go.mod replaces its sibling modules with relative paths, which a module cache
  # copy does not have: a wrapper module takes the published versions instead.
  _tool_go mod init prober-ci/etcd >/dev/null 2>&1 &&
    _tool_go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null &&
    _tool_go build -trimpath -ldflags=-s -o "$out/etcd" go.etcd.io/etcd/server/v3
}

_tool_build_kube_apiserver() {
  local out=$1 dir staging minor m
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
  # ./staging/src/...; a wrapper module replaces each with its published v0.MINOR.PATCH.
  dir=$(_tool_modcache_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")
  minor=v0.${KUBERNETES_VERSION#v1.}
  _tool_go mod init prober-ci/kube-apiserver >/dev/null 2>&1 || return 1
  staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$dir/go.mod")
  [ -n "$staging" ] || { echo "ci: no staging replaces found in $dir/go.mod" >&2; return 1; }
  for m in $staging; do
    _tool_go mod edit -replace "$m=$m@$minor" || return 1
  done
  _tool_go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBERNETES_VERSION" >/dev/null &&
    _tool_go build -trimpath -ldflags=-s -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
}

# The tool (build) that makes binary NAME, and its version.
_tool_of() {
  case $1 in
    prometheus | promtool) echo "prometheus $PROMETHEUS_MODULE_VERSION" ;;
    blackbox_exporter) echo "blackbox_exporter $BLACKBOX_VERSION" ;;
    etcd) echo "etcd $ETCD_VERSION" ;;
    kube-apiserver) echo "kube-apiserver $KUBERNETES_VERSION" ;;
    cloudprober) echo "cloudprober $CLOUDPROBER_VERSION" ;;
    *) echo "ci: unknown tool $1" >&2; return 1 ;;
  esac
}

tool_path() {
  local name=$1 tool version dir scratch start status
  read -r tool version < <(_tool_of "$name") || return 1
  dir="$PROBER_TOOLS_CACHE/$tool-$version"
  if [ ! -x "$dir/$name" ]; then
    need_go
    mkdir -p "$PROBER_TOOLS_CACHE"
    scratch=$(mktemp -d)
    rm -rf "$dir.tmp" && mkdir "$dir.tmp"
    echo "ci: building $tool $version from its Go module (once; cached in $dir)" >&2
    start=$(date +%s)
    status=0
    # A build cache of its own, removed afterwards (several GB for kube-apiserver, of no use
    # once the binary is cached), unless PROBER_TOOLS_GOCACHE names one to keep.
    (cd "$scratch" && GOCACHE=${PROBER_TOOLS_GOCACHE:-$scratch/go-build} \
      "_tool_build_${tool//-/_}" "$dir.tmp") || status=$?
    chmod -R u+w "$scratch" 2>/dev/null
    rm -rf "$scratch"
    if [ "$status" != 0 ] || [ ! -x "$dir.tmp/$name" ]; then
      rm -rf "$dir.tmp"
      echo "ci: building $tool $version failed" >&2
      return 1
    fi
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    echo "ci: built $tool $version in $(($(date +%s) - start)) s" >&2
  fi
  echo "$dir/$name"
}

tool_build_all() {
  local t
  for t in prometheus blackbox_exporter etcd kube-apiserver; do
    tool_path "$t" >/dev/null
  done
  # ci/blackbox-parity.sh's release of blackbox_exporter (bash scoping: tool_path sees it).
  local BLACKBOX_VERSION=$BLACKBOX_PARITY_VERSION
  tool_path blackbox_exporter >/dev/null
}
