#pragma once
// The CUDA devices of this machine, for the results' machine description (FAIRNESS rule 7).
#include <vector>

#include "nbody/results.hpp"

namespace nbody::gpu {

// Name, SMs, clocks, memory, driver and runtime versions of each device; none on a machine without
// a GPU or a driver.
std::vector<GpuDescription> describe_gpus();

}  // namespace nbody::gpu
