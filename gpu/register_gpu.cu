// The list of GPU formulations: one line each.
#include "nbody/gpu/formulations.hpp"

namespace nbody {

void register_gpu_implementations(Registry& registry) {
  gpu::register_gpu_aos(registry);
  gpu::register_gpu_shared(registry);
  gpu::register_gpu_atomic(registry);
  gpu::register_gpu_shuffle(registry);
  gpu::register_gpu_tuned(registry);
}

namespace gpu {

// Provisional until measured on the device (docs/tolerances.md, GPU).
Tolerance gpu_float32_tolerance() {
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 8.0,
          .max_relative_coefficient = 128.0};
}

Tolerance gpu_float64_tolerance() {
  return {.unit_roundoff = kFloat64UnitRoundoff,
          .relative_l2_coefficient = 8.0,
          .max_relative_coefficient = 128.0};
}

}  // namespace gpu
}  // namespace nbody
