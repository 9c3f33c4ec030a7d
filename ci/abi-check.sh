#!/usr/bin/env bash
# The C ABI of libprober.so.1 only grows. Compares the library built from the tree, and the public
# header, with the baseline committed under abi/, using libabigail (abidw, abidiff):
#   abi/libprober.so.1.abi      abidw of libprober.so (dev profile: full DWARF), handles opaque
#   abi/libprober.so.1.symbols  its exported symbols, sorted
#   abi/prober.h                include/prober.h as it was when the baseline was taken
#   abi/prober.h.abi            abidw of a probe unit naming every declaration of abi/prober.h
#   abi/suppressions.ini        what abidiff ignores: the internals of the opaque handles
# and runs abi/old-client/old_client.c, compiled against abi/prober.h, on the new library.
# Additions (functions, enum values, types) pass and are listed; anything else fails with
# abidiff's report: removed or changed functions, changed types, sizes, offsets, enum values.
#
#   ci/abi-check.sh              the check (ci/test.sh runs it)
#   ci/abi-check.sh --refresh    rewrite the baseline on purpose, in the commit that bumps
#                                PROBER_VERSION_MINOR; it refuses to record anything but additions
#                                unless PROBER_ABI_VERSION changed too (a new SONAME) or
#                                --accept-change follows (a reviewed field taken from `reserved`)
#   ci/abi-check.sh --self-test  breaks copies of the baseline header (a removed function, a
#                                changed parameter type, a field inserted in the middle of or
#                                appended to prober_event, a renumbered enum value) and asserts the
#                                header comparison fails on each and passes on additions; and that
#                                a missing or truncated baseline fails with the refresh command
#   PROBER_ABI_TARGET=aarch64-unknown-linux-gnu ci/abi-check.sh
#                                the check for linux/arm64 (ci/arm64.sh): the library and the header
#                                probe cross-built, compared with the (x86-64) baseline ignoring the
#                                architecture, the old client run under qemu-aarch64. Both targets are
#                                LP64: every size, offset and enum value must be the same.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
mode=${1:-check}
accept_change=
case "$mode ${2:-}" in
  "check " | "--refresh " | "--self-test ") ;;
  "--refresh --accept-change") accept_change=1 ;;
  *) echo "usage: ci/abi-check.sh [--refresh [--accept-change] | --self-test]" >&2; exit 64 ;;
esac
refresh_cmd="bash ci/abi-check.sh --refresh"

# The native check, or the cross one for PROBER_ABI_TARGET (the baseline is taken natively only).
abi_cc=cc; abi_nm=nm; abi_readelf=readelf; run=(); cargo_target=(); libdir=target/debug; arch_opt=()
case "${PROBER_ABI_TARGET:-}" in
  "") ;;
  aarch64-unknown-linux-gnu)
    [ "$mode" = check ] || { echo "abi-check: $mode is for the native build only" >&2; exit 64; }
    need_cargo
    need_aarch64_cross
    abi_cc=aarch64-linux-gnu-gcc; abi_nm=aarch64-linux-gnu-nm; abi_readelf=aarch64-linux-gnu-readelf
    run=(qemu-aarch64 -L "$AARCH64_SYSROOT")
    cargo_target=(--target "$PROBER_ABI_TARGET"); libdir=target/$PROBER_ABI_TARGET/debug
    arch_opt=(--no-architecture)
    ;;
  *) echo "abi-check: PROBER_ABI_TARGET=$PROBER_ABI_TARGET is not supported" >&2; exit 64 ;;
esac

need abidw abigail-tools
need abidiff abigail-tools
need cc gcc
need nm binutils
need readelf binutils
need perl perl-base

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# abidw with no paths, locations or sequence numbers in its output: the baseline is the same on
# every machine and in every checkout, and a refresh shows only what changed.
abidw_q() { abidw --no-show-locs --no-corpus-path --no-comp-dir-path --type-id-style hash "$@"; }

