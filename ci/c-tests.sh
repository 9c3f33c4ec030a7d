#!/usr/bin/env bash
# The C suite: builds libprober with the test-panic export and the prober-target server, then
# runs ctest on c-tests/ twice (plain, and with AddressSanitizer + UndefinedBehaviorSanitizer),
# and the plain binaries once more under valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need cmake
need cc gcc
need c++ g++
need valgrind
# test_dns starts Debian's nsd (in /usr/sbin, which a non-root PATH may lack).
export PATH="$PATH:/usr/sbin"
need nsd nsd

step "build libprober (test-panic) and prober-target"
cargo build --quiet -p prober-ffi --features test-panic
cargo build --quiet -p prober-testkit --bin prober-target
out=target/c-tests
mkdir -p "$out"
# Copied, because a later plain build of prober-ffi overwrites target/debug/libprober.a.
cp target/debug/libprober.a "$out/libprober-test.a"
lib=$PWD/$out/libprober-test.a
server=$PWD/target/debug/prober-target

for variant in plain sanitize; do
  step "ctest ($variant)"
  sanitize=OFF; [ "$variant" = sanitize ] && sanitize=ON
  cmake -S c-tests -B "$out/$variant" -DPROBER_LIBRARY="$lib" -DPROBER_TARGET_BIN="$server" \
        -DPROBER_SANITIZE=$sanitize -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build "$out/$variant" -j2 >/dev/null
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$out/$variant" --output-on-failure -j2
done

step "valgrind (plain build)"
failed=0
for t in "$out"/plain/test_*; do
  [ -x "$t" ] || continue
  # --fair-sched: valgrind runs one thread at a time; without fair scheduling a thread that
  # never blocks can starve the other, and test_busy needs both to take turns.
  if ! valgrind --quiet --fair-sched=yes --error-exitcode=99 --leak-check=full \
       --errors-for-leak-kinds=definite --track-fds=no "$t" >"$t.valgrind.log" 2>&1; then
    echo "valgrind: $(basename "$t") FAILED"; cat "$t.valgrind.log"; failed=$((failed + 1))
  else
    echo "valgrind: $(basename "$t") ok"
  fi
done
[ "$failed" = 0 ] || { echo "valgrind: $failed test(s) failed"; exit 1; }
