// gpu.tree: the GPU Barnes-Hut core of gpu/tree/ (nbody/gpu/tree/gpu_tree.hpp) as a formulation:
// every phase of every evaluation on the device (bounding cube, keys, sort, cells, moments, walks),
// the tree the CPU's cpu.tree builds, walked against the same criterion. gpu.tree.f64: the same in
// float64. Registered at theta = 0.5 under the plain name and bound by --theta for runs, as
// cpu.tree; credited no interactions (FAIRNESS rule 9).
#include <chrono>
#include <cstdint>
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

#include "nbody/ceilings.hpp"
#include "nbody/gpu/device_query.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/multipole_physics.hpp"
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

// The walk's terms in instructions, from the SASS of physics.hpp's accumulate_interaction and
// multipole_physics.hpp's accumulate_cell with DeviceInvSqrt, each in a loop of its own (sm_90,
// nvcc 13.0 -O3 -ftz=true, as gpu/tree's walk is compiled; docs/perf-notes.md, "Tree codes").
// Float32: FP32 arithmetic and MUFU, a body term 3 FADD, 6 FFMA, 3 FMUL and MUFU.RSQ (the mix the
// ceiling gpu.fp32_interaction_mix rates: 13), a cell term 3 FADD, 19 FFMA, 10 FMUL and MUFU.RSQ,
// the CPU's counts less its Newton step. Float64: FP64 instructions, a body term 3 DADD, 9 DFMA
// and 4 DMUL (x^(-3/2) in one Newton step), a cell term 3 DADD, 22 DFMA and 12 DMUL
// (rsqrt(double)'s steps).
constexpr double kFloat32BodyTermInstructions = 13;
constexpr double kFloat32CellTermInstructions = 33;
constexpr double kFloat64BodyTermInstructions = 16;
constexpr double kFloat64CellTermInstructions = 37;

// What one build of a tree of n bodies and `cells` cells must move, array by array, each read or
// written once by the phase that needs it: the bodies read by the bounding cube, the keys, the
// gather (and written there) and the leaves' moments; keys and indices written, the keys read by
// CUB's histogram, then read and written by each of its passes (8 bits a pass, 8 for 63 bits), the
// index read by the gather and the keys by the cells' build; a body's cell count written and
// scanned; its walk head written and read by the selection of the walks, where they are selected
// (appended instead, a walk of about 45 bodies is written once: left out). A cell: its 16-byte
// record emitted, placed and read, its key, its level and slot through the sort by level, its
// float64 moments written and read by its parent, its 32-byte criterion and its rounded multipole
// written.
template <class T>
struct BuildTraffic {
  static constexpr double kKey = sizeof(std::uint64_t), kIndex = sizeof(std::uint32_t);
  static constexpr double kWalkHead = 3 * kIndex, kCellRecord = 16, kCriterion = 32;
  static constexpr int kSortPasses = 8;
  static constexpr double per_body(bool walks_selected) {
    return 5.0 * sizeof(Body<T>) + 3 * kKey + 2 * kIndex + kSortPasses * 2 * (kKey + kIndex) +
           3 * kIndex + (walks_selected ? 2 * kWalkHead : 0);
  }
  static constexpr double per_cell() {
    return 3 * kCellRecord + kKey + 2 * kIndex + 2.0 * sizeof(CellMoments) + kCriterion +
           sizeof(CellMultipole<T>);
  }
};

