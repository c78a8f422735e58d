// cpu.tbb: cpu.simd's kernel spread over all cores with oneTBB, a parallel_for over blocks of
// targets. Each target's sum runs over the sources in the same order as in cpu.simd, so the two
// give bit-identical results on the same ISA. cpu.tbb.f64: cpu.simd.f64's kernel, the same way.
#include <algorithm>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "nbody/cpu/simd_runs.hpp"
#include "nbody/errors.hpp"

namespace nbody::cpu::simd {
namespace {

template <class T>
class TbbAllPairsRun final : public PreparedRun {
 public:
  TbbAllPairsRun(std::span<const Body<double>> bodies, double softening, TargetRange targets,
                 Isa isa, int threads, std::size_t grain, std::optional<InvSqrtMethod> method)
      : bodies_(bodies),
        targets_(targets),
        accelerations_(bodies_.padded_count()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernels_(kernels_for<T>(isa)),
        method_(method.value_or(kernels_.full_accuracy)),
        kernel_(kernels_.all_pairs_by(method_)),
        arena_(threads),
        threads_(threads),
        grain_steps_(std::max<std::size_t>(1, grain / kernels_.all_pairs_step)) {
    arena_.initialize();  // start the workers here, outside timing
  }

  Seconds evaluate(Scope) override {
    const std::size_t step = kernels_.all_pairs_step;
    const TargetRange bounds = kernel_bounds(targets_, step);
    const BodiesView<T> bodies = bodies_.view();
    const AccelerationsView<T> out = accelerations_.view();
    return Seconds::kernel_only(time_seconds([&] {
      arena_.execute([&] {
        // simple_partitioner: tasks of exactly the measured grain.
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(bounds.begin / step, bounds.end / step, grain_steps_),
            [&](const tbb::blocked_range<std::size_t>& range) {
              kernel_(bodies, softening_squared_, range.begin() * step, range.end() * step, out);
            },
            tbb::simple_partitioner());
      });
    }));
  }

  void set_bodies(std::span<const Body<double>> bodies) override { bodies_.assign(bodies); }

  std::vector<Vec3<double>> accelerations() override { return accelerations_.promoted(targets_); }

  std::map<std::string, std::string> details() const override {
    return {{"isa", std::string(isa_name(kernels_.isa))},
            {"lanes", std::to_string(kernels_.lanes)},
            {"threads", std::to_string(threads_)},
            {"grain_bodies", std::to_string(grain_steps_ * kernels_.all_pairs_step)},
            {"rsqrt", inv_sqrt_detail(kernels_, method_)},
            {"fma", kernels_.fma ? "yes" : "no"}};
  }

 private:
  PaddedBodies<T> bodies_;
  TargetRange targets_;
  PaddedAccelerations<T> accelerations_;  // of every body: a target's entry is at its index
  T softening_squared_;
  KernelSet<T> kernels_;
  InvSqrtMethod method_;
  AllPairsKernel<T> kernel_;
  tbb::task_arena arena_;
  int threads_;
  std::size_t grain_steps_;
};

}  // namespace

template <class T>
std::unique_ptr<PreparedRun> prepare_tbb_all_pairs(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::size_t grain,
                                                   std::optional<InvSqrtMethod> method) {
  return std::make_unique<TbbAllPairsRun<T>>(
      bodies, softening, resolve_targets(options.targets, bodies.size()), resolve_isa(options.isa),
      tbb_threads(options), grain, method);
}

template std::unique_ptr<PreparedRun> prepare_tbb_all_pairs<float>(std::span<const Body<double>>,
                                                                   double, const ExecutionOptions&,
                                                                   std::size_t,
                                                                   std::optional<InvSqrtMethod>);
template std::unique_ptr<PreparedRun> prepare_tbb_all_pairs<double>(std::span<const Body<double>>,
                                                                    double, const ExecutionOptions&,
                                                                    std::size_t,
                                                                    std::optional<InvSqrtMethod>);

}  // namespace nbody::cpu::simd

namespace nbody::cpu {

void register_cpu_tbb(Registry& registry) {
  using namespace simd;
  // The measured grain, and beside it the grains the tuning tool compares it with.
  for (const std::size_t grain :
       {kDefaultTbbGrain, std::size_t{16}, std::size_t{32}, std::size_t{128}, std::size_t{256}}) {
    const bool shipped = grain == kDefaultTbbGrain;
    registry.add(make_simd_implementation(
        {.name = shipped ? "cpu.tbb" : fmt::format("cpu.tbb[grain={}]", grain),
         .description = "cpu.simd's kernel on every core, oneTBB parallel_for",
         .precision = Precision::f32,
         .role = shipped ? Role::optimized : Role::tuning_variant,
         .multithreaded = true,
         .optimizations =
             simd_kernel_optimizations(Precision::f32, InvSqrtMethod::newton,
                                       {"2 target vectors per iteration",
                                        fmt::format("oneTBB parallel_for, grain {} bodies", grain),
                                        "all cores (--threads sets the count)"}),
         .tolerance = simd_full_tolerance(),
         .bytes_per_body = 32},
        [grain](std::span<const Body<double>> bodies, double softening,
                const ExecutionOptions& options) {
          return prepare_tbb_all_pairs<float>(bodies, softening, options, grain);
        }));
  }
  // Float64: each ISA's faster full-accuracy 1/sqrt (measured), at the float32 grain (a float64
  // task is only longer), and beside it each method forced, as tuning variants.
  for (const std::optional<InvSqrtMethod> method : kFloat64InvSqrtEntries) {
    const bool shipped = !method;
    registry.add(make_simd_implementation(
        {.name = shipped ? "cpu.tbb.f64"
                         : fmt::format("cpu.tbb.f64[inv_sqrt={}]", inv_sqrt_method_name(*method)),
         .description = "cpu.simd.f64's kernel on every core, oneTBB parallel_for",
         .precision = Precision::f64,
         .role = shipped ? Role::optimized : Role::tuning_variant,
         .multithreaded = true,
         .optimizations = simd_kernel_optimizations(
             Precision::f64, method,
             {"2 target vectors per iteration",
              fmt::format("oneTBB parallel_for, grain {} bodies", kDefaultTbbGrain),
              "all cores (--threads sets the count)"}),
         .tolerance = simd_float64_tolerance(),
         .bytes_per_body = 64},
        [method](std::span<const Body<double>> bodies, double softening,
                 const ExecutionOptions& options) {
          return prepare_tbb_all_pairs<double>(bodies, softening, options, kDefaultTbbGrain,
                                               method);
        }));
  }
}

}  // namespace nbody::cpu
