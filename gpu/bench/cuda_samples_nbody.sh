#!/usr/bin/env bash
# The anchor of FAIRNESS.md's GPU side: the CUDA samples' nbody kernel, timed at the suite's sizes.
#
#   gpu/bench/cuda_samples_nbody.sh CUDA_SAMPLES_DIR fp32|fp64 N...
#
# CUDA_SAMPLES_DIR: a checkout of github.com/NVIDIA/cuda-samples (only
# Samples/5_Domain_Specific/nbody/bodysystemcuda.cu and bodysystem.h are used, unchanged). The
# sample's OpenGL and helper headers are replaced by the stand-ins in cuda_samples_nbody/stub, so
# it builds on a machine without GL. Needs nvcc; CUDA_ARCH (default 90) picks the GPU.
set -euo pipefail
samples=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
nbody=$samples/Samples/5_Domain_Specific/nbody
[[ -f $nbody/bodysystemcuda.cu ]] || { echo "no $nbody/bodysystemcuda.cu" >&2; exit 2; }
binary=$(mktemp -d)/cuda_samples_nbody
nvcc -O3 -std=c++17 -arch="sm_${CUDA_ARCH:-90}" -Wno-deprecated-declarations \
  -I"$here/cuda_samples_nbody/stub" -I"$nbody" -o "$binary" "$here/cuda_samples_nbody/harness.cu"
"$binary" "$@"
