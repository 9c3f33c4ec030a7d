#!/usr/bin/env bash
# linux/arm64 on an x86-64 machine: cross-builds the workspace for aarch64-unknown-linux-gnu
# (Debian's gcc-aarch64-linux-gnu and arm64 glibc; installed when missing) and runs under
# qemu-aarch64 (qemu-user):
#   1. the Rust tests of every crate (cargo test --workspace; cargo runs each test binary under
#      qemu, and the CLI tests run the `prober` binary under it: PROBER_TEST_RUNNER);
#   2. the C suite (c-tests/, CMake with the cross compilers, ctest under qemu). The sanitizer
#      and valgrind passes run natively only (ci/c-tests.sh): ASan needs its shadow memory
#      layout, which qemu-user does not give, and valgrind does not run under qemu;
#   3. the C ABI as arm64 sees it: include/prober.h's types (sizes, offsets, enum values) and
#      libprober.so's DWARF compared with the x86-64 baseline under abi/ (abidiff
#      --no-architecture), with `char` unsigned here;
#   4. the Go binding's tests (GOARCH=arm64, CC=aarch64-linux-gnu-gcc, go test -exec qemu),
#      without -race: the race detector's runtime does not run under qemu-user.
# The test servers the C and Go suites start (prober-target) are the native x86-64 build: they
# are another process on loopback, and qemu-user cannot start an arm64 binary from an x86-64
# process without a binfmt_misc handler, which this script does not install (it is a kernel-wide
# setting). Tests that cannot run under qemu-user are named in SKIP below with the reason and
# printed: nothing is skipped silently.
#
# What qemu-user cannot show: arm64's weaker memory ordering. qemu runs the guest's threads on
# the x86-64 host, whose stronger ordering hides a missing Acquire/Release. The library's
# atomics were reviewed instead: the C engine's in_use flag (compare_exchange Acquire, store
# Release), the workers' and runner's stop flags (Release/Acquire, AcqRel swap); the only
# Relaxed one is a statistics counter (prober-transport's TLS file parses).
# Usage: ci/arm64.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need_cargo
need_aarch64_cross
need aarch64-linux-gnu-g++ g++-aarch64-linux-gnu
need cmake
need abidw abigail-tools
need abidiff abigail-tools
need perl perl-base
target=aarch64-unknown-linux-gnu
qemu="qemu-aarch64 -L $AARCH64_SYSROOT"
export PROBER_TEST_RUNNER=$qemu
echo "$(qemu-aarch64 --version | head -n 1); $(aarch64-linux-gnu-gcc --version | head -n 1)"

