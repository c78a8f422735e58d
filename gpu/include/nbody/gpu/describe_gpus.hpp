#pragma once
// The CUDA devices of this machine, for the results' machine description (FAIRNESS rule 7).
#include <nlohmann/json.hpp>

namespace nbody::gpu {

// Name, SMs, clocks, memory, driver and runtime versions of each device; an empty array on a
// machine without a GPU or a driver.
nlohmann::json describe_gpus();

}  // namespace nbody::gpu
