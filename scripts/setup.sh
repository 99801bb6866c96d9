# Sourced by scripts/quickstart and scripts/test: installs what is missing (Debian 12), then
# configures and builds normlab in Release, warnings as errors, into $BUILD_DIR (default: build/).
set -euo pipefail

NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$NORMLAB_ROOT/build}"
JOBS="${JOBS:-2}"

# Debian packages the build, the tests and the quickstart need.
NORMLAB_PACKAGES=(cmake ninja-build g++ pkg-config libopenblas-openmp-dev libfmt-dev libgtest-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev gnuplot-nox fortunes python3 python3-venv python3-dev
  libopenmpi-dev openmpi-bin libdnnl-dev ocl-icd-opencl-dev ccache libsentencepiece-dev
  libsword-dev sword-text-sparv sword-text-web sword-text-kjv libutf8proc-dev libboost-math-dev)

install_missing() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "normlab: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build_normlab() {
  install_missing "${NORMLAB_PACKAGES[@]}"
  # ccache: a second build of the same sources on this machine (a clean clone elsewhere, CI after
  # the README's check) compiles only what changed. Paths under the checkout are hashed relative to
  # it, so two clones share the cache.
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$NORMLAB_ROOT"
  fi
  cmake -S "$NORMLAB_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNORMLAB_WERROR=ON "${launcher[@]}" "$@" >/dev/null
  # BUILD_TARGETS: what to build (scripts/quickstart: only the CLI it runs); empty: everything.
  local targets=()
  [ -n "${BUILD_TARGETS:-}" ] && targets=(--target $BUILD_TARGETS)
  cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
}
