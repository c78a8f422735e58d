// gpu.tree: the GPU Barnes-Hut core of gpu/tree/ (nbody/gpu/tree/gpu_tree.hpp) as a formulation:
// every phase of every evaluation on the device (bounding cube, keys, sort, cells, moments, walks),
// the tree the CPU's cpu.tree builds, walked against the same criterion. gpu.tree.f64: the same in
// float64. Registered at theta = 0.5 under the plain name and bound by --theta for runs, as
// cpu.tree; credited no interactions (FAIRNESS rule 9).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nbody/gpu/device_query.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/tree_formulation.hpp"

namespace nbody::gpu {
namespace {

// The angle of a tree formulation run without --theta binding it, as cpu.tree's.
constexpr double kUnboundTheta = 0.5;

// Why a GPU tree does not take a slice of the targets or several GPUs: each device would need the
// part of the tree its targets open (a locally essential tree, or a top tree every device shares),
// which the decomposition by target range does not build.
constexpr const char* kDecompositionRefusal =
    "a tree over several GPUs or ranks needs each one's locally essential tree, which the "
    "decomposition by target range does not build: gpu.tree runs on one GPU";

// Device bytes per body, an upper bound: the bodies (input and sorted), two key and index buffers
// for the radix sort, the accelerations, and about one cell per 4 bodies with its float64 moments,
// criterion and rounded multipole.
template <class T>
constexpr std::size_t kDeviceBytesPerBody = 2 * sizeof(Body<T>) + 2 * (8 + 4) + sizeof(Vec3<T>) +
                                            (16 + 152 + 64 + 14 * sizeof(T)) / 4 + 64;

// theta as the shortest text that reads back to it (as name_at_opening_angle writes it).
std::string shortest(double value) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

template <class T>
class GpuTreeRun final : public PreparedRun {
 public:
  GpuTreeRun(std::span<const Body<double>> bodies, double softening, double theta,
             const ExecutionOptions& options)
      : evaluator_(bodies.size(), tree::GpuTreeSettings{.gpu_device = options.gpu_device}),
        softening_(softening),
        theta_(theta),
        gpu_device_(options.gpu_device) {
    evaluator_.set_bodies(bodies);
    bodies_.assign(bodies.begin(), bodies.end());
  }

  // kernel: the device's own events over every phase, build included. end_to_end: on the host's
  // steady clock, the bodies rounded to T and uploaded, the evaluation, the accelerations
  // downloaded and promoted: the rounding and promotion are the host's work the all-pairs runs do
  // outside their timing, so this figure reads slightly high against theirs.
  Seconds evaluate(Scope scope) override {
    const auto start = std::chrono::steady_clock::now();
    if (scope == Scope::end_to_end) evaluator_.set_bodies(bodies_);
    last_ = evaluator_.evaluate(theta_, softening_);
    if (scope == Scope::kernel) {
      Seconds seconds = Seconds::kernel_only(last_.seconds.total());
      seconds.tree_build = last_.seconds.build_total();
      return seconds;
    }
    accelerations_ = evaluator_.accelerations();
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {.total = total,
            .kernel = last_.seconds.total(),
            .communication = 0,
            .tree_build = last_.seconds.build_total()};
  }

  void set_bodies(std::span<const Body<double>> bodies) override {
    evaluator_.set_bodies(bodies);
    bodies_.assign(bodies.begin(), bodies.end());
  }

  std::vector<Vec3<double>> accelerations() override { return evaluator_.accelerations(); }

  std::optional<TreeInteractions> tree_interactions() const override {
    return TreeInteractions{.body_body = last_.interactions.body_body,
                            .body_cell = last_.interactions.body_cell};
  }

