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

// Worst measured on an H200 (one seed, both generators, N = 1 .. 65536; docs/tolerances.md, GPU):
// relative L2 / (u sqrt N) 2.6 (gpu.shared, N = 2), max / (u sqrt N) 2.6 in float32 and 3.1 in
// float64 (gpu.shared.f64, Plummer, N = 31). The same coefficients as the scalar CPU's L2 (8), and
// 5x the worst max (16).
Tolerance gpu_float32_tolerance() {
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 8.0,
          .max_relative_coefficient = 16.0};
}

Tolerance gpu_float64_tolerance() {
  return {.unit_roundoff = kFloat64UnitRoundoff,
          .relative_l2_coefficient = 8.0,
          .max_relative_coefficient = 16.0};
}

}  // namespace gpu
}  // namespace nbody
