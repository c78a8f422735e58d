// cpu.aos: the gold-standard port of the textbook loop. One thread, array of structures, exact
// 1/sqrt: what most published comparisons use as "the CPU".
#include "nbody/cpu/cpu_run.hpp"

namespace nbody::cpu {
namespace {

template <class T>
void aos_forces(std::span<const Body<T>> bodies, T softening_squared, TargetRange targets,
                std::span<Vec3<T>> acc) {
  for (std::size_t i = targets.begin; i < targets.end; ++i) {
    const Body<T> bi = bodies[i];
    T ax = 0, ay = 0, az = 0;
    for (const Body<T>& bj : bodies) {
      accumulate_interaction<T>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, bj.m, softening_squared, ax, ay,
                                az);
    }
    acc[i - targets.begin] = {ax, ay, az};
  }
}

}  // namespace

void register_cpu_aos(Registry& registry) {
  registry.add({
      .info = {.name = "cpu.aos",
               .description = "scalar loop over an array of structures, one thread",
               .device = DeviceKind::cpu,
               .layout = Layout::aos,
               .precision = Precision::f32,
               .role = Role::naive_baseline,
               .optimizations = {"none (reference port)"},
               .tolerance = scalar_float32_tolerance()},
      .unavailable_reason = [] { return std::optional<std::string>{}; },
      .prepare =
          [](std::span<const Body<double>> bodies, double softening,
             const ExecutionOptions& options) {
            return std::make_unique<ScalarRun<float, Layout::aos>>(bodies, softening, options,
                                                                   aos_forces<float>);
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },
      .size_limit_reason = {},
  });
}

}  // namespace nbody::cpu