# The header probe: a C unit that names every function (as a pointer variable of its type), enum,
# struct and opaque handle of a prober.h, compiled with the debug info of unused types kept, so
# that abidw describes the header as a C compiler sees it. This is what catches a renumbered
# enum value: the library's exports take and return plain uint32_t for most enums.
header_abi() { # HEADER_DIR OUT.abi
  local dir=$1 out=$2 unit
  unit=$(mktemp -d "$work/probe.XXXXXX")
  "$abi_cc" -E -P -std=c11 -x c "$dir/prober.h" | perl -e '
    local $/; my $h = <STDIN>; my (%fn, %en, %st, %op);
    $en{$1} = 1 while $h =~ /\benum\s+(prober_\w+)\s*(?::[^{]*)?\{/g;
    $st{$1} = 1 while $h =~ /\}\s*(prober_\w+)\s*;/g;
    $op{$1} = 1 while $h =~ /\btypedef\s+struct\s+(prober_\w+)\s+\1\s*;/g;
    for my $d (split /;/, $h) { $fn{$1} = 1 if $d =~ /\b(prober_\w+)\s*\([^(){}]*\)\s*$/s }
    die "no declarations found\n" unless %fn && %en && %st;
    print "#include \"prober.h\"\n";
    print "__typeof__(&$_) prober_abi_fn_$_;\n" for sort keys %fn;
    print "enum $_ prober_abi_enum_$_;\n" for sort keys %en;
    print "$_ prober_abi_struct_$_;\n" for sort keys %st;
    print "$_ *prober_abi_opaque_$_;\n" for sort keys %op;' >"$unit/probe.c"
  "$abi_cc" -std=c11 -Wall -Werror -g -fno-eliminate-unused-debug-types -fPIC -shared -I"$dir" \
     -o "$unit/probe.so" "$unit/probe.c"
  abidw_q "$unit/probe.so" >"$out"
}

# Compares two ABI descriptions. Additions pass (listed); any other change fails with the report.
# abidiff's exit status is a bit field (1 error, 2 usage, 4 change, 8 incompatible change); it
# reports added functions and variables as a change (4), and enumerators added at no cost to the
# type's size as harmless (filtered, not a change). So: without the added symbols, nothing may
# be left at all; then the additions are shown.
compare() { # WHAT BASELINE.abi CURRENT.abi [abidiff options...]
  local what=$1 old=$2 new=$3 rc=0
  shift 3
  abidiff --no-added-syms "$@" "$old" "$new" >"$work/report" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    cat "$work/report"
    if [ $((rc & 3)) != 0 ]; then
      echo "abi-check: abidiff could not compare $what (exit status $rc)" >&2
    else
      echo "abi-check: $what: the ABI changed in a way that is not an addition (abidiff exit status $rc)." >&2
      echo "  libprober.so.1 only grows: restore what was removed or changed, or add a new" >&2
      echo "  function or enum value instead. See docs/c-api.md, \"ABI stability\"." >&2
    fi
    return 1
  fi
  rc=0
  abidiff --harmless --leaf-changes-only "$@" "$old" "$new" >"$work/report" 2>&1 || rc=$?
  [ $((rc & ~4)) = 0 ] || { cat "$work/report"; echo "abi-check: abidiff failed on $what (exit status $rc)" >&2; return 1; }
  if [ "$rc" = 4 ] || grep -q 'enumerator insertion' "$work/report"; then
    echo "$what: no breaking change; abidiff lists these additions and harmless changes (they pass;"
    echo "  refresh the baseline with the next minor version):"
    sed 's/^/  /' "$work/report"
  else
    echo "$what: identical to the baseline"
  fi
}

# Fails, naming the refresh command, when a baseline file in DIR (abi/) is missing, empty,
# unreadable or not an ABI description abidiff can read: that must never pass as "no change".
baseline_ok() { # [DIR]
  local dir=${1:-abi} f bad=
  for f in libprober.so.1.abi libprober.so.1.symbols prober.h prober.h.abi suppressions.ini; do
    if [ ! -s "$dir/$f" ] || [ ! -r "$dir/$f" ]; then bad="$dir/$f is missing, empty or unreadable"; break; fi
  done
  if [ -z "$bad" ]; then
    for f in libprober.so.1.abi prober.h.abi; do
      if ! grep -q '</abi-corpus>' "$dir/$f" || ! abidiff "$dir/$f" "$dir/$f" >/dev/null 2>&1; then
        bad="$dir/$f cannot be read by abidiff"; break
      fi
    done
  fi
  [ -n "$bad" ] || return 0
  echo "abi-check: the ABI baseline $bad." >&2
  echo "  Restore it from git (git checkout -- abi/), or take a new baseline on purpose with:" >&2
  echo "    $refresh_cmd" >&2
  return 1
}

header_version() { # HEADER -> "MAJOR MINOR PATCH ABI"
  local k v
  for k in VERSION_MAJOR VERSION_MINOR VERSION_PATCH ABI_VERSION; do
    v=$(sed -n "s/^#define PROBER_$k \\([0-9][0-9]*\\)$/\\1/p" "$1")
    [ -n "$v" ] || { echo "abi-check: no PROBER_$k in $1" >&2; exit 1; }
    printf '%s ' "$v"
  done
}

if [ "$mode" = --self-test ]; then
  step "ABI check self-test: each breakage of a copy of abi/prober.h must fail, additions pass"
  [ -s abi/prober.h ] || { echo "abi-check: abi/prober.h is missing; run $refresh_cmd" >&2; exit 1; }
  mkdir -p "$work/base"
  cp abi/prober.h "$work/base/prober.h"
  header_abi "$work/base" "$work/base.abi"
  failures=0
  variant() { # EXPECT(pass|fail) NAME PERL-SUBSTITUTION
    local expect=$1 name=$2 dir=$work/$2 got=pass
    mkdir -p "$dir"
    perl -0pe "$3" abi/prober.h >"$dir/prober.h"
    if cmp -s abi/prober.h "$dir/prober.h"; then
      echo "self-test: $name: the edit did not apply to abi/prober.h" >&2; failures=$((failures + 1)); return
    fi
    header_abi "$dir" "$dir/h.abi"
    compare "header ($name)" "$work/base.abi" "$dir/h.abi" >"$dir/out" 2>&1 || got=fail
    if [ "$got" = "$expect" ]; then
      echo "self-test: $name: ${got}ed, as it must"; grep -E "^\s*\[[DCA]\]|enumerator|insertion|changed from" "$dir/out" | head -4 | sed 's/^ */    /'
    else
      echo "self-test: $name: ${got}ed, but it must $expect:" >&2; cat "$dir/out" >&2; failures=$((failures + 1))
    fi
  }
  variant fail removed-function 's/^size_t prober_engine_pending\(const prober_engine \*e\);\n//m'
  variant fail changed-parameter 's/(prober_spec_set_timeout_ms\(prober_spec \*spec, )uint32_t ms\)/${1}uint64_t ms)/'
  variant fail field-in-the-middle 's/(  uint32_t kind;\n)/$1  uint32_t flags;\n/'
  variant fail renumbered-enum 's/PROBER_RESULT_FAILURE = 2,/PROBER_RESULT_FAILURE = 4,/'
  variant fail field-appended 's/(  uint64_t reserved\[[0-9]+\];\n)(\} prober_event;)/$1  uint64_t extra;\n$2/'
  variant pass additions 's/(  PROBER_E_INVALID_TLS = 115,\n)/$1  PROBER_E_SELF_TEST = 116,\n/; s/(  PROBER_REASON_RESOURCE = 19,\n)/$1  PROBER_REASON_SELF_TEST = 20,\n/; s/^(size_t prober_engine_pending\(const prober_engine \*e\);\n)/$1size_t prober_engine_self_test(const prober_engine *e, prober_timings *t);\n/m'
  # A baseline that is missing or unreadable fails, with the refresh command in the message.
  for broken in missing truncated; do
    cp -r abi "$work/abi-$broken"
    case $broken in
      missing) rm "$work/abi-$broken/prober.h.abi" ;;
      truncated) head -c 4096 abi/libprober.so.1.abi >"$work/abi-$broken/libprober.so.1.abi" ;;
    esac
    if baseline_ok "$work/abi-$broken" 2>"$work/msg"; then
      echo "self-test: $broken baseline: passed, but it must fail" >&2; failures=$((failures + 1))
    elif ! grep -qF "$refresh_cmd" "$work/msg"; then
      echo "self-test: $broken baseline: failed without the refresh command:" >&2; cat "$work/msg" >&2
      failures=$((failures + 1))
    else
      echo "self-test: $broken baseline: failed, as it must"; sed 's/^/    /' "$work/msg"
    fi
  done
  [ "$failures" = 0 ] || { echo "abi-check self-test: $failures case(s) wrong" >&2; exit 1; }
  echo "abi-check self-test: all cases as expected"
  exit 0
