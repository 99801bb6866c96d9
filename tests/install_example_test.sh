#!/usr/bin/env bash
# Installs the built normlab into a fresh prefix, builds examples/ against it as an outside project
# would (find_package(normlab)), and runs the examples.
#   install_example_test.sh BUILD_DIR SOURCE_DIR WORK_DIR CXX_COMPILER [CXX_COMPILER_LAUNCHER]
set -euo pipefail
build=$1 source=$2 work=$3 cxx=$4 launcher=${5:-}
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null

# The installed package must not point back into the source or build tree.
if grep -rlF -e "$source" -e "$build" "$work/prefix/lib/cmake"; then
  echo "FAIL: the installed CMake files above name the source or build directory"; exit 1
fi
test -f "$work/prefix/include/normlab/core/tensor.h" || { echo "FAIL: no include/normlab/core/tensor.h"; exit 1; }

cmake -S "$source/examples" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} >/dev/null
cmake --build "$work/build"
"$work/build/seed_norms"
"$work/build/core_only"
