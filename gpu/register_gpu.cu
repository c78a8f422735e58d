// Every GPU formulation, from the list in formulations/formulations.inc.
#include <string>

#include "nbody/errors.hpp"
#include "nbody/gpu/device_query.hpp"
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/multi_gpu.hpp"

namespace nbody {
namespace gpu {
#define NBODY_FORMULATION(register_function) void register_function(Registry& registry);
#include "formulations/formulations.inc"
#undef NBODY_FORMULATION
}  // namespace gpu

void register_gpu_implementations(Registry& registry) {
#define NBODY_FORMULATION(register_function) gpu::register_function(registry);
#include "formulations/formulations.inc"
#undef NBODY_FORMULATION
  // A --gpu ordinal this machine does not have is refused before anything runs, instead of every
  // GPU formulation failing on it. --gpu 0, the default, stays valid without any GPU: the GPU
  // formulations are then skipped as unavailable.
  registry.add_option_check([](const ExecutionOptions& options) {
    if (options.gpu_device < 0) throw UsageError("--gpu must be a device ordinal (0 or more)");
    if (options.gpu_device > 0) {
      if (const auto reason = gpu::device_unavailable_reason(options.gpu_device)) {
        throw UsageError("--gpu " + std::to_string(options.gpu_device) + ": " + *reason);
      }
    }
    if (!options.gpu_devices.empty()) {
      if (const auto reason = gpu::multi_gpu_unavailable_reason(options.gpu_devices)) {
        throw UsageError("--gpus: " + *reason);
      }
    }
  });
}

namespace gpu {

// docs/tolerances.md, GPU. Worst measured on an H200 (both generators, N = 1 .. 65536): relative
// L2 / (u sqrt N) 2.6 (gpu.shared, N = 2), max / (u sqrt N) 3.1 (gpu.shared.f64, Plummer, N = 31).
// One pair's analytic worst case with rsqrtf's 2 ulp is about 10 u, 7 u sqrt 2: c_L2 = 12 as for
// cpu.simd. The max metric's small-N tail comes from bodies whose forces nearly cancel, the same
// for every full-accuracy kernel: c_max = 96 as for cpu.simd (whose survey over 100000 inputs found
// none beyond it, with a less accurate rsqrt).
Tolerance gpu_float32_tolerance() {
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 12.0,
          .max_relative_coefficient = 96.0};
}

Tolerance gpu_float64_tolerance() {
  return {.unit_roundoff = kFloat64UnitRoundoff,
          .relative_l2_coefficient = 12.0,
          .max_relative_coefficient = 96.0};
}

}  // namespace gpu
}  // namespace nbody