fi

step "build libprober.so (dev profile: full debug info) and prober-target"
need_cargo
cargo build --quiet -p prober-ffi "${cargo_target[@]}"
# Native: a server on loopback, whatever the architecture of the client that probes it.
cargo build --quiet -p prober-testkit --bin prober-target
mkdir -p "$work/lib"
cp "$libdir/libprober.so" "$work/lib/libprober.so.1"
ln -s libprober.so.1 "$work/lib/libprober.so"
so=$work/lib/libprober.so.1
"$abi_nm" -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | LC_ALL=C sort >"$work/symbols"
abidw_q "$so" >"$work/libprober.so.1.abi"
# The dev profile keeps full DWARF (cargo's default, debug = 2) and is the build the test suites
# share; the release profile may be stripped. Without DWARF abidw sees symbols only, and a changed
# parameter or struct would pass unseen: fail instead.
described=$(grep -c "<function-decl .*elf-symbol-id=" "$work/libprober.so.1.abi" || true)
exported=$("$abi_nm" -D --defined-only "$so" | awk '$2 == "T"' | wc -l)
if [ "$described" -lt "$exported" ]; then
  echo "abi-check: the DWARF of target/debug/libprober.so describes $described of its $exported exported" >&2
  echo "  functions; the check needs full debug info ([profile.dev] debug = 2, cargo's default)." >&2
  exit 1
