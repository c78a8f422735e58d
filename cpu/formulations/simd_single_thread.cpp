// cpu.simd and cpu.simd.approx: one thread, structure of arrays, xsimd batches of the widest ISA
// this CPU has (or the one forced with --isa). cpu.simd follows the approximate rsqrt with one
// Newton-Raphson step (full accuracy, like the GPU's rsqrtf); cpu.simd.approx does not, and is
// reported in the approximate class so the report can show what the step costs and buys.

#include <fmt/format.h>

#include "nbody/cpu/simd_runs.hpp"

namespace nbody::cpu::simd {
namespace {

class SingleThreadRun final : public PreparedRun {
 public:
  SingleThreadRun(std::span<const Body<double>> bodies, double softening, TargetRange targets,
                  Isa isa, bool newton_step)
      : bodies_(bodies),
        targets_(targets),
        accelerations_(bodies_.padded_count()),
        softening_squared_(static_cast<float>(softening * softening)),
        kernels_(kernels_for(isa)),
        kernel_(newton_step ? kernels_.all_pairs : kernels_.all_pairs_bare_rsqrt),
        newton_step_(newton_step) {}

  Seconds evaluate(Scope) override {
    const TargetRange bounds = kernel_bounds(targets_, kernels_.all_pairs_step);
    return Seconds::kernel_only(time_seconds([&] {
      kernel_(bodies_.view(), softening_squared_, bounds.begin, bounds.end, accelerations_.view());
    }));
  }

  void set_bodies(std::span<const Body<double>> bodies) override { bodies_.assign(bodies); }

  std::vector<Vec3<double>> accelerations() override { return accelerations_.promoted(targets_); }

  std::map<std::string, std::string> details() const override {
    return {{"isa", std::string(isa_name(kernels_.isa))},
            {"lanes", std::to_string(kernels_.lanes)},
            {"threads", "1"},
            {"rsqrt", fmt::format("{}{}", kernels_.rsqrt_instruction,
                                  newton_step_ ? " + 1 Newton-Raphson step" : " alone")},
            {"fma", kernels_.fma ? "yes" : "no"},
            {"targets_per_iteration", std::to_string(kernels_.all_pairs_step)}};
  }

 private:
  PaddedBodies bodies_;
  TargetRange targets_;
  PaddedAccelerations accelerations_;  // of every body: a target's entry is at its index
  float softening_squared_;
  KernelSet kernels_;
  AllPairsKernel kernel_;
  bool newton_step_;
};

}  // namespace

std::unique_ptr<PreparedRun> prepare_single_thread(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   bool newton_step) {
  return std::make_unique<SingleThreadRun>(bodies, softening,
                                           resolve_targets(options.targets, bodies.size()),
                                           resolve_isa(options.isa), newton_step);
}

}  // namespace nbody::cpu::simd

namespace nbody::cpu {

void register_cpu_simd(Registry& registry) {
  using namespace simd;
  for (const bool newton_step : {true, false}) {
    registry.add({
        .info = {.name = newton_step ? "cpu.simd" : "cpu.simd.approx",
                 .description = newton_step
                                    ? "xsimd batches, one thread, rsqrt + 1 Newton-Raphson step"
                                    : "xsimd batches, one thread, bare 12/14-bit rsqrt",
                 .device = DeviceKind::cpu,
                 .layout = Layout::soa,
                 .precision = Precision::f32,
                 .accuracy_class = newton_step ? AccuracyClass::full : AccuracyClass::approximate,
                 .pairs = PairScheme::all_pairs,
                 .multithreaded = false,
                 .isa_choice = true,
                 .optimizations =
                     simd_kernel_optimizations(newton_step, {"2 target vectors per iteration"}),
                 .tolerance = newton_step ? simd_full_tolerance() : simd_bare_rsqrt_tolerance(),
                 .bytes_per_body = 32},
        .unavailable_reason = [] { return simd_unavailable_reason(); },
        .prepare =
            [newton_step](std::span<const Body<double>> bodies, double softening,
                          const ExecutionOptions& options) {
              return prepare_single_thread(bodies, softening, options, newton_step);
            },
        .threads_used = [](const ExecutionOptions&) { return 1; },
        .size_limit_reason = {},
    });
  }
}

}  // namespace nbody::cpu
