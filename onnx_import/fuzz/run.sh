#!/bin/bash
# Fuzzes the ONNX importer (binary models and ONNX's text syntax) with
# libFuzzer, ASan and UBSan (clang++-14 from Debian's clang-14). The importer's
# own sources are compiled here with coverage; MLIR, ONNX and the dialects come
# from the build tree (ninja -C BUILD mgs-import-onnx first). Not part of
# ./test.sh, which replays the committed corpus (test/onnx_import/fuzz-replay.test).
#
#   onnx_import/fuzz/run.sh [SECONDS=300] [WORKDIR=/tmp/mgs-import-fuzz] [BUILD=build] \
#                           [LIBFUZZER_ARGS...]
#
# SECONDS=0 only builds (WORKDIR/import-fuzzer). The inputs are written to
# $TMPDIR (a tmpfs such as /dev/shm makes that cheap).
# onnx.dict holds ONNX op, attribute and syntax words for the mutator.
# New inputs go to WORKDIR/corpus; a crash leaves WORKDIR/crash-* and exits
# non-zero. Copy a crasher, once fixed, into onnx_import/fuzz/corpus/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-300}
work=${2:-/tmp/mgs-import-fuzz}
build=$(cd "${3:-$root/build}" && pwd)
shift $(($# < 3 ? $# : 3))
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cxx" >/dev/null || { echo "run.sh: $cxx not found (apt-get install clang-14)"; exit 1; }
for lib in onnx_import/libMGSOnnxModelIO.a lib/Dialect/Train/IR/libMGSTrainIR.a \
           lib/Dialect/Comm/IR/libMGSCommIR.a; do
  [[ -f $build/$lib ]] || { echo "run.sh: $build/$lib missing (ninja -C $build mgs-import-onnx)"; exit 1; }
done
# The ONNX the build links (scripts/build_onnx.sh's, or Debian's).
onnx_dir=$(sed -n 's/^ONNX_DIR:PATH=//p' "$build/CMakeCache.txt")
onnx_prefix=$(cd "$onnx_dir/../../.." && pwd)
onnx_version=$(sed -n 's/^set(ONNX_VERSION "\(.*\)")$/\1/p' "$onnx_dir/ONNXConfig.cmake")
if [[ -f $onnx_prefix/lib/libonnx.a ]]; then
  onnx_libs=("$onnx_prefix/lib/libonnx.a" "$onnx_prefix/lib/libonnx_proto.a")
else
  onnx_libs=(/usr/lib/x86_64-linux-gnu/libonnx.so.1 /usr/lib/x86_64-linux-gnu/libonnx_proto.so.1)
fi
mkdir -p "$work/corpus" "$work/obj"
flags=(-std=gnu++17 -g -O1 -fexceptions -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -DONNX_ML=1 -DONNX_NAMESPACE=onnx "-DMGS_ONNX_VERSION=\"$onnx_version\""
       -I "$root/include" -I "$build/include" -I "$root/onnx_import" -I "$root/runtime/fuzz"
       -isystem "$onnx_prefix/include" -isystem /usr/lib/llvm-22/include)
# Whether OBJ is newer than SRC and every header it may include.
fresh() {
  [[ -f $2 && $2 -nt $1 ]] || return 1
  [[ -z $(find "$root/onnx_import" "$root/include" "$here" -name '*.h' -newer "$2" | head -1) ]]
}
echo "fuzz: compiling the importer with $cxx (coverage, ASan, UBSan)"
# The importer's sources, as onnx_import/CMakeLists.txt lists them
# (MGS_ONNX_IMPORT_SOURCES); an object newer than its source and the headers
# is kept from an earlier run.
sources=$(sed -n '/^set(MGS_ONNX_IMPORT_SOURCES/,/)/s/^ *\([A-Za-z/]*\)\.cpp$/\1/p' \
          "$root/onnx_import/CMakeLists.txt")
[[ -n $sources ]] || { echo "run.sh: no MGS_ONNX_IMPORT_SOURCES in onnx_import/CMakeLists.txt"; exit 1; }
for src in $sources; do
  obj=$work/obj/${src//\//-}.o
  fresh "$root/onnx_import/$src.cpp" "$obj" && continue
  "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$root/onnx_import/$src.cpp" -o "$obj"
done
fresh "$here/ImportFuzzer.cpp" "$work/obj/ImportFuzzer.o" ||
  "$cxx" "${flags[@]}" -fsanitize=fuzzer -c "$here/ImportFuzzer.cpp" -o "$work/obj/ImportFuzzer.o"
llvm=/usr/lib/llvm-22/lib
mlir_libs=()
for l in MLIRLLVMDialect MLIRFuncDialect MLIRArithDialect MLIRCastInterfaces MLIRDialect \
         MLIRInferIntRangeCommon MLIRShapedOpInterfaces MLIRUBDialect MLIRSideEffectInterfaces \
         MLIRControlFlowInterfaces MLIRDataLayoutInterfaces MLIRFunctionInterfaces MLIRCallInterfaces \
         MLIRInferIntRangeInterface MLIRInferTypeOpInterface MLIRMemorySlotInterfaces \
         MLIRPtrMemorySpaceInterfaces MLIRIR MLIRSupport; do
  mlir_libs+=("$llvm/lib$l.a")
done
[[ -x $work/import-fuzzer && -z $(find "$work/obj" -newer "$work/import-fuzzer") ]] ||
"$cxx" -fsanitize=fuzzer,address,undefined "$work"/obj/*.o \
  "$build/lib/Analysis/libMGSTrainAnalysis.a" "$build/lib/Support/libMGSSupport.a" \
  "$build/lib/Dialect/Comm/IR/libMGSCommIR.a" "$build/onnx_import/libMGSOnnxModelIO.a" \
  "$build/lib/Dialect/Train/IR/libMGSTrainIR.a" "${mlir_libs[@]}" \
  -Wl,--start-group "${mlir_libs[@]}" -Wl,--end-group \
  "${onnx_libs[@]}" \
  -lprotobuf "$llvm/libLLVM.so.1" -Wl,-rpath,"$llvm" -o "$work/import-fuzzer"
[[ $seconds == 0 ]] && exit 0
echo "fuzz: running for $seconds s (seeds: onnx_import/fuzz/corpus)"
cd "$work"
ASAN_OPTIONS=detect_leaks=0 ./import-fuzzer -max_total_time="$seconds" -rss_limit_mb=4096 \
  -timeout=20 -max_len=200000 -print_final_stats=1 -dict="$here/onnx.dict" "$@" corpus \
  "$here/corpus"
