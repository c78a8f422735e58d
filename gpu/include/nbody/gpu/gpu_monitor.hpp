#pragma once
// The GPU's state during a measurement, read through NVML as nvbench reads it: SM clock,
// temperature and why the clocks are held down. NVML comes with the driver
// (libnvidia-ml.so.1) and is opened at run time, so nbody-fair still starts where there is none.
#include <functional>
#include <optional>
#include <string>

#include "nbody/results.hpp"

namespace nbody::gpu {

using GpuSampler = std::function<std::optional<GpuSample>()>;

// A sampler of CUDA device `ordinal` (matched to NVML by PCI bus id), or, when NVML or the device
// cannot be read, none and `why_not` says why. Never throws.
GpuSampler make_gpu_sampler(int ordinal, std::string& why_not);

}  // namespace nbody::gpu