fi
mkdir -p "$work/header"
cp include/prober.h "$work/header/prober.h"
header_abi "$work/header" "$work/prober.h.abi"

if [ "$mode" = --refresh ]; then
  step "refresh the ABI baseline"
  read -r now_major now_minor now_patch now_abi <<<"$(header_version include/prober.h)"
  [ -n "$now_abi" ] || exit 1
  if [ -s abi/prober.h ]; then
    read -r was_major was_minor _ was_abi <<<"$(header_version abi/prober.h)"
    [ -n "$was_abi" ] || exit 1
    if [ "$now_abi" = "$was_abi" ]; then
      # The same ABI: only additions may be recorded, and only with a new minor (or major) version.
      if [ -z "$accept_change" ] && baseline_ok 2>/dev/null &&
         ! { compare "header" abi/prober.h.abi "$work/prober.h.abi" &&
             compare "library" abi/libprober.so.1.abi "$work/libprober.so.1.abi" --suppressions abi/suppressions.ini &&
             [ -z "$(LC_ALL=C comm -23 abi/libprober.so.1.symbols "$work/symbols")" ]; } >/dev/null 2>&1; then
        echo "abi-check: refusing to record a breaking change under PROBER_ABI_VERSION $now_abi;" >&2
        echo "  run ci/abi-check.sh to see it. A break needs a new ABI version and SONAME; a field" >&2
        echo "  taken from a reserved slot (same size, same offsets) is recorded with --accept-change." >&2
        exit 1
      fi
      if [ "$now_major.$now_minor" = "$was_major.$was_minor" ]; then
        echo "abi-check: the baseline is for $was_major.$was_minor and the header is $now_major.$now_minor:" >&2
        echo "  bump the minor version first: PROBER_VERSION_MINOR in crates/prober-ffi/cbindgen.toml" >&2
        echo "  and the workspace version in Cargo.toml, then bash ci/header.sh." >&2
        exit 1
      fi
    fi
  fi
  mkdir -p abi
  cp "$work/libprober.so.1.abi" abi/libprober.so.1.abi
  cp "$work/symbols" abi/libprober.so.1.symbols
  cp include/prober.h abi/prober.h
  cp "$work/prober.h.abi" abi/prober.h.abi
  echo "wrote the ABI baseline for libprober $now_major.$now_minor.$now_patch (ABI $now_abi) under abi/:"
  echo "  commit it together with the version bump"
  exit 0
