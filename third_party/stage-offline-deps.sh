#!/usr/bin/env bash
# Stages the Debian packages nbody-fair builds against into a folder, for GPU nodes that have no
# package registry (see README, "Running on an offline GPU node").
#
#   On a connected Debian 12 machine:  third_party/stage-offline-deps.sh [PREFIX]
#   Copy PREFIX to the node, then:     cmake -B build -DCMAKE_PREFIX_PATH=PREFIX/usr ...
#                                      export LD_LIBRARY_PATH=PREFIX/usr/lib/x86_64-linux-gnu
#
# STAGE_ARCH=arm64 stages the packages of an aarch64 node (Grace Hopper, an Arm node beside
# GPUs) from an x86-64 machine: the library folder is then usr/lib/aarch64-linux-gnu. The staging
# machine needs arm64 in its package lists (dpkg --add-architecture arm64 && apt-get update).
#
# The packages are only unpacked (dpkg -x), never installed, so nothing outside PREFIX changes.
# Default PREFIX: third_party/prefix (git ignores it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=$(realpath -m "${1:-$here/prefix}")
debs="$here/debs"

# The -dev packages and the runtime libraries they link to (the node's glibc and libstdc++ are
# newer than Debian 12's, so these run there unchanged). libhwloc15 is what oneTBB's binding
# library needs; googletest carries the gmock/gtest sources that libgtest-dev's CMake files name.
# libjs-chart.js: the Chart.js that report.html inlines (NBODY_FAIR_CHARTJS points the tool at it).
# libvalijson-dev: valijson's headers and CMake package, which check every results.json read
# against docs/results.schema.json.
# HDF5 (snapshots; optional): libhdf5-dev's headers and the C library libhdf5-103-1 with libsz2 and
# libaec0, its compression libraries. Not staged: hdf5-helpers (h5cc, whose paths are hard-wired to
# /usr), and libhdf5's libcurl4 and libssl3, which every node with a TLS stack has (staging them
# would put Debian's copies in front of the node's for nbody-fair).
packages=(
  libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15
  libxsimd-dev xtl-dev
  libfmt-dev libfmt9
  libbenchmark-dev libbenchmark1debian
  libgtest-dev googletest
  nlohmann-json3-dev
  libvalijson-dev
  libcli11-dev
  libjs-chart.js
  libhdf5-dev libhdf5-103-1 libsz2 libaec0
)

command -v apt-get >/dev/null || { echo "stage-offline-deps: apt-get not found (run this on a Debian or Ubuntu machine with a package registry)" >&2; exit 1; }
arch=${STAGE_ARCH:-$(dpkg --print-architecture)}
case $arch in
  amd64) multiarch=x86_64-linux-gnu ;;
  arm64) multiarch=aarch64-linux-gnu ;;
  *) echo "stage-offline-deps: STAGE_ARCH=$arch: amd64 or arm64" >&2; exit 2 ;;
esac
# Architecture-independent packages (headers, Chart.js) have no :arch of their own. The record is
# read whole first: grep -q stopping at the match would end apt-cache with SIGPIPE, which pipefail
# takes for "not found", and the package would be asked for as :arm64, which does not exist.
wanted=()
for p in "${packages[@]}"; do
  record=$(apt-cache show --no-all-versions "$p" 2>/dev/null || true)
  if grep -q '^Architecture: all' <<<"$record"; then
    wanted+=("$p")
  else
    wanted+=("$p:$arch")
  fi
done
debs="$debs/$arch"
mkdir -p "$debs" "$prefix"
(cd "$debs" && apt-get download "${wanted[@]}")
for deb in "$debs"/*.deb; do
  dpkg -x "$deb" "$prefix"
done
# Unneeded for building or running; keeps the folder small enough to carry.
rm -rf "$prefix/usr/share/doc" "$prefix/usr/share/man" "$prefix/usr/src/googletest/googletest/docs" \
  "$prefix/usr/src/googletest/googlemock/docs"
# HDF5: the C library only (no static, C++, Fortran or high-level libraries), moved from the folder
# that LD_LIBRARY_PATH names into hdf5/serial beside its libhdf5.so link. GPU nodes often have their
# own libhdf5-dev (Ubuntu 24.04: 1.10.10, the same soname): CMake then builds against the node's
# (see CMakeLists.txt), and a staged libhdf5_serial.so.103 on LD_LIBRARY_PATH would be loaded in
# its place, and HDF5 aborts when its headers and library differ. Where the node has none, CMake
# takes the staged one and nbody-fair finds it through the RUNPATH that CMake gives it.
lib="$prefix/usr/lib/$multiarch"
rm -f "$lib"/libhdf5_serial*.a "$lib"/libhdf5_serial*.so "$lib"/hdf5/serial/*.a \
  "$lib"/hdf5/serial/libhdf5_*.so "$lib"/hdf5/serial/libhdf5hl_fortran.so \
  "$prefix"/usr/include/hdf5/serial/*.mod
mv "$lib"/libhdf5_serial.so.103* "$lib/hdf5/serial/"
ln -sfn libhdf5_serial.so.103 "$lib/hdf5/serial/libhdf5.so"
echo "staged ${#packages[@]} packages into $prefix ($(du -sh "$prefix" | cut -f1))"
echo "configure with: cmake -B build -DCMAKE_PREFIX_PATH=$prefix/usr"
echo "run with:       export LD_LIBRARY_PATH=$prefix/usr/lib/$multiarch"
echo "charts:         export NBODY_FAIR_CHARTJS=$prefix/usr/share/javascript/chart.js/chart.min.js"
