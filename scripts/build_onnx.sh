#!/usr/bin/env bash
# Builds ONNX's C++ library (static, with Debian's protobuf, no Python) from its source release
# on PyPI, once, into $MGS_DEPS/onnx-VERSION (default ~/.cache/mgs-deps), and prints the CMake
# package directory to configure mgs with (ONNX_DIR). Progress goes to stderr.
# Debian's libonnx 1.12 reads opsets up to 17 and IR version 8; PyTorch 2.x exports opset 20
# (IR 9-10). If the release cannot be downloaded, this says so and prints Debian's package
# directory instead: mgs then builds, and reads models up to opset 17.
#   scripts/build_onnx.sh
set -euo pipefail

version=1.19.1
sha256=737524d6eb3907d3499ea459c6f01c5a96278bb3a0f2ff8ae04786fb5d7f1ed5
url=https://files.pythonhosted.org/packages/27/2f/c619eb65769357e9b6de9212c9a821ab39cd484448e5d6b3fb5fb0a64c6d/onnx-$version.tar.gz
debian_dir=/usr/lib/x86_64-linux-gnu/cmake/ONNX

deps=${MGS_DEPS:-$HOME/.cache/mgs-deps}
prefix=$deps/onnx-$version
if [ -f "$prefix/.complete" ]; then
  echo "$prefix/lib/cmake/ONNX"
  exit 0
fi

mkdir -p "$deps"
tarball=$deps/onnx-$version.tar.gz
if ! echo "$sha256  $tarball" | sha256sum --check --status 2>/dev/null; then
  echo "build_onnx: downloading ONNX $version's source release from PyPI" >&2
  if ! curl -fsSL --retry 2 --connect-timeout 20 -o "$tarball.part" "$url" ||
     ! echo "$sha256  $tarball.part" | sha256sum --check --status; then
    rm -f "$tarball.part"
    echo "build_onnx: WARNING: could not download $url (or its SHA-256 differs);" \
         "building with Debian's ONNX 1.12, which reads models up to opset 17 only" >&2
    echo "$debian_dir"
    exit 0
  fi
  mv "$tarball.part" "$tarball"
fi

work=$(mktemp -d "$deps/onnx-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "build_onnx: building ONNX $version into $prefix (a few minutes; once per machine)" >&2
tar -xzf "$tarball" -C "$work"
src=$work/onnx-$version
cmake -G Ninja -S "$src" -B "$work/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DONNX_BUILD_PYTHON=OFF -DONNX_BUILD_TESTS=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_ML=1 -DONNX_NAMESPACE=onnx \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
ninja -C "$work/build" -j"${MGS_JOBS:-2}" install >"$work/build.log" 2>&1 ||
  { tail -n 50 "$work/build.log" >&2; exit 1; }
# ONNX's node tests of this release (models and reference outputs), for test/onnx_node.
mkdir -p "$prefix/share/onnx"
cp -r "$src/onnx/backend/test/data/node" "$prefix/share/onnx/node"
touch "$prefix/.complete"
echo "build_onnx: ONNX $version installed in $prefix" >&2
echo "$prefix/lib/cmake/ONNX"
