// cpu.simd and cpu.simd.approx: one thread, structure of arrays, xsimd batches of the widest ISA
// this CPU has (or the one forced with --isa). cpu.simd follows the approximate rsqrt with one
// Newton-Raphson step (full accuracy, like the GPU's rsqrtf); cpu.simd.approx does not, and is
// reported in the approximate class so the report can show what the step costs and buys.
// cpu.simd.f64: the same kernel in float64, with as many Newton-Raphson steps as full float64
// accuracy needs (or, as a tuning variant, a square root and a division).

#include <fmt/format.h>

#include "nbody/cpu/simd_runs.hpp"

namespace nbody::cpu::simd {
namespace {

template <class T>
class SingleThreadRun final : public PreparedRun {
 public:
  SingleThreadRun(std::span<const Body<double>> bodies, double softening, TargetRange targets,
                  Isa isa, std::optional<InvSqrtMethod> method)
      : bodies_(bodies),
        targets_(targets),
        accelerations_(bodies_.padded_count()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernels_(kernels_for<T>(isa)),
        method_(method.value_or(kernels_.full_accuracy)),
        kernel_(kernels_.all_pairs_by(method_)) {}

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
            {"rsqrt", inv_sqrt_detail(kernels_, method_)},
            {"fma", kernels_.fma ? "yes" : "no"},
            {"targets_per_iteration", std::to_string(kernels_.all_pairs_step)}};
  }

 private:
  PaddedBodies<T> bodies_;
  TargetRange targets_;
  PaddedAccelerations<T> accelerations_;  // of every body: a target's entry is at its index
  T softening_squared_;
  KernelSet<T> kernels_;
  InvSqrtMethod method_;
  AllPairsKernel<T> kernel_;
};

}  // namespace

template <class T>
std::unique_ptr<PreparedRun> prepare_single_thread(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::optional<InvSqrtMethod> method) {
  return std::make_unique<SingleThreadRun<T>>(bodies, softening,
                                              resolve_targets(options.targets, bodies.size()),
                                              resolve_isa(options.isa), method);
}

template std::unique_ptr<PreparedRun> prepare_single_thread<float>(std::span<const Body<double>>,
                                                                   double, const ExecutionOptions&,
                                                                   std::optional<InvSqrtMethod>);
template std::unique_ptr<PreparedRun> prepare_single_thread<double>(std::span<const Body<double>>,
                                                                    double, const ExecutionOptions&,
                                                                    std::optional<InvSqrtMethod>);

}  // namespace nbody::cpu::simd

namespace nbody::cpu {

void register_cpu_simd(Registry& registry) {
  using namespace simd;
  for (const bool newton_step : {true, false}) {
    const InvSqrtMethod method = newton_step ? InvSqrtMethod::newton : InvSqrtMethod::bare_rsqrt;
    registry.add(make_simd_implementation(
        {.name = newton_step ? "cpu.simd" : "cpu.simd.approx",
         .description = newton_step ? "xsimd batches, one thread, rsqrt + 1 Newton-Raphson step"
                                    : "xsimd batches, one thread, bare 12/14-bit rsqrt",
         .precision = Precision::f32,
         .accuracy_class = newton_step ? AccuracyClass::full : AccuracyClass::approximate,
         .multithreaded = false,
         .optimizations =
             simd_kernel_optimizations(Precision::f32, method, {"2 target vectors per iteration"}),
         .tolerance = newton_step ? simd_full_tolerance() : simd_bare_rsqrt_tolerance(),
         .bytes_per_body = 32},
        [method](std::span<const Body<double>> bodies, double softening,
                 const ExecutionOptions& options) {
          return prepare_single_thread<float>(bodies, softening, options, method);
        }));
  }
  // Float64: each ISA's faster full-accuracy 1/sqrt (measured), and beside it each method forced,
  // as tuning variants.
  for (const std::optional<InvSqrtMethod> method : kFloat64InvSqrtEntries) {
    const bool shipped = !method;
    registry.add(make_simd_implementation(
        {.name = shipped ? "cpu.simd.f64"
                         : fmt::format("cpu.simd.f64[inv_sqrt={}]", inv_sqrt_method_name(*method)),
         .description = "cpu.simd in float64, one thread",
         .precision = Precision::f64,
         .role = shipped ? Role::optimized : Role::tuning_variant,
         .multithreaded = false,
         .optimizations =
             simd_kernel_optimizations(Precision::f64, method, {"2 target vectors per iteration"}),
         .tolerance = simd_float64_tolerance(),
         .bytes_per_body = 64},
        [method](std::span<const Body<double>> bodies, double softening,
                 const ExecutionOptions& options) {
          return prepare_single_thread<double>(bodies, softening, options, method);
        }));
  }
}

}  // namespace nbody::cpu
