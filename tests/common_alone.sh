#!/usr/bin/env bash
# common/ is what every part shares and depends on nothing above it: no CUDA build switch, no
# include from cpu/, gpu/, reports/ or app/, and it configures, builds and links on its own.
#   tests/common_alone.sh SOURCE_DIR BINARY_DIR [CMAKE_PREFIX_PATH]
set -euo pipefail
source_dir=$1
binary_dir=$2
prefix=${3:-}
if grep -rnE 'NBODY_HAVE_CUDA|#include "nbody/(cpu|gpu|reports|app|peaks|profiler)/' \
  "$source_dir/common"; then
  echo "common_alone: common/ names a build switch or a header from above it (lines above)" >&2
  exit 1
fi
rm -rf "$binary_dir"
# No build type, so no optimizer: whether common/ builds alone does not depend on it (115 s
# optimized, 80 s without, in the sanitized suite on two cores).
cmake -S "$source_dir/common" -B "$binary_dir" -DCMAKE_BUILD_TYPE= \
  ${prefix:+-DCMAKE_PREFIX_PATH="$prefix"} >"$binary_dir.log" 2>&1 ||
  { cat "$binary_dir.log"; exit 1; }
cmake --build "$binary_dir" -j"$(nproc)" >>"$binary_dir.log" 2>&1 || { tail -40 "$binary_dir.log"; exit 1; }
"$binary_dir/nbody_common_links"
