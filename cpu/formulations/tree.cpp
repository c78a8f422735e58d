// cpu.tree: the Barnes-Hut tree code of cpu/include/nbody/cpu/tree/ as a formulation: every
// evaluation builds the tree again (keys, sort, cells, moments) and walks it, on every core with
// oneTBB, the interactions in the ISA's SIMD lanes. cpu.tree.f64: the same in float64. Registered
// at theta = 0.5; `--theta` binds each to the opening angles a run sweeps ("cpu.tree[theta=0.3]"),
// each validated against its own surveyed bound and credited no interactions (FAIRNESS rule 9).
#include <fmt/format.h>
#include <tbb/task_arena.h>

#include <cstdint>
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
#include "nbody/cpu/cpu_run.hpp"
#include "nbody/cpu/simd_runs.hpp"
#include "nbody/cpu/tree/interaction_kernels.hpp"
#include "nbody/cpu/tree/octree.hpp"
#include "nbody/cpu/tree/precision.hpp"
#include "nbody/tree_formulation.hpp"
#include "nbody/tree_groups.hpp"

namespace nbody::cpu {
namespace {

// Why a tree does not take a slice of the targets (ranks, several GPUs): each process would need
// the part of the tree its targets open (a locally essential tree, or a top tree shared by all),
// which the decomposition by target range does not build.
constexpr const char* kTargetRangeRefusal =
    "a tree over several ranks needs each rank's locally essential tree, which the decomposition "
    "by target range does not build: cpu.tree runs in one process";

std::optional<std::string> target_range_refusal(std::size_t n, const ExecutionOptions& options) {
  if (is_partial(options.targets, n)) return kTargetRangeRefusal;
  return std::nullopt;
}

// The angle of a tree formulation run without --theta binding it: relative L2 about 3e-4 on a
// Plummer sphere in float32 (docs/tolerances.md, "Tree codes").
constexpr double kUnboundTheta = 0.5;

// What one build of a tree of n bodies and `cells` cells must move, array by array, each read or
// written once by the phase that needs it (docs/perf-notes.md, "Tree codes"): the bodies read by
// the bounding cube, the keys, the gather (and written there) and the leaves' moments; the keys
// and indices written, then what the key sort moves (nbody/cpu/tree/key_sort.hpp); the gather's
// index; the keys read by the cells' splits; and a cell's record written and read, its key, its
// float64 moments written, read by its parent and by the rounding, its criterion and its rounded
// multipole written.
template <class T>
struct BuildTraffic {
  static constexpr double kKey = sizeof(std::uint64_t), kIndex = sizeof(std::uint32_t);
  static constexpr double per_body() {
    return 5.0 * sizeof(Body<T>) + 2 * kKey + 2 * kIndex + tree::kKeySortBytesPerBody;
  }
  static constexpr double per_cell() {
    return 2.0 * sizeof(tree::Cell) + kKey + 3.0 * sizeof(CellMoments) +
           sizeof(tree::CellCriterion) + sizeof(CellMultipole<T>);
  }
};

// How this run's evaluation is bounded: its terms at the instructions the ISA's group kernel
// compiles them to, over that ISA's measured issue rate (the all-cores ceiling where the run used
// more than one thread); its build's traffic over the memory bandwidth.
template <class T>
TreeCostModel cost_model(const std::string& isa, int threads, std::size_t n, std::size_t cells) {
  constexpr bool f64 = std::is_same_v<T, double>;
  const tree::TermInstructions terms = tree::term_instructions(isa, f64);
  const double lanes = terms.lanes;
  using Traffic = BuildTraffic<T>;
  return {
      .walk_ceiling = cpu_flops_ceiling(f64 ? Precision::f64 : Precision::f32, isa, threads > 1),
      .walk_figure = CeilingFigure::fp_instructions_per_second,
      .walk_scale = 1,
      .body_body_cost = terms.body_body / lanes,
      .body_cell_cost = terms.body_cell / lanes,
      .cost_unit = "FP vector instructions",
      .cost_basis = fmt::format(
          "{} and {} FP vector instructions a {}-lane body-body and body-cell term: the {} "
          "group kernel's compiled loops (cpu/include/nbody/cpu/tree/interaction_kernels.hpp)",
          terms.body_body, terms.body_cell, terms.lanes, isa),
      .build_ceiling = kCpuMemoryBandwidthCeiling,
      .build_bytes = Traffic::per_body() * static_cast<double>(n) +
                     Traffic::per_cell() * static_cast<double>(cells),
      .build_basis = fmt::format(
          "{:.0f} B a body (keys, a radix sort of one pass through memory and one in cache, the "
          "gather, the leaves' bodies) and {:.0f} B a cell (its record, moments, criterion and "
          "multipole), each read or written once",
          Traffic::per_body(), Traffic::per_cell())};
}

template <class T>
class TreeRun final : public PreparedRun {
 public:
  TreeRun(std::span<const Body<double>> bodies, double softening, double theta,
          const ExecutionOptions& options)
      : bodies_(convert_precision<T, double>(bodies)),
        softening_(softening),
        theta_(theta),
        evaluator_({.isa = std::string(simd::isa_name(simd::resolve_isa(options.isa)))}),
        threads_(simd::tbb_threads(options)),
        arena_(threads_) {
    arena_.initialize();  // the workers start here, outside timing
  }

