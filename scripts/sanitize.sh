#!/usr/bin/env bash
# The sanitizer job (./test.sh --sanitize runs it; not part of the default
# ./test.sh, it takes long): builds build-asan with -DMGS_SANITIZE=ON
# (AddressSanitizer and UBSan on the runtime, its tests, the tools' mains and
# the training executables mgsc links; MLIR/LLVM, ONNX, MPI, oneDNN and the
# compiler's libraries stay uninstrumented) and runs under it the unit tests
# (the runtime's kernel, driver and comm gtests among them), test/runtime (the
# readers' fuzz replay included), the e2e lit tests, and the importer's and
# the profile reader's fuzz replays (their targets are built with ASan and
# UBSan in every build). Ends with the wall time.
#   scripts/sanitize.sh [lit options, e.g. --filter gradients]
# Every sanitizer report goes to a file under build-asan/sanitizer-reports
# (so one in a test that expects a failure is not hidden by it); the job fails
# if any is there, and prints them. The suppressions of known false positives
# are scripts/sanitizers/*.supp, each with its reason.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MGS_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${MGS_JOBS:-2}

"$root/scripts/setup.sh" "${MGS_BUILD_DIR:-$root/build}" >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  echo "sanitize: configuring $build"
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake "${launcher[@]}" -G Ninja -S "$root" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DONNX_DIR:PATH="$("$root/scripts/build_onnx.sh")" \
    -DCMAKE_BUILD_TYPE=Release -DMGS_SANITIZE=ON -DMGSRT_ENABLE_CUDA=OFF \
    >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
# What the tests below run (not the benchmarks): the tools, then the tests' binaries.
# (MGS_SANITIZE_NO_BUILD=1: run the tests again without building.)
if [ -z "${MGS_SANITIZE_NO_BUILD:-}" ]; then
  echo "sanitize: building (ninja -j$jobs)"
  ninja -C "$build" -j"$jobs" mgsc mgs-opt mgs-import-onnx mgs-plan
  ninja -C "$build" -j"$jobs" MGSRuntimeCommTests MGSRuntimeDriverTests MGSRuntimeKernelTests \
    mgsrt_mpi_check mgsrt_fuzz_replay mgs_import_fuzz_replay mgs_profile_fuzz_replay MGSUnitTests
fi
# The test models are torch exports, the same in both builds: taken from the
# default build when it has them.
if [ ! -d "$build/test/models" ] && [ -d "${MGS_BUILD_DIR:-$root/build}/test/models" ]; then
  cp -r "${MGS_BUILD_DIR:-$root/build}/test/models" "$build/test/models"
fi
[ -n "${MGS_SANITIZE_NO_BUILD:-}" ] || ninja -C "$build" -j"$jobs" mgs-test-models

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
supp=$root/scripts/sanitizers
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=0:$(
  grep -v -e '^#' -e '^$' "$supp/asan.options" | tr '\n' ':')"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:suppressions=$supp/ubsan.supp:print_stacktrace=1"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:halt_on_error=1"
# OpenMPI keeps its components loaded, so its leaks are named by module (lsan.supp).
export OMPI_MCA_mca_base_component_disable_dlclose=1
echo "sanitize: running the tests (reports go to $reports)"
status=0
# (lit finds a test by its source; the folders are made for the paths below.)
mkdir -p "$build/test/onnx_import" "$build/test/mgs-plan"
/usr/lib/llvm-22/bin/lit -sv "$@" "$build/test/unit" "$build/test/runtime" "$build/test/e2e" \
  "$build/test/onnx_import/fuzz-replay.test" "$build/test/mgs-plan/fuzz-replay.test" \
  || status=$?
if [ -n "$(ls -A "$reports")" ]; then
  echo "sanitize: the sanitizers reported (one file a report; wall ${SECONDS} s):"
  for f in "$reports"/*; do
    echo "=== $f"
    cat "$f"
  done
  exit 1
fi
if ((status)); then
  echo "sanitize: tests failed (no sanitizer report; wall ${SECONDS} s)"
  exit "$status"
fi
echo "sanitize: clean (no sanitizer report, every test passed; wall ${SECONDS} s)"
