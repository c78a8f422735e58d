// The list of CPU formulations: one line each.
#include "nbody/cpu/cpu_run.hpp"
#include "nbody/cpu/simd_runs.hpp"

namespace nbody {

void register_cpu_implementations(Registry& registry) {
  cpu::register_cpu_aos(registry);
  cpu::register_cpu_soa(registry);
  cpu::simd::register_cpu_simd(registry);  // cpu.simd and cpu.simd.approx
  cpu::simd::register_cpu_tbb(registry);
  cpu::simd::register_cpu_tbb_symmetric(registry);
}

namespace cpu {

Tolerance scalar_float32_tolerance() {
  // Measured worst cases, both generators, N = 2 .. 16384, three seeds: 2.95 (L2) and 6.5 (max),
  // both at small N where one term's 5-6 roundings dominate; bounds set about 3x and 5x above
  // (docs/tolerances.md).
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 8.0,
          .max_relative_coefficient = 32.0};
}

}  // namespace cpu
}  // namespace nbody