# Rust tests that cannot run under qemu-user: "test-binary test-name: reason". They run
# natively in ci/test.sh; the names are matched exactly (cargo test -- --skip NAME --exact),
# a unit test by its path (`server::tests::NAME`): the name ends at the first ": ".
REASON_CLONE_PARENT="qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
REASON_NETNS="qemu-user does not pass the NS_GET_NSTYPE ioctl through (ENOSYS): no namespace file can be checked"
REASON_THREAD_EXIT="qemu-user's host thread outlives the guest thread's join for a moment, so /proc/self/task still lists a joined thread"
SKIP=(
  # An arm64 binary started by a native process (or by the test itself through posix_spawn):
  # qemu-user runs only the program it was given; the kernel cannot exec an arm64 binary
  # without a binfmt_misc handler, a machine-wide setting that this script does not change.
  "prober-cli/check_exec exec_command_gets_no_descriptor_of_the_shell: a native /bin/sh execs the arm64 prober (binfmt_misc)"
  "prober-http/hostile memory_stays_bounded_under_every_hostile_peer: re-runs its own arm64 test binary as a child (binfmt_misc)"
  "prober-http/http h01_proxy_env_is_ignored: re-runs its own arm64 test binary as a child (binfmt_misc)"
  "prober-testkit/server binary_serves_until_stdin_eof: spawns the arm64 prober-target binary (binfmt_misc)"
  "prober-blackbox/ip_family preferred_ip_protocol_chooses_the_family: re-runs its own arm64 test binary as a child, under unshare with its own /etc/hosts (binfmt_misc)"
  "prober-httpd/lib server::tests::a_panic_that_escapes_the_loop_aborts_the_process: re-runs its own arm64 test binary as a child (binfmt_misc)"
  "prober-engine/hung_lookups a_name_in_etc_hosts_is_answered_while_300_lookups_hang: re-runs its own arm64 test binary as a child, under unshare with its own network, /etc/hosts and /etc/resolv.conf (binfmt_misc)"
  # qemu-user emulates glibc's posix_spawn (clone with CLONE_VM|CLONE_VFORK) as a plain fork:
  # the child's exec error cannot reach the parent's memory, so a missing program looks like
  # a command that ran and exited 127 instead of a spawn error.
  "prober-exec/descriptors a_missing_program_and_a_bad_directory_are_still_spawn_errors: posix_spawn's exec error under qemu's fork emulation of vfork"
  "prober-exec/exec e4_spawn_failures_are_unknown: posix_spawn's exec error under qemu's fork emulation of vfork"
  # /proc/self/status is qemu's own: qemu catches every signal to forward it to the guest, so
  # SigIgn never shows the SIGINT that the test ignored before exec.
  "prober-cli/watch_signals sigint_ignored_at_start_stays_ignored: /proc/self/status SigIgn shows qemu's handlers, not the guest's"
  # Exec inside another process's namespaces clones the command with CLONE_PARENT, which
  # qemu-user's clone emulation refuses (EINVAL): these run natively in ci/test.sh.
  "prober-exec/namespaces the_command_runs_in_the_targets_namespaces: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-exec/namespaces a_timeout_kills_the_whole_group_inside: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-exec/namespaces a_user_namespace_is_entered_where_it_differs: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-exec/namespaces no_permission_is_named_and_costs_one_run: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-exec/namespaces the_environment_is_the_hosts_plus_the_specs_inside_too: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-exec/containment with_a_cgroup_setsid_inside_namespaces_does_not_outlive_the_run: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-cli/namespaces check_runs_the_command_in_the_namespaces_of_a_process: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-cli/namespaces check_without_the_rights_says_which: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  "prober-cli/namespaces watch_file_targets_name_the_process: qemu-user refuses clone(CLONE_PARENT) (its fork emulation takes CSIGNAL flags only)"
  # Probes in another network namespace check the namespace file with the NS_GET_NSTYPE
  # ioctl, which qemu-user does not know (ENOSYS): these run natively in ci/test.sh.
  "prober-engine/source_address inside_a_namespace_the_address_is_the_namespaces: $REASON_NETNS"
  "prober-cli/netns check_reaches_the_namespace_it_names: $REASON_NETNS"
  "prober-cli/netns check_without_the_capability_is_unknown: $REASON_NETNS"
  "prober-cli/netns dual_stack_names_resolve_on_the_host_and_race_inside: $REASON_NETNS"
  "prober-cli/netns watch_file_mixes_namespace_and_host_targets: $REASON_NETNS"
  "prober-cli/netns watch_file_target_with_netns_and_namespaces_of: $REASON_NETNS"
  "prober-cli/netns family_flags_apply_inside_a_namespace: $REASON_NETNS"
  "prober-engine/netns each_probe_reaches_the_server_of_its_namespace: $REASON_NETNS"
  "prober-engine/netns ipv6_and_extra_addresses_inside: $REASON_NETNS"
  "prober-engine/netns periodic_workers_inside_and_outside_side_by_side: $REASON_NETNS"
  "prober-engine/netns unusable_namespaces_are_unknown_naming_the_path_and_the_engine_goes_on: $REASON_NETNS"
  "prober-engine/netns_cache one_open_per_path_reopened_on_a_new_identity_closed_when_unnamed: $REASON_NETNS"
  "prober-engine/netns_scale one_engine_probes_a_thousand_namespaces: $REASON_NETNS"
  "prober-engine/dns a_dns_probe_with_set_netns_queries_inside_the_namespace: $REASON_NETNS"
  "prober-engine/icmp_netns icmp_probes_run_inside_the_namespace_they_name_sharing_its_socket: $REASON_NETNS"
  "prober-engine/icmp_netns on_a_shared_socket_replies_without_the_runs_data_wake_no_run: $REASON_NETNS"
  "prober-dns/netns udp_tcp_and_tls_queries_reach_a_server_inside_the_namespace: $REASON_NETNS"
  "prober-cli/dns_icmp dns_check_in_a_network_namespace: $REASON_NETNS"
  "prober-dns/source_address in_a_namespace_the_socket_is_bound_there: $REASON_NETNS"
  "prober-engine/netns_pool probes_in_a_namespace_reuse_their_sockets: $REASON_NETNS"
  "prober-engine/netns_pool the_last_target_gone_no_descriptor_of_the_namespace_remains: $REASON_NETNS"
  "prober-engine/netns_pool a_path_bound_to_a_new_namespace_is_probed_there: $REASON_NETNS"
  "prober-engine/netns_pool sockets_of_an_idle_namespace_are_closed: $REASON_NETNS"
  "prober-engine/threads_drop dropping_the_group_stops_both_engine_threads: $REASON_THREAD_EXIT"
  # Too slow under emulation even with optimized dependencies (see below): a bound set for real
  # hardware.
  "prober-cli/hostile_input oversized_input_is_refused_before_it_is_read: parses 64 MiB of YAML, about 125 s under qemu, beyond the test's 120 s hang bound"
  # qemu-user does not know the socket option IP_BIND_ADDRESS_NO_PORT (ENOPROTOOPT). The probe
  # goes on without it (the port is then taken at bind); the test reads the option's effect.
  "prober-transport/lib socket::tests::source_bind_leaves_the_port_to_connect: qemu-user does not know IP_BIND_ADDRESS_NO_PORT (ENOPROTOOPT)"
)
step "Rust tests not run under qemu-user (they run natively in ci/test.sh)"
skip_args=()
for s in "${SKIP[@]}"; do
  echo "  $s"
  name=${s#* }; name=${name%%: *}
  skip_args+=(--skip "$name")
done

step "cargo test --workspace --target $target (under qemu-aarch64)"
# The dependencies optimized (opt-level 2), the workspace's crates as in any test build: under
# emulation an unoptimized ring makes every TLS handshake take over a second, beyond the
# timeouts the TLS tests set, and an unoptimized YAML parser takes minutes over the CLI's
# large-input tests. Optimized dependencies keep those tests in the suite.
cargo test --workspace --locked --target "$target" --no-fail-fast \
  --config 'profile.dev.package."*".opt-level = 2' \
  -- --exact "${skip_args[@]}" 2>&1 | tee target/arm64-cargo-test.log
rust_passed=$(awk '/^test result: ok\./ {n += $4} END {print n + 0}' target/arm64-cargo-test.log)
rust_ignored=$(awk '/^test result: ok\./ {n += $8} END {print n + 0}' target/arm64-cargo-test.log)
echo "arm64: $rust_passed Rust tests (unit, integration, doc) passed under qemu-aarch64;" \
     "$rust_ignored ignored by the suites themselves; ${#SKIP[@]} not run (listed above)"

step "the C ABI on arm64 against the x86-64 baseline (PROBER_ABI_TARGET=$target ci/abi-check.sh)"
PROBER_ABI_TARGET=$target bash ci/abi-check.sh

step "C suite (CMake with aarch64-linux-gnu-gcc/g++, ctest under qemu-aarch64)"
cargo build --quiet --locked -p prober-ffi --features test-panic --target "$target"
cargo build --quiet --locked -p prober-testkit --bin prober-target
out=target/c-tests-arm64
mkdir -p "$out"
cp "target/$target/debug/libprober.a" "$out/libprober-test.a"
cmake -S c-tests -B "$out/build" -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
      -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ \
      -DCMAKE_CROSSCOMPILING_EMULATOR="qemu-aarch64;-L;$AARCH64_SYSROOT" \
      -DPROBER_LIBRARY="$PWD/$out/libprober-test.a" \
      -DPROBER_TARGET_BIN="$PWD/target/debug/prober-target" >/dev/null
cmake --build "$out/build" -j2 >/dev/null
file -b "$out/build/test_check" | grep -q 'ARM aarch64' || { echo "arm64: the C tests were not built for aarch64" >&2; exit 1; }
# test_namespaces: the command is cloned with CLONE_PARENT, which qemu-user refuses; it runs
# natively in ci/c-tests.sh.
echo "not under qemu: test_namespaces ($REASON_CLONE_PARENT), test_netns ($REASON_NETNS)"
ctest --test-dir "$out/build" --output-on-failure -j2 -E '^(test_namespaces|test_netns)$' | tee "$out/ctest.log"
c_passed=$(sed -n 's/.* tests passed, 0 tests failed out of \([0-9]*\)/\1/p' "$out/ctest.log")

step "Go binding (GOARCH=arm64, go test -exec qemu-aarch64; -tags debug too)"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
need go golang-go
# prober/lib/linux_arm64/libprober.a links to this build in a checkout (link_static.go).
cargo build --quiet --release --locked -p prober-ffi --features test-panic --target "$target"
# grpc-go's health server for the binding's gRPC tests, built for this machine: an arm64 test
# under qemu can start a native program, not another arm64 one (no binfmt_misc handler).
health_server="$PWD/target/arm64-grpc-health-server"
(cd crates/prober-testkit/grpc-health-server && go build -buildvcs=false -o "$health_server" .)
(
  cd bindings/go
  export GOARCH=arm64 CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc
  export PROBER_TARGET_BIN="$PWD/../../target/debug/prober-target"
  export PROBER_GRPC_HEALTH_SERVER="$health_server"
  go vet -tags prober_testpanic ./...
  # TestExecInNamespacesOf: CLONE_PARENT under qemu-user, as above; it runs natively.
  echo "not under qemu: TestExecInNamespacesOf ($REASON_CLONE_PARENT), TestNetnsProbesReachTheNamespace ($REASON_NETNS)"
  go test -exec "$qemu" -tags prober_testpanic -count=1 -v -skip '^(TestExecInNamespacesOf|TestNetnsProbesReachTheNamespace)$' ./... >../../target/arm64-go-test.log 2>&1 ||
    { cat ../../target/arm64-go-test.log; exit 1; }
  tail -n 3 ../../target/arm64-go-test.log
  go test -exec "$qemu" -tags debug,prober_testpanic -count=1 -skip '^(TestExecInNamespacesOf|TestNetnsProbesReachTheNamespace)$' ./...
)
go_passed=$(grep -c '^--- PASS' target/arm64-go-test.log || true)

echo
echo "arm64: under qemu-aarch64: $rust_passed Rust tests, $c_passed C tests, $go_passed Go tests passed;"
echo "arm64: not run there: ${#SKIP[@]} Rust tests (listed above), the C sanitizer and valgrind"
echo "arm64: passes and go test -race (natively only, see the top of ci/arm64.sh)"
