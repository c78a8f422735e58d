#!/usr/bin/env bash
# No build links NVML: libnvidia-ml.so.1 comes with the NVIDIA driver, and a binary that needs it
# would not start on a machine without one. NVML is opened at run time (gpu/nvml_library.hpp), and
# a build without CUDA holds no NVML at all.
#   tests/links_no_nvml.sh NBODY_FAIR HAS_CUDA(0|1)
set -euo pipefail
tool=$1
has_cuda=$2
if readelf -d "$tool" | grep -i 'NEEDED.*nvidia-ml'; then
  echo "links_no_nvml: $(basename "$tool") needs libnvidia-ml (above); NVML must be opened at run time" >&2
  exit 1
fi
if [[ $has_cuda != 1 ]] && grep -q -a 'nvmlDeviceGetTotalEnergyConsumption' "$tool"; then
  echo "links_no_nvml: a build without CUDA holds NVML's energy function" >&2
  exit 1
fi
echo "links_no_nvml: $(basename "$tool") needs no libnvidia-ml$([[ $has_cuda == 1 ]] || echo ', and holds no NVML')"
