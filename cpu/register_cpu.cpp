// The list of CPU formulations: one line each.
#include "nbody/cpu/cpu_run.hpp"

namespace nbody {

void register_cpu_implementations(Registry& registry) {
  cpu::register_cpu_aos(registry);
  cpu::register_cpu_soa(registry);
}

namespace cpu {

Tolerance scalar_float32_tolerance() {
  // Measured worst case over both generators, N = 1 .. 65536, times a margin of about 4
  // (docs/tolerances.md).
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 4.0,
          .max_relative_coefficient = 64.0};
}

}  // namespace cpu
}  // namespace nbody
