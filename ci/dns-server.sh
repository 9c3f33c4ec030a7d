#!/usr/bin/env bash
# The DNS probe against a real server (issue 36): Debian's nsd, which prober-dns's tests start
# on a loopback port with zones they write to a temporary directory (crates/prober-dns/tests/
# support), also serving DNS over TLS (NSD 4.3+: tls-service-pem, tls-service-key, tls-port)
# with a certificate of the testkit's CA, and inside network namespaces the tests make (root and
# iproute2's `ip`). Installs nsd when it is missing, then runs the crate's tests; a test fails
# (never skips) when nsd is not there, and its message names this script.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
# Debian puts nsd in /usr/sbin, which a non-root PATH may lack.
export PATH="$PATH:/usr/sbin"
need nsd nsd

step "prober-dns against nsd $(nsd -v 2>&1 | head -1 | awk '{print $3}')"
cargo test -p prober-dns
