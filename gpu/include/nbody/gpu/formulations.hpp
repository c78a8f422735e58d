#pragma once
// The GPU formulations (gpu/formulations/, one registration function per file) and their
// tolerances.
#include <vector>

#include "nbody/registry.hpp"

namespace nbody {

// Every GPU formulation, added to a registry (gpu/formulations/formulations.inc lists them).
void register_gpu_implementations(Registry& registry);

}  // namespace nbody

namespace nbody::gpu {

// Measured on an H100 over both generators and N = 1 .. 65536, with margin (docs/tolerances.md).
Tolerance gpu_float32_tolerance();
Tolerance gpu_float64_tolerance();

}  // namespace nbody::gpu
