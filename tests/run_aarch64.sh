#!/usr/bin/env bash
# The CPU-only suite for aarch64 (Grace, Graviton, Ampere), cross-built on this Debian x86-64
# machine and run under qemu-user: Debian's cross compiler and its arm64 packages through multiarch,
# the toolchain file cmake/aarch64-linux-gnu.cmake, and CMake's cross-compiling emulator
# (qemu-aarch64). The whole suite also starts nbody-fair from tests: that takes binfmt_misc
# registering qemu for arm64 programs (qemu-user-static or qemu-user-binfmt), which a container
# may not allow; the subset does without.
# No CUDA, MPI or HDF5 (Debian's arm64 HDF5 and Open MPI packages conflict with the x86-64 ones
# beside them); GPU and MPI tests skip with their reasons.
#   tests/run_aarch64.sh [--subset] [ctest arguments...]
# --subset: the tests CI runs (below; the emulator runs 20-40 times slower than the host, and the
# whole suite takes over an hour on two cores: docs/arm.md). Arguments after it go to each test.
# QEMU_CPU picks the emulated core (default max: NEON, SVE, SVE2 at 128 bits).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${NBODY_AARCH64_BUILD:-build/aarch64}
subset=0
if [ "${1:-}" = "--subset" ]; then
  subset=1
  shift
fi

packages=(g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user
          libtbb-dev:arm64 libxsimd-dev:arm64 libfmt-dev:arm64 libbenchmark-dev:arm64
          libgtest-dev:arm64 libgmock-dev:arm64 nlohmann-json3-dev libcli11-dev libvalijson-dev
          xtl-dev cmake ninja-build)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "run_aarch64: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
  $sudo apt-get update -q
  # --no-remove: an arm64 package that would replace an installed x86-64 one is refused, not taken.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends --no-remove \
    "${missing[@]}" || { echo "run_aarch64: could not install the cross toolchain" >&2; exit 1; }
fi

export QEMU_CPU=${QEMU_CPU:-max}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DNBODY_ENABLE_CUDA=OFF \
  -DNBODY_ENABLE_MPI=OFF -DNBODY_ENABLE_HDF5=OFF || exit 1
if ((subset)); then
  # The kernels of every ISA of the aarch64 list at awkward sizes against the float64 reference
  # (every SIMD formulation, float32 and float64), the tree and its term counts read from the A64
  # disassembly, the target ranges, and the loop census: what differs from x86-64.
  targets=(cpu_formulations_test tree_test tree_costs_test target_range_test counters_test)
  cmake --build "$build" --target "${targets[@]}" || exit 1
  status=0
  for t in "${targets[@]}"; do
    echo "run_aarch64: $t (QEMU_CPU=$QEMU_CPU)"
    (cd "$build/tests" && qemu-aarch64 "./$t" --gtest_brief=1 "$@") || status=1
  done
  exit $status
fi
cmake --build "$build" || exit 1
cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@"