fi

step "ABI of libprober.so.1 against the baseline in abi/"
baseline_ok
failed=0
removed=$(LC_ALL=C comm -23 abi/libprober.so.1.symbols "$work/symbols")
added=$(LC_ALL=C comm -13 abi/libprober.so.1.symbols "$work/symbols")
if [ -n "$removed" ]; then
  echo "abi-check: exported symbols removed from libprober.so.1:" >&2; echo "$removed" | sed 's/^/  /' >&2
  failed=1
fi
[ -z "$added" ] || { echo "exported symbols added:"; echo "$added" | sed 's/^/  /'; }
echo "$(wc -l <"$work/symbols") exported symbols, $(wc -l <abi/libprober.so.1.symbols) in the baseline"
lib_baseline=abi/libprober.so.1.abi
if [ -n "${PROBER_ABI_TARGET:-}" ]; then
  # c_char is i8 on x86-64 and u8 on arm64 (char is unsigned there), and rustc's DWARF names the
  # Rust type: every `const char *` of the API would show as i8* -> u8*. C sees `char` on both
  # (the header comparison below holds it to that). The x86-64 baseline's i8 is c_char only as
  # long as the header has no int8_t, which is checked; then it is read as u8, and any other
  # change still fails.
  if grep -qw 'int8_t' include/prober.h; then
    echo "abi-check: include/prober.h has an int8_t: i8 in the baseline is no longer only c_char;" >&2
    echo "  compare the arm64 build another way" >&2
    exit 1
  fi
  sed "s/<type-decl name='i8' /<type-decl name='u8' /" abi/libprober.so.1.abi >"$work/baseline-unsigned-char.abi"
  lib_baseline=$work/baseline-unsigned-char.abi
  echo "c_char: i8 in the x86-64 baseline, u8 here (char is unsigned on $PROBER_ABI_TARGET)"
fi
compare "libprober.so.1 (DWARF)" "$lib_baseline" "$work/libprober.so.1.abi" \
        --suppressions abi/suppressions.ini "${arch_opt[@]}" || failed=1
compare "include/prober.h (as C sees it)" abi/prober.h.abi "$work/prober.h.abi" "${arch_opt[@]}" || failed=1
[ "$failed" = 0 ] || exit 1

step "old client: compiled against abi/prober.h, run against the new libprober.so.1"
"$abi_cc" -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I abi abi/old-client/old_client.c \
   -o "$work/old_client" -L"$work/lib" -lprober -Wl,-rpath,"$work/lib"
needed=$("$abi_readelf" -d "$work/old_client" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(libprober[^]]*\)\].*/\1/p' || true)
[ "$needed" = libprober.so.1 ] || { echo "abi-check: the old client needs '$needed', expected libprober.so.1" >&2; exit 1; }
"${run[@]}" "$work/old_client" "$PWD/target/debug/prober-target"
# abidiff lets a renamed field or enum value pass (the binary layout is the same), but old source
# must still compile against the new header.
"$abi_cc" -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I include -fsyntax-only abi/old-client/old_client.c
echo "old client: also compiles against the new include/prober.h"
