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

"$root/scripts/setup.sh" "$build"
echo "test: building (ninja -j2)"
ninja -C "$build" -j2 all mgs-test-models
echo "test: running the tests"
/usr/lib/llvm-22/bin/lit -sv "$@" "$build/test" "$build/test/unit"
