// cpu.tbb.symmetric: Newton's third law on the CPU, the counterpart of the GPU's atomic kernel.
// The bodies are cut into tiles; each task takes one pair of tiles (a, b), a <= b, and evaluates
// each of their body pairs once, adding +m_j f to one body and -m_i f to the other in its
// thread's private accumulators, which are summed at the end. About N^2/2 pairs are evaluated
// (recorded exactly in details()) and N^2 "equivalent" interactions credited (FAIRNESS.md rule 4).
// cpu.tbb.symmetric.f64: the same in float64, registered by the same code (register_symmetric<T>).
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "nbody/cpu/simd_runs.hpp"
#include "nbody/errors.hpp"

namespace nbody::cpu::simd {
namespace {

// Bodies per task of the final sum over the threads' accumulators.
constexpr std::size_t kReductionGrain = 4096;

// Why a slice of targets is refused: each pair adds to both of its bodies, so every body's sum is
// complete only when every pair has been evaluated, and a slice would cost the whole N^2/2.
constexpr const char* kTargetRangeRefusal =
    "symmetric pairs complete every body's sum at once, so a slice of targets would cost all N^2/2 "
    "pairs: cpu.tbb.symmetric and cpu.tbb.symmetric.f64 do not take a target range (decomposition)";

std::optional<std::string> target_range_refusal(std::size_t n, const ExecutionOptions& options) {
  if (is_partial(options.targets, n)) return kTargetRangeRefusal;
  return std::nullopt;
}

template <class T>
class TbbSymmetricRun final : public PreparedRun {
 public:
  TbbSymmetricRun(std::span<const Body<double>> bodies, double softening, Isa isa, int threads,
                  std::size_t tile, std::optional<InvSqrtMethod> method)
      : bodies_(bodies),
        accelerations_(bodies_.padded_count()),
        softening_squared_(static_cast<T>(softening * softening)),
        kernels_(kernels_for<T>(isa)),
        method_(method.value_or(kernels_.full_accuracy)),
        kernel_(kernels_.symmetric_tile_by(method_)),
        arena_(threads),
        threads_(threads),
        tile_(std::max(kBodyPadding, tile / kBodyPadding * kBodyPadding)),
        partial_(PaddedAccelerations<T>(bodies_.padded_count())) {
    const std::size_t n = bodies_.padded_count();
    for (std::size_t a = 0; a < n; a += tile_) {
      for (std::size_t b = a; b < n; b += tile_) {
        const std::size_t a_end = std::min(n, a + tile_), b_end = std::min(n, b + tile_);
        tiles_.push_back({a, a_end, b, b_end});
        pair_evaluations_ += a == b ? diagonal_tile_pair_evaluations(a_end - a, kernels_.lanes)
                                    : static_cast<std::uint64_t>(a_end - a) * (b_end - b);
      }
    }
    arena_.initialize();  // start the workers here, outside timing
  }

  Seconds evaluate(Scope) override {
    const BodiesView<T> bodies = bodies_.view();
    return Seconds::kernel_only(time_seconds([&] {
      arena_.execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tiles_.size()),
                          [&](const tbb::blocked_range<std::size_t>& range) {
                            const AccelerationsView<T> out = partial_.local().view();
                            for (std::size_t t = range.begin(); t != range.end(); ++t) {
                              const TilePair& p = tiles_[t];
                              kernel_(bodies, softening_squared_, p.first_begin, p.first_end,
                                      p.second_begin, p.second_end, out);
                            }
                          });
        reduce_partials();
      });
    }));
  }

  void set_bodies(std::span<const Body<double>> bodies) override { bodies_.assign(bodies); }

  std::vector<Vec3<double>> accelerations() override {
    return accelerations_.promoted({0, bodies_.count()});
  }

  std::map<std::string, std::string> details() const override {
    const double n = static_cast<double>(bodies_.count());
    return {{"isa", std::string(isa_name(kernels_.isa))},
            {"lanes", std::to_string(kernels_.lanes)},
            {"threads", std::to_string(threads_)},
            {"tile_bodies", std::to_string(tile_)},
            {"rsqrt", inv_sqrt_detail(kernels_, method_)},
            {"fma", kernels_.fma ? "yes" : "no"},
            {"pair_evaluations", std::to_string(pair_evaluations_)},
            {"pair_evaluations_per_n_squared",
             fmt::format("{:.4f}", static_cast<double>(pair_evaluations_) / (n * n))}};
  }

 private:
  struct TilePair {
    std::size_t first_begin, first_end, second_begin, second_end;
  };

  // accelerations = sum of the threads' accumulators, which are zeroed on the way for the next
  // evaluation (a thread that joins later starts from the zeroed exemplar).
  void reduce_partials() {
    std::vector<AccelerationsView<T>> partials;
    for (PaddedAccelerations<T>& partial : partial_) partials.push_back(partial.view());
    const AccelerationsView<T> out = accelerations_.view();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bodies_.padded_count(), kReductionGrain),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i) {
                          T x = 0, y = 0, z = 0;
                          for (const AccelerationsView<T>& p : partials) {
                            x += std::exchange(p.x[i], T(0));
                            y += std::exchange(p.y[i], T(0));
                            z += std::exchange(p.z[i], T(0));
                          }
                          out.x[i] = x;
                          out.y[i] = y;
                          out.z[i] = z;
                        }
                      });
  }

  PaddedBodies<T> bodies_;
  PaddedAccelerations<T> accelerations_;
  T softening_squared_;
  KernelSet<T> kernels_;
  InvSqrtMethod method_;
  SymmetricTileKernel<T> kernel_;
  tbb::task_arena arena_;
  int threads_;
  std::size_t tile_;
  std::vector<TilePair> tiles_;
  std::uint64_t pair_evaluations_ = 0;
  tbb::enumerable_thread_specific<PaddedAccelerations<T>> partial_;
};

}  // namespace

