// cpu.soa: the same scalar loop over a structure of arrays, one thread: the stepping stone to SIMD.
// cpu.soa.f64: the same loop in float64, the CPU's naive float64 baseline (no float64 cpu.aos:
// the naive side of a float64 comparison needs one plain port, and this is it).
#include "nbody/cpu/cpu_run.hpp"

namespace nbody::cpu {
namespace {

template <class T>
void soa_forces(const BodiesSoA<T>& bodies, T softening_squared, TargetRange targets,
                AccelerationsSoA<T>& acc) {
  const std::size_t n = bodies.size();
  for (std::size_t i = targets.begin; i < targets.end; ++i) {
    const T xi = bodies.x[i], yi = bodies.y[i], zi = bodies.z[i];
    T ax = 0, ay = 0, az = 0;
    for (std::size_t j = 0; j < n; ++j) {
      accumulate_interaction<T>(xi, yi, zi, bodies.x[j], bodies.y[j], bodies.z[j], bodies.m[j],
                                softening_squared, ax, ay, az);
    }
    acc.x[i - targets.begin] = ax;
    acc.y[i - targets.begin] = ay;
    acc.z[i - targets.begin] = az;
  }
}

}  // namespace

void register_cpu_soa(Registry& registry) {
  registry.add({
      .info = {.name = "cpu.soa",
               .description = "scalar loop over a structure of arrays, one thread",
               .device = DeviceKind::cpu,
               .layout = Layout::soa,
               .precision = Precision::f32,
               .optimizations = {"structure of arrays"},
               .tolerance = scalar_float32_tolerance()},
      .unavailable_reason = [] { return std::optional<std::string>{}; },
      .prepare =
          [](std::span<const Body<double>> bodies, double softening,
             const ExecutionOptions& options) {
            return std::make_unique<ScalarRun<float, Layout::soa>>(bodies, softening, options,
                                                                   soa_forces<float>);
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },
      .size_limit_reason = {},
  });
  registry.add({
      .info = {.name = "cpu.soa.f64",
               .description = "cpu.soa in float64: the scalar loop, one thread",
               .device = DeviceKind::cpu,
               .layout = Layout::soa,
               .precision = Precision::f64,
               .role = Role::naive_baseline,
               .optimizations = {"none (float64 reference port)", "structure of arrays"},
               .tolerance = scalar_float64_tolerance()},
      .unavailable_reason = [] { return std::optional<std::string>{}; },
      .prepare =
          [](std::span<const Body<double>> bodies, double softening,
             const ExecutionOptions& options) {
            return std::make_unique<ScalarRun<double, Layout::soa>>(bodies, softening, options,
                                                                    soa_forces<double>);
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },
      .size_limit_reason = {},
  });
}

}  // namespace nbody::cpu
