#!/usr/bin/env bash
# Every test of mgs, set-up included: installs what is missing, builds with
# -j2, exports the test models and runs the lit suite and the unit tests.
# Ends with lit's own pass/fail counts. Extra arguments go to lit (e.g. -v).
#   ./test.sh --sanitize [lit options]: the sanitizer job instead
#   (scripts/sanitize.sh: ASan and UBSan in a second build, build-asan).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  exec "$root/scripts/sanitize.sh" "$@"
fi
build=${MGS_BUILD_DIR:-$root/build}

# A fresh build tree with its exported test models and the tests' outputs
# takes about 5 GB: say so up front rather than with a write error later.
mkdir -p "$build"
free_kb=$(df -Pk "$build" | awk 'NR == 2 { print $4 }')
echo "test: $((free_kb / 1048576)) GB free under $build"
if [ "$free_kb" -lt $((5 * 1048576)) ]; then
  echo "test: warning: under 5 GB free; a fresh build and its test models need about 5 GB" >&2
fi

"$root/scripts/setup.sh" "$build"
echo "test: building (ninja -j2)"
ninja -C "$build" -j2 all mgs-test-models
echo "test: running the tests"
/usr/lib/llvm-22/bin/lit -sv "$@" "$build/test" "$build/test/unit"
