#!/usr/bin/env bash
# The manifests in deploy/ cannot rot (issue 28 section 4): every one is submitted to a real
# kube-apiserver as a server-side dry run with strict field validation
# (?dryRun=All&fieldValidation=Strict: unknown or duplicate fields are errors, and admission
# runs as for a real create). The Prometheus Operator's Probe is checked against its published
# CRD (from the operator's Go module), registered first. The module file and the watch file
# inside the ConfigMaps are loaded by prober itself, and deploy/prometheus.yml by promtool.
#
# kube-apiserver and etcd are built from their Go modules once (ci/go-tools.sh; cached under
# ~/.cache/prober-ci) and run on loopback: a static token, AlwaysAllow, a throwaway etcd.
# Every process is this script's child (stdin /dev/null, so that it also runs in the
# background), stopped on exit with SIGTERM, then SIGKILL should it have been ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
. ci/go-tools.sh
. bench/lib.sh # free_port, free_port_after
need_cargo
need_go
need curl
need jq
need openssl

step "etcd $ETCD_VERSION, kube-apiserver $KUBERNETES_VERSION, promtool (built once from their Go modules)"
etcd=$(tool_path etcd)
apiserver=$(tool_path kube-apiserver)
promtool=$(tool_path promtool)
operator_dir=$(_tool_modcache_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")
probe_crd=$operator_dir/example/prometheus-operator-crd/monitoring.coreos.com_probes.yaml
[ -f "$probe_crd" ] || { echo "ci: $probe_crd is missing" >&2; exit 1; }

step "build prober"
cargo build --quiet --locked -p prober-cli
prober=$PWD/target/debug/prober

with_scratch prober-deploy
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- etcd and kube-apiserver on loopback --------------------------------------------------------
etcd_port=$(free_port)
peer_port=$(free_port_after "$etcd_port")
"$etcd" --name test --data-dir "$dir/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "test=http://127.0.0.1:$peer_port" </dev/null >"$dir/etcd.log" 2>&1 &
etcd_pid=$!
pids+=("$etcd_pid")

token=$(openssl rand -hex 16)
echo "$token,ci,ci-uid,system:masters" >"$dir/tokens.csv"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/sa.key" 2>/dev/null
openssl pkey -in "$dir/sa.key" -pubout -out "$dir/sa.pub"
api_port=$(free_port_after "$peer_port")
# Ports are taken when free now; etcd has bound its own by the time the apiserver needs them.
for i in $(seq 300); do
  curl -fsS "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q '"health":"true"' && break
  kill -0 "$etcd_pid" 2>/dev/null || fail "etcd exited"
  [ "$i" = 300 ] && fail "etcd was not healthy within 30 s"
  sleep 0.1
done
"$apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --endpoint-reconciler-type none \
  --secure-port "$api_port" \
  --cert-dir "$dir/certs" --token-auth-file "$dir/tokens.csv" --authorization-mode AlwaysAllow \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
  --service-account-signing-key-file "$dir/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
  </dev/null >"$dir/kube-apiserver.log" 2>&1 &
api_pid=$!
pids+=("$api_pid")
api=https://127.0.0.1:$api_port
# The apiserver writes its self-signed certificate and that certificate's CA into --cert-dir
# before it listens: they are what the test trusts.
kcurl() { curl -sS --cacert "$dir/certs/apiserver.crt" -H "Authorization: Bearer $token" "$@"; }
start=$SECONDS
for i in $(seq 1200); do
  [ "$(kcurl -o /dev/null -w '%{http_code}' "$api/readyz" 2>/dev/null)" = 200 ] && break
  kill -0 "$api_pid" 2>/dev/null || fail "kube-apiserver exited"
  [ "$i" = 1200 ] && fail "kube-apiserver was not ready within 120 s"
  sleep 0.1
done
echo "kube-apiserver $KUBERNETES_VERSION ready at $api after $((SECONDS - start)) s"

# ---- submitting ---------------------------------------------------------------------------------
# The REST path of a manifest: its kind's resource from the API's discovery, its namespace.
resource_path() {
  local file=$1 api_version kind ns group_path plural namespaced
  api_version=$(sed -n 's/^apiVersion: *//p' "$file" | head -n 1)
  kind=$(sed -n 's/^kind: *//p' "$file" | head -n 1)
  ns=$(awk '/^metadata:/ { m = 1; next } /^[^ #]/ { m = 0 } m && $1 == "namespace:" { print $2; exit }' "$file")
  [ -n "$api_version" ] && [ -n "$kind" ] || { echo "$file: no apiVersion or kind" >&2; return 1; }
  case $api_version in */*) group_path=/apis/$api_version ;; *) group_path=/api/$api_version ;; esac
  read -r plural namespaced < <(kcurl "$api$group_path" |
    jq -r --arg k "$kind" '.resources[] | select(.kind == $k and (.name | contains("/") | not)) | "\(.name) \(.namespaced)"')
  [ -n "${plural:-}" ] || { echo "$file: the API server does not know $api_version $kind" >&2; return 1; }
  if [ "$namespaced" = true ]; then
    [ -n "$ns" ] || { echo "$file: $kind needs metadata.namespace" >&2; return 1; }
    echo "$group_path/namespaces/$ns/$plural"
  else
    echo "$group_path/$plural"
  fi
}

# submit FILE [QUERY]: POSTs the YAML (one object) as it is; prints the answer (JSON) to
# $dir/answer.json and returns non-zero unless it was 201 (or 200).
submit() {
  local file=$1 query=${2:-} path code
  path=$(resource_path "$file") || return 1
  code=$(kcurl -o "$dir/answer.json" -w '%{http_code}' -X POST -H 'Content-Type: application/yaml' \
    --data-binary "@$file" "$api$path$query")
  case $code in
    200 | 201) return 0 ;;
    *) echo "$file: HTTP $code: $(jq -r '.message // .' "$dir/answer.json" 2>/dev/null || cat "$dir/answer.json")" >&2
       return 1 ;;
  esac
}

# The namespace and the Probe CRD are created for real: the dry runs need them to exist.
step "namespace and the Probe CRD (prometheus-operator $PROMETHEUS_OPERATOR_VERSION's published schema)"
submit deploy/namespace.yaml || fail "creating the namespace"
sed '/^---$/d' "$probe_crd" >"$dir/probe-crd.yaml"
submit "$dir/probe-crd.yaml" || fail "registering the Probe CRD"
for i in $(seq 300); do
  kcurl "$api/apis/apiextensions.k8s.io/v1/customresourcedefinitions/probes.monitoring.coreos.com" |
    jq -e '.status.conditions[]? | select(.type == "Established" and .status == "True")' >/dev/null && break
  [ "$i" = 300 ] && fail "the Probe CRD was not established within 30 s"
  sleep 0.1
done
# Discovery lists the new group a moment after Established.
for i in $(seq 300); do
  kcurl "$api/apis/monitoring.coreos.com/v1" 2>/dev/null | jq -e '.resources[]? | select(.kind == "Probe")' >/dev/null && break
  [ "$i" = 300 ] && fail "the Probe kind did not appear in discovery within 30 s"
  sleep 0.1
done

step "every manifest in deploy/: server-side dry run, strict field validation"
status=0
manifests=$(find deploy -name '*.yaml' ! -name namespace.yaml | sort)
[ -n "$manifests" ] || fail "no manifests in deploy/"
for f in $manifests; do
  if submit "$f" '?dryRun=All&fieldValidation=Strict'; then
    name=$(jq -r .metadata.name "$dir/answer.json")
    echo "ok: $f ($(sed -n "s/^kind: *//p" "$f") $name)"
    cp "$dir/answer.json" "$dir/$(basename "$f" .yaml)-$(basename "$(dirname "$f")").json"
  else
    status=1
  fi
done
# The check must be able to fail: an unknown field is refused.
sed 's/^  replicas: 2$/  replicas: 2\n  replicaz: 2/' deploy/serve/deployment.yaml >"$dir/bad-deployment.yaml"
if submit "$dir/bad-deployment.yaml" '?dryRun=All&fieldValidation=Strict' 2>"$dir/bad.err"; then
  echo "FAIL: a Deployment with an unknown field was accepted" >&2; status=1
elif grep -q 'unknown field "spec.replicaz"' "$dir/bad.err"; then
  echo "ok: an unknown field is refused: $(cat "$dir/bad.err")"
else
  echo "FAIL: an unknown field was refused for another reason: $(cat "$dir/bad.err")" >&2; status=1
fi
sed 's/^  module: http_2xx$/  module: http_2xx\n  modul: http_2xx/' deploy/serve/probe.yaml >"$dir/bad-probe.yaml"
if submit "$dir/bad-probe.yaml" '?dryRun=All&fieldValidation=Strict' 2>"$dir/bad.err"; then
  echo "FAIL: a Probe with an unknown field was accepted" >&2; status=1
elif grep -q 'unknown field "spec.modul"' "$dir/bad.err"; then
  echo "ok: an unknown field of a Probe is refused: $(cat "$dir/bad.err")"
else
  echo "FAIL: the Probe with an unknown field was refused for another reason: $(cat "$dir/bad.err")" >&2; status=1
fi

step "the files inside the ConfigMaps load in prober; deploy/prometheus.yml in promtool"
jq -r '.data["blackbox.yml"]' "$dir/configmap-serve.json" >"$dir/blackbox.yml"
"$prober" serve --config "$dir/blackbox.yml" --listen 127.0.0.1:0 </dev/null >"$dir/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
for i in $(seq 300); do
  grep -q 'listening on' "$dir/serve.log" && { echo "ok: prober serve loads the module file: $(cat "$dir/serve.log")"; break; }
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "FAIL: prober serve refused the module file of deploy/serve/configmap.yaml: $(cat "$dir/serve.log")" >&2
    status=1; break
  fi
  [ "$i" = 300 ] && { echo "FAIL: prober serve did not start within 30 s" >&2; status=1; }
  sleep 0.1
done
jq -r '.data["watch.yaml"]' "$dir/configmap-watch.json" >"$dir/watch.yaml"
# --for 1ms: load, start, stop; 0 or 1 (not ready) is a loaded file, 64-66 a refused one.
code=0
"$prober" watch "$dir/watch.yaml" --for 1ms </dev/null >"$dir/watch.out" 2>&1 || code=$?
if [ "$code" -le 1 ]; then
  echo "ok: prober watch loads the watch file (exit $code)"
else
  echo "FAIL: prober watch refused the watch file of deploy/watch/configmap.yaml (exit $code): $(cat "$dir/watch.out")" >&2
  status=1
fi
if "$promtool" check config deploy/prometheus.yml >"$dir/promtool.out" 2>&1; then
  echo "ok: promtool check config deploy/prometheus.yml"
else
  echo "FAIL: promtool check config deploy/prometheus.yml:" >&2; cat "$dir/promtool.out" >&2; status=1
fi
exit $status