// How an evaluation of n bodies in `cells` cells is bounded: float32 terms in interactions of the
// mix at its measured rate, float64 terms in FP64 instructions at the measured FP64 FMA rate
// (FLOP/s over 2); the build's traffic over the measured device-to-device bandwidth.
template <class T>
TreeCostModel cost_model(std::size_t n, std::size_t cells) {
  constexpr bool f64 = std::is_same_v<T, double>;
  using Traffic = BuildTraffic<T>;
  const bool walks_selected = tree::walk_order_for(n, {}) == tree::GpuWalkOrder::targets;
  char build_basis[256];
  std::snprintf(build_basis, sizeof build_basis,
                "%.0f B a body (keys, CUB's radix sort of %d passes, the gather, the leaves' "
                "bodies%s) and %.0f B a cell (its record, moments, criterion and multipole), each "
                "read or written once",
                Traffic::per_body(walks_selected), Traffic::kSortPasses,
                walks_selected ? ", the walks' selection" : "", Traffic::per_cell());
  char walk_basis[128];
  std::snprintf(walk_basis, sizeof walk_basis,
                "%.0f and %.0f %s instructions a body-body and body-cell term (SASS)",
                f64 ? kFloat64BodyTermInstructions : kFloat32BodyTermInstructions,
                f64 ? kFloat64CellTermInstructions : kFloat32CellTermInstructions,
                f64 ? "FP64" : "FP32 and MUFU");
  TreeCostModel model{.walk_ceiling = kGpuInteractionMixCeiling,
                      .walk_figure = CeilingFigure::value,
                      .walk_scale = 1,
                      .body_body_cost = 1,
                      .body_cell_cost = kFloat32CellTermInstructions / kFloat32BodyTermInstructions,
                      .cost_unit = "float32 interactions of the mix (12 FP32 + MUFU.RSQ)",
                      .cost_basis = walk_basis,
                      .build_ceiling = kGpuMemoryBandwidthCeiling,
                      .build_bytes = Traffic::per_body(walks_selected) * static_cast<double>(n) +
                                     Traffic::per_cell() * static_cast<double>(cells),
                      .build_basis = build_basis};
  if (f64) {
    model.walk_ceiling = kGpuFp64FlopsCeiling;
    model.walk_scale = 0.5;  // FLOP/s: two a DFMA
    model.body_body_cost = kFloat64BodyTermInstructions;
    model.body_cell_cost = kFloat64CellTermInstructions;
    model.cost_unit = "FP64 instructions";
  }
  return model;
}

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
                            .body_cell = last_.interactions.body_cell,
                            .costs = cost_model<T>(bodies_.size(), last_.shape.cells)};
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
                              "moments and a team of warps' walk per group of targets",
               .device = DeviceKind::gpu,
               .precision = f64 ? Precision::f64 : Precision::f32,
               .algorithm = Algorithm::barnes_hut,
               .role = Role::optimized,
               .optimizations =
                   {"Morton keys sorted on the device (a rank sort over the SMs up to 4096 "
                    "bodies, CUB's merge sort up to 32K, above its radix sort over the keys' "
                    "high half, each run of keys sharing it then sorted by the rest), the cells "
                    "read from the sorted keys body by body, nothing read back",
                    "monopole and quadrupole moments in float64: up to 32K bodies one "
                    "cooperative upward pass, level by level, each cell computed by a team of 8 "
                    "lanes; above, the cells climb from the leaves, each computed by the thread "
                    "that completes its children, two children read at a time",
                    "persistent teams of warps: a walk per run of 16, 32 or 64 targets of a "
                    "group of up to 64 (runs of sibling cells), fewer where the groups are few, "
                    "each from the whole group's box; interaction lists in shared memory; 16, 8, "
                    "4, 2 or 1 warps to a walk as the groups are few or many, sharing one stack "
                    "and testing 32 cells each at once; up to 128K bodies the walks queued as the "
                    "cells are read, breadth first, so that the shallowest groups' (the longest) "
                    "start first (from 32K, a group of cells an eighth of the root cube's side or "
                    "larger walked in runs of 16 targets), above in their targets' order",
                    f64 ? "two targets a lane, each source read from shared memory serving both"
                        : "eight targets a lane where one warp walks (each quarter of the warp "
                          "taking every fourth source), four where a team walks (each half "
                          "every other): a source read from shared memory serves eight or four "
                          "terms",
                    "each phase replayed as a CUDA graph after the first evaluation",
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
