#!/usr/bin/env bash
# The house rules, checked: no Rust source file over 800 lines of code besides its tests, no module
# import circle inside a crate, the command (prober-cli) under 3,000 lines of code; today's
# exceptions are a ratchet in ci/house-exceptions.txt. How lines are counted and what makes an
# import edge: the header of ci/house.py. Why: docs/architecture.md.
# Usage: bash ci/house.sh            check, after the check's own self-test against small trees
#                                    made for each rule (CI runs this in its lints step; a second)
#        bash ci/house.sh --show     every violation, listed or not, each circle with its references
#        bash ci/house.sh --update   rewrite ci/house-exceptions.txt from the tree as it is, for
#                                    whoever merges a change that moved the counts (not for CI)
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
need python3
if [ $# -eq 0 ]; then
  python3 ci/house_test.py >/dev/null || python3 ci/house_test.py
fi
exec python3 ci/house.py "$@"
