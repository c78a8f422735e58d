#!/usr/bin/env bash
# The anchor of the tree codes' GPU side: ECL-BH v4.5, Burtscher and Pingali's CUDA Barnes-Hut, as
# HeCBench ships it, unchanged, timed per step at the suite's sizes so that every GPU host can set
# it beside gpu.tree and the all-pairs kernels.
#
#   gpu/bench/ecl_bh_step.sh HECBENCH_DIR N...        (N: 262144, or 256K, 1M, 4M)
#
# HECBENCH_DIR: a checkout of github.com/zjin-lcf/HeCBench; only src/bh-cuda/main.cu is used,
# built as its Makefile builds it (-O3), into a temporary folder. It integrates its own Plummer
# sphere in float32: theta 0.5, monopoles, eps 0.05, a leapfrog step of six kernels (bounding box,
# tree, summarization, sort, forces, integration). A step is (12 steps - 2 steps) / 10 of the
# program's "Total kernel execution time", which brackets its kernels with a device
# synchronization: the allocation, the copies and the first steps' one-time costs cancel. Needs
# nvcc; CUDA_ARCH (default 90) picks the GPU.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 HECBENCH_DIR N..." >&2; exit 2; }
source=$1/src/bh-cuda/main.cu
shift
[[ -f $source ]] || { echo "ecl_bh_step: no $source" >&2; exit 2; }
binary=$(mktemp -d)/ecl_bh
nvcc -O3 -std=c++14 -Xcompiler -Wall -arch="sm_${CUDA_ARCH:-90}" -o "$binary" "$source"
seconds() {  # N STEPS: the program's time of STEPS steps
  "$binary" "$1" "$2" | sed -n 's/^Total kernel execution time: \([0-9.]*\) s$/\1/p'
}
printf '%10s %14s %16s\n' N "s per step" "bodies per s"
for size in "$@"; do
  n=$(numfmt --from=iec "$size")
  two=$(seconds "$n" 2)
  twelve=$(seconds "$n" 12)
  python3 -c "s = ($twelve - $two) / 10; print(f'{$n:>10} {s:>14.4g} {$n / s:>16.4g}')"
done
