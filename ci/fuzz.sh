#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a fixed time: ci/fuzz.sh [SECONDS] (default 60 each).
# ci/test.sh runs the server-side targets (what clients send the endpoints) for a few seconds
# each; the full set runs only here. The committed seeds in fuzz/corpus/<target>/ are read, never written:
# the growing corpus lives in fuzz/target/corpus/<target>/ and findings in fuzz/artifacts/.
#
# cargo-fuzz needs nightly compiler flags (-Zsanitizer, sancov). Where no nightly toolchain is
# available, RUSTC_BOOTSTRAP=1 lets the installed stable rustc accept them. AddressSanitizer
# is used when it builds; otherwise the targets are built without a sanitizer (-s none), which
# still catches panics, overflows (overflow-checks are on) and timeouts.
# Environment: FUZZ_TARGETS="url expand" runs only those; FUZZ_JOBS=N runs N workers per target.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo

secs=${1:-60}
jobs=${FUZZ_JOBS:-1}
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  step "installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi

cd fuzz
# Builds the targets with sanitizer $1: only those of FUZZ_TARGETS when it is set.
build() {
  if [ -z "${FUZZ_TARGETS:-}" ]; then
    cargo fuzz build -O -s "$1"
    return
  fi
  for t in $FUZZ_TARGETS; do
    cargo fuzz build -O -s "$1" "$t" || return 1
  done
}

step "build the fuzz targets"
sanitizer=address
if ! build address >build.log 2>&1; then
  echo "ci: the AddressSanitizer build failed (tail of the log below); building without a sanitizer"
  tail -5 build.log
  sanitizer=none
  build none
fi
rm -f build.log

targets=${FUZZ_TARGETS:-$(cargo fuzz list)}
# Longest input per target: enough to cross each parser's limits (64 KiB heads, 16 KiB chunk
# extensions and trailers; the server's 16 KiB request head and its control byte).
max_len() {
  case $1 in
    http_head) echo 70000 ;;
    dns_response) echo 65535 ;;
    httpd_head) echo 20000 ;;
    http_body) echo 40000 ;;
    grpc_response) echo 40000 ;;
    h2_frames) echo 40000 ;;
    watch_file) echo 16384 ;;
    cert_not_after) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

failed=()
for t in $targets; do
  step "fuzz $t for ${secs}s (sanitizer: $sanitizer)"
  mkdir -p "target/corpus/$t" "artifacts/$t"
  start=$(date +%s)
  options=()
  [ "$jobs" -gt 1 ] && options=(-jobs="$jobs" -workers="$jobs")
  # A target's dictionary, where it has one (fuzz/dicts/<target>.dict): tokens that the
  # mutator combines, such as YAML's tags, anchors and aliases for watch_file.
  [ -f "dicts/$t.dict" ] && options+=(-dict="dicts/$t.dict")
  if cargo fuzz run -O -s "$sanitizer" "$t" "target/corpus/$t" "corpus/$t" -- \
       -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
       "${options[@]}" -print_final_stats=1 2>"target/$t.log"; then
    runs=$( { cat "target/$t.log" fuzz-*.log 2>/dev/null || true; } \
             | awk '/stat::number_of_executed_units/ { n += $2 } END { print n + 0 }')
    echo "$t: ok after $(( $(date +%s) - start ))s, $runs inputs run"
    echo "$t: corpus $(find "target/corpus/$t" -type f | wc -l) inputs"
  else
    echo "$t: FAILED; the end of its log:"
    tail -40 "target/$t.log" fuzz-*.log 2>/dev/null
    ls -l "artifacts/$t"
    failed+=("$t")
  fi
  rm -f fuzz-*.log
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in fuzz/artifacts/<target>/;"
  echo "      replay with: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> <file>)"
  exit 1
fi
step "fuzz: every target ran ${secs}s without a finding"