template <class T>
std::unique_ptr<PreparedRun> prepare_tbb_symmetric(std::span<const Body<double>> bodies,
                                                   double softening,
                                                   const ExecutionOptions& options,
                                                   std::size_t tile,
                                                   std::optional<InvSqrtMethod> method) {
  if (const auto refusal = target_range_refusal(bodies.size(), options)) {
    throw std::invalid_argument(*refusal);
  }
  return std::make_unique<TbbSymmetricRun<T>>(bodies, softening, resolve_isa(options.isa),
                                              tbb_threads(options), tile, method);
}

template std::unique_ptr<PreparedRun> prepare_tbb_symmetric<float>(std::span<const Body<double>>,
                                                                   double, const ExecutionOptions&,
                                                                   std::size_t,
                                                                   std::optional<InvSqrtMethod>);
template std::unique_ptr<PreparedRun> prepare_tbb_symmetric<double>(std::span<const Body<double>>,
                                                                    double, const ExecutionOptions&,
                                                                    std::size_t,
                                                                    std::optional<InvSqrtMethod>);

}  // namespace nbody::cpu::simd

namespace nbody::cpu {
namespace {

// One registration for both precisions: cpu.tbb.symmetric (float32) and cpu.tbb.symmetric.f64.
// The shipped entry uses the measured tile and each ISA's faster full-accuracy 1/sqrt
// (KernelSet::full_accuracy: float32 Newton-Raphson everywhere; float64 Newton-Raphson on
// AVX-512F, square root and divide on AVX2 and SSE4.2, as cpu.tbb.f64). Beside it, as tuning
// variants: the other tiles, and, where the 1/sqrt is chosen per ISA (float64), each method forced.
template <class T>
void register_symmetric(Registry& registry) {
  using namespace simd;
  constexpr bool f64 = std::is_same_v<T, double>;
  constexpr Precision precision = f64 ? Precision::f64 : Precision::f32;
  const std::string base = f64 ? "cpu.tbb.symmetric.f64" : "cpu.tbb.symmetric";
  struct Variant {
    std::string name;
    std::size_t tile;
    std::optional<InvSqrtMethod> method;  // empty: the ISA's full-accuracy method
  };
  std::vector<Variant> variants = {{base, kDefaultSymmetricTile, std::nullopt}};
  for (const std::size_t tile : kSymmetricTiles) {
    if (tile == kDefaultSymmetricTile) continue;
    std::string name = base;
    name += fmt::format("[tile={}]", tile);
    variants.push_back({std::move(name), tile, std::nullopt});
  }
  if (f64) {
    for (const std::optional<InvSqrtMethod> method : kFloat64InvSqrtEntries) {
      if (!method) continue;  // the shipped entry, above
      std::string name = base;
      name += fmt::format("[inv_sqrt={}]", inv_sqrt_method_name(*method));
      variants.push_back({std::move(name), kDefaultSymmetricTile, method});
    }
  }
  for (const Variant& variant : variants) {
    const bool shipped = variant.name == base;
    std::string description = f64 ? "cpu.tbb.symmetric in float64: " : "Newton's third law: ";
    description += "half the pairs, per-thread accumulators, oneTBB over tile pairs";
    registry.add(make_simd_implementation(
        {.name = variant.name,
         .description = std::move(description),
         .precision = precision,
         .pairs = PairScheme::symmetric,
         .role = shipped ? Role::optimized : Role::tuning_variant,
         .multithreaded = true,
         .optimizations = simd_kernel_optimizations(
             precision, variant.method,
             {"symmetric pairs (Newton's third law), about N^2/2 evaluated",
              "per-thread private accumulators, summed at the end",
              fmt::format("oneTBB parallel_for over pairs of {}-body tiles", variant.tile),
              "all cores (--threads sets the count)"}),
         .tolerance = f64 ? simd_float64_tolerance() : simd_full_tolerance(),
         // Bodies (4 values), result (3, padded to 4), and one accumulator set (the same) per
         // thread.
         .bytes_per_body =
             sizeof(T) * (8 + 4 * static_cast<std::size_t>(tbb::info::default_concurrency()))},
        [tile = variant.tile, method = variant.method](std::span<const Body<double>> bodies,
                                                       double softening,
                                                       const ExecutionOptions& options) {
          return prepare_tbb_symmetric<T>(bodies, softening, options, tile, method);
        },
        target_range_refusal));
  }
}

}  // namespace

void register_cpu_tbb_symmetric(Registry& registry) {
  register_symmetric<float>(registry);
  register_symmetric<double>(registry);
}

}  // namespace nbody::cpu