  std::map<std::string, std::string> details() const override {
    const tree::GpuTreeSeconds& s = last_.seconds;
    // fmt is not compiled by nvcc here (its constexpr paths), so the figures go through snprintf.
    const auto ms = [](double seconds) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
      return std::string(text);
    };
    return {{"gpu", std::to_string(gpu_device_)},
            {"theta", shortest(theta_)},
            {"cells", std::to_string(last_.shape.cells)},
            {"leaves", std::to_string(last_.shape.leaves)},
            {"groups", std::to_string(last_.shape.groups)},
            {"depth", std::to_string(last_.shape.depth)},
            {"float64_parts", std::string(tree::kGpuTreeFloat64Parts)},
            {"validation_ms_keys", ms(s.keys)},
            {"validation_ms_sort", ms(s.sort)},
            {"validation_ms_cells", ms(s.build)},
            {"validation_ms_moments", ms(s.moments)},
            {"validation_ms_traversal", ms(s.traversal)}};
  }

 private:
  tree::GpuTreeEvaluator<T> evaluator_;
  std::vector<Body<double>> bodies_;  // for end_to_end's upload
  std::vector<Vec3<double>> accelerations_;
  double softening_;
  double theta_;
  int gpu_device_;
  tree::GpuTreeResult last_;
};

std::optional<std::string> size_limit_reason(std::size_t n, const ExecutionOptions& options,
                                             std::size_t bytes_per_body) {
  if (is_partial(options.targets, n) || through_nccl(options)) return kDecompositionRefusal;
  if (auto reason = tree::gpu_tree_unavailable_reason(options.gpu_device)) return reason;
  return device_memory_limit_reason(options.gpu_device, n * bytes_per_body);
}

template <class T>
void register_tree(Registry& registry) {
  constexpr bool f64 = std::is_same_v<T, double>;
  Implementation tree{
      .info = {.name = f64 ? "gpu.tree.f64" : "gpu.tree",
               .description = std::string(f64 ? "gpu.tree in float64: " : "") +
                              "Barnes-Hut with every phase on the GPU: keys, radix sort, cells, "
                              "moments and one warp's walk per group of targets",
               .device = DeviceKind::gpu,
               .precision = f64 ? Precision::f64 : Precision::f32,
               .algorithm = Algorithm::barnes_hut,
               .role = Role::optimized,
               .optimizations =
                   {"Morton keys and CUB's radix sort on the device, cells built level by level",
                    "monopole and quadrupole moments in float64, an upward pass per level",
                    "persistent warps: one walk per group of up to 64 targets (runs of sibling "
                    "cells), 32 cells tested at once, interaction lists in shared memory",
                    "the tree and criterion of cpu.tree, to the bit (same interactions counted)",
                    std::string(tree::kGpuTreeFloat64Parts)},
               // The GPU's rsqrt, within the scalar all-pairs rounding at theta = 0
               // (tests/gpu_tree_test.cpp); each angle adds its truncation.
               .tolerance = {.unit_roundoff = f64 ? kFloat64UnitRoundoff : kFloat32UnitRoundoff,
                             .relative_l2_coefficient = 8.0,
                             .max_relative_coefficient = 96.0},
               // Host memory: the float64 copy end_to_end uploads, and the promoted results.
               .bytes_per_body = sizeof(Body<double>) + 2 * sizeof(Vec3<double>)},
      .unavailable_reason = [] { return device_unavailable_reason(0); },
      .prepare = nullptr,
      .threads_used = [](const ExecutionOptions&) { return 1; },
      .size_limit_reason =
          [](std::size_t n, const ExecutionOptions& options) {
            return size_limit_reason(n, options, kDeviceBytesPerBody<T>);
          },
      .simulate = nullptr,
      .at_opening_angle = nullptr};
  registry.add(tree_formulation(
      std::move(tree), kUnboundTheta,
      [](std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
         double theta) -> std::unique_ptr<PreparedRun> {
        if (const auto refusal = size_limit_reason(bodies.size(), options, 0)) {
          throw std::invalid_argument(*refusal);
        }
        return std::make_unique<GpuTreeRun<T>>(bodies, softening, theta, options);
      }));
}

}  // namespace

void register_gpu_tree(Registry& registry) {
  register_tree<float>(registry);
  register_tree<double>(registry);
}

}  // namespace nbody::gpu