  Seconds evaluate(Scope) override {
    const tree::TreeForces<T>* forces = nullptr;
    Seconds seconds = Seconds::kernel_only(time_seconds([&] {
      arena_.execute([&] { forces = &evaluator_.evaluate(bodies_, softening_, theta_); });
    }));
    forces_ = forces;
    seconds.tree_build = forces->seconds.build.total();
    return seconds;
  }

  void set_bodies(std::span<const Body<double>> bodies) override {
    bodies_ = convert_precision<T, double>(bodies);
  }

  std::vector<Vec3<double>> accelerations() override {
    if (forces_ == nullptr) return {};
    return promote(std::span<const Vec3<T>>(forces_->accelerations));
  }

  std::optional<TreeInteractions> tree_interactions() const override {
    if (forces_ == nullptr) return TreeInteractions{};
    return TreeInteractions{.body_body = forces_->interactions.body_body,
                            .body_cell = forces_->interactions.body_cell,
                            .costs = cost_model<T>(evaluator_.settings().isa, threads_,
                                                   bodies_.size(), forces_->shape.cells)};
  }

  std::map<std::string, std::string> details() const override {
    const tree::TreeForces<T> none;
    const tree::TreeForces<T>& forces = forces_ != nullptr ? *forces_ : none;
    const tree::TreeSeconds& s = forces.seconds;
    const tree::TreeSettings& settings = evaluator_.settings();
    const auto ms = [](double seconds) { return fmt::format("{:.3f}", seconds * 1e3); };
    return {{"isa", settings.isa},
            {"threads", std::to_string(threads_)},
            {"theta", fmt::format("{}", theta_)},
            {"leaf_capacity", std::to_string(settings.leaf_capacity)},
            {"group_capacity", std::to_string(settings.group_capacity)},
            {"cells", std::to_string(forces.shape.cells)},
            {"leaves", std::to_string(forces.shape.leaves)},
            {"groups", std::to_string(forces.shape.groups)},
            {"depth", std::to_string(forces.shape.depth)},
            {"float64_parts", std::string(tree::kTreeFloat64Parts)},
            {"validation_ms_keys", ms(s.build.keys)},
            {"validation_ms_sort", ms(s.build.sort)},
            {"validation_ms_cells", ms(s.build.build)},
            {"validation_ms_moments", ms(s.build.moments)},
            {"validation_ms_traversal", ms(s.traversal)}};
  }

 private:
  std::vector<Body<T>> bodies_;
  double softening_;
  double theta_;
  tree::TreeEvaluator<T> evaluator_;
  int threads_;
  tbb::task_arena arena_;
  const tree::TreeForces<T>* forces_ = nullptr;  // the last evaluation's, in evaluator_
};

template <class T>
void register_tree(Registry& registry) {
  constexpr bool f64 = std::is_same_v<T, double>;
  Implementation tree = simd::make_simd_implementation(
      {.name = f64 ? "cpu.tree.f64" : "cpu.tree",
       .description = std::string(f64 ? "cpu.tree in float64: " : "") +
                      "Barnes-Hut: an octree from Morton keys, rebuilt every evaluation, "
                      "walked per group of targets on every core",
       .precision = f64 ? Precision::f64 : Precision::f32,
       .algorithm = Algorithm::barnes_hut,
       .role = Role::optimized,
       .multithreaded = true,
       .optimizations = {fmt::format("octree of Morton-sorted keys (Bonsai's build), leaves of {} "
                                     "bodies",
                                     kDefaultLeafCapacity),
                         "monopole and quadrupole moments about the centre of mass, in float64",
                         fmt::format("Salmon-Warren opening criterion, one walk per group of up "
                                     "to {} targets (runs of sibling cells)",
                                     kDefaultGroupCapacity),
                         "the tree's buffers kept from one evaluation to the next",
                         "interaction lists evaluated in SIMD lanes (the run-time ISA)",
                         "all cores with oneTBB (--threads sets the count)",
                         std::string(tree::kTreeFloat64Parts)},
       // Rounding as the all-pairs kernels whose 1/sqrt the walk takes (theta = 0 is their sum:
       // tests/tree_test.cpp); each angle adds its truncation (barnes_hut_tolerance).
       .tolerance = f64 ? simd::simd_float64_tolerance() : simd::simd_full_tolerance(),
       // The sorted copy, keys and indices, the accelerations, and about one cell per 4 bodies
       // with its float64 moments.
       .bytes_per_body = 2 * sizeof(Body<T>) + 16 + sizeof(Vec3<T>) + 64},
      nullptr, target_range_refusal);
  registry.add(tree_formulation(
      std::move(tree), kUnboundTheta,
      [](std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
         double theta) -> std::unique_ptr<PreparedRun> {
        if (const auto refusal = target_range_refusal(bodies.size(), options)) {
          throw std::invalid_argument(*refusal);
        }
        return std::make_unique<TreeRun<T>>(bodies, softening, theta, options);
      }));
}

}  // namespace

void register_cpu_tree(Registry& registry) {
  register_tree<float>(registry);
  register_tree<double>(registry);
}

}  // namespace nbody::cpu
