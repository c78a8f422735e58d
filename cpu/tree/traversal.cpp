// The tree walk and the force evaluation: one walk per group of targets (a cell of up to
// TreeSettings::group_capacity bodies, as Bonsai's groups), then every target of the group against
// the walk's interaction lists, evaluated at the ISA TreeSettings::isa names (empty: the widest
// this CPU has) by the kernels of nbody/cpu/tree/interaction_kernels.hpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "nbody/cpu/simd_runs.hpp"
#include "nbody/cpu/tree/interaction_kernels.hpp"
#include "nbody/cpu/tree/octree.hpp"
#include "nbody/physics.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody::cpu::tree {
namespace {

// a < b ? b : a, without a branch: GCC compiles the comparison with a constant 0 to one, which the
// walk mispredicts. maxsd(b, a) is b > a ? b : a: the same value for every input.
TreeFloat64 larger(TreeFloat64 a, TreeFloat64 b) {
#if defined(__SSE2__)
  return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(b), _mm_set_sd(a)));
#else
  return a < b ? b : a;
#endif
}

// The squared distance from `point` to the nearest point of `box` (0 inside it). Each gap is
// max(low - p, 0, p - high) as std::max({...}) takes it.
TreeFloat64 squared_distance_to_box(const Box& box, const Vec3<TreeFloat64>& point) {
  const auto gap = [&](TreeFloat64 low, TreeFloat64 high, TreeFloat64 p) {
    return larger(larger(low - p, TreeFloat64{0}), p - high);
  };
  const TreeFloat64 dx = gap(box.low.x, box.high.x, point.x);
  const TreeFloat64 dy = gap(box.low.y, box.high.y, point.y);
  const TreeFloat64 dz = gap(box.low.z, box.high.z, point.z);
  return dx * dx + dy * dy + dz * dz;
}

// The opening criterion of Salmon & Warren ("Skeletons from the treecode closet", J. Comput.
// Phys. 111, 1994), applied to a group of targets as Bonsai applies it: accept the cell when the
// distance from the group's box to the cell's centre of mass exceeds b_max / theta, b_max bounding
// the distance from that centre to any of the cell's bodies (here: to the farthest corner of the
// cell's cube, CellMoments says why). Barnes and Hut's s / d < theta, with d
// measured to the centre of mass, accepts a large cell whose centre of mass lies near its edge
// from a target inside or beside the cell, with unbounded error; measuring from b_max cannot: for
// theta <= 1 a cell that holds one of the group's bodies is never accepted (that body is within
// b_max of the centre). Compared as squares times theta^2, so that theta = 0 accepts nothing.
bool accepts(const Box& group, const CellCriterion& cell, TreeFloat64 theta_squared) {
  return theta_squared * squared_distance_to_box(group, cell.centre) > cell.b_max_squared;
}

// One walk's result, and its stack; kept per thread so the vectors are allocated once. The lists
// are the first range_count and cell_count entries: an ISA's walk writes into vectors sized ahead.
struct InteractionLists {
  std::vector<BodyRange> bodies;     // the bodies of opened leaves, as ranges of the sorted order
  std::vector<std::uint32_t> cells;  // accepted cells
  std::vector<std::uint32_t> stack;
  std::vector<std::uint64_t> queue;  // an ISA's walk's
  std::size_t range_count = 0, cell_count = 0;
};

// Adjacent leaves of the sorted order are merged into one range: fewer, longer inner loops.
void append_range(std::vector<BodyRange>& ranges, const Cell& leaf) {
  if (!ranges.empty() && ranges.back().end == leaf.begin) {
    ranges.back().end = leaf.end;
  } else {
    ranges.push_back({leaf.begin, leaf.end});
  }
}

// Depth first from the root, children in octant order, so that at theta = 0 the bodies come in
// the sorted order.
template <class T>
void walk(const Octree<T>& tree, const Box& group, TreeFloat64 theta_squared,
          InteractionLists& lists) {
  lists.bodies.clear();
  lists.cells.clear();
  lists.stack.assign(1, 0);
  while (!lists.stack.empty()) {
    const std::uint32_t c = lists.stack.back();
    lists.stack.pop_back();
    const Cell& cell = tree.cells[c];
    if (accepts(group, tree.criteria[c], theta_squared)) {
      lists.cells.push_back(c);
    } else if (cell.is_leaf()) {
      append_range(lists.bodies, cell);
    } else {
      for (std::uint32_t k = cell.child_count; k-- > 0;)
        lists.stack.push_back(cell.first_child + k);
    }
  }
  lists.range_count = lists.bodies.size();
  lists.cell_count = lists.cells.size();
}

// The walk of the group kernels' ISA where it brings one (the same cells and leaves, in its
// order), else the one above.
template <class T>
void walk(const Octree<T>& tree, const Box& group, TreeFloat64 theta_squared, TreeWalk isa_walk,
          InteractionLists& lists) {
  if (isa_walk == nullptr) {
    walk(tree, group, theta_squared, lists);
    return;
  }
  // Room for every cell and leaf: a walk lists or queues each at most once.
  if (lists.cells.size() < tree.cells.size() + kWalkSlack) {
    lists.cells.resize(tree.cells.size() + kWalkSlack);
    lists.queue.resize(tree.cells.size() + kWalkSlack);
  }
  if (lists.bodies.size() < tree.leaves.size() + kWalkSlack) {
    lists.bodies.resize(tree.leaves.size() + kWalkSlack);
  }
  const WalkCounts counts = isa_walk({.cells = tree.cells.data(),
                                      .criteria = tree.criteria.data(),
                                      .group = group,
                                      .theta_squared = theta_squared,
                                      .accepted = lists.cells.data(),
                                      .ranges = lists.bodies.data(),
                                      .queue = lists.queue.data()});
  lists.range_count = counts.ranges;
  lists.cell_count = counts.cells;
}

// The group kernel in T of an ISA's kernels.
template <class T>
GroupKernel<T> group_kernel(const GroupKernels& kernels) {
  if constexpr (std::is_same_v<T, float>) {
    return kernels.f32;
  } else {
    return kernels.f64;
  }
}

// Every target of `group` against the lists, by the ISA's kernel; returns what it evaluated.
template <class T>
InteractionCounts evaluate_group(const Octree<T>& tree, const TargetGroup& group,
                                 const InteractionLists& lists,
                                 std::span<const CellMultipole<T>> multipoles, T softening_squared,
                                 GroupKernel<T> kernel, std::span<Vec3<T>> accelerations) {
  kernel({.sources = tree.sorted_bodies.data(),
          .input_index = tree.input_index.data(),
          .target_begin = tree.group_begin(group),
          .target_end = tree.group_end(group),
          .ranges = lists.bodies.data(),
          .range_count = lists.range_count,
          .cells = lists.cells.data(),
          .cell_count = lists.cell_count,
          .multipoles = multipoles.data(),
          .softening_squared = softening_squared,
          .accelerations = accelerations.data()});
  std::uint64_t listed_bodies = 0;
  for (std::size_t r = 0; r < lists.range_count; ++r) {
    listed_bodies += lists.bodies[r].end - lists.bodies[r].begin;
  }
  const std::uint64_t targets = tree.group_end(group) - tree.group_begin(group);
  return {.body_body = targets * listed_bodies, .body_cell = targets * lists.cell_count};
}

// One evaluation's traversal, its lists kept per thread between evaluations.
template <class T>
InteractionCounts traverse(const Octree<T>& tree, std::span<const CellMultipole<T>> multipoles,
                           T softening_squared, TreeFloat64 theta_squared, GroupKernel<T> kernel,
                           TreeWalk isa_walk,
                           tbb::enumerable_thread_specific<InteractionLists>& scratch,
                           std::span<Vec3<T>> accelerations) {
  tbb::combinable<InteractionCounts> counts;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tree.groups.size()),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      InteractionLists& lists = scratch.local();
                      InteractionCounts& local = counts.local();
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        const TargetGroup& group = tree.groups[i];
                        walk(tree, tree.group_box(group), theta_squared, isa_walk, lists);
                        const InteractionCounts counted =
                            evaluate_group(tree, group, lists, multipoles, softening_squared,
                                           kernel, accelerations);
                        local.body_body += counted.body_body;
                        local.body_cell += counted.body_cell;
                      }
                    });
  return counts.combine([](const InteractionCounts& a, const InteractionCounts& b) {
    return InteractionCounts{a.body_body + b.body_body, a.body_cell + b.body_cell};
  });
}

template <class T>
void round_multipoles(const Octree<T>& tree, TreeFloat64 softening_squared,
                      std::vector<CellMultipole<T>>& multipoles) {
  multipoles.resize(tree.moments.size());
  // Split no finer than a few thousand cells: a small tree's rounding stays on this thread.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, multipoles.size(), 4096),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t c = range.begin(); c != range.end(); ++c) {
                        multipoles[c] = round_multipole<T>(tree.moments[c], softening_squared);
                      }
                    });
}

void check_settings(const TreeSettings& settings) {
  if (settings.leaf_capacity == 0 || settings.group_capacity == 0) {
    throw std::invalid_argument("evaluate_tree: the leaf and group capacities must be at least 1");
  }
}

void check_arguments(double softening, double theta) {
  if (!(theta >= 0 && theta <= 1)) {
    throw std::invalid_argument("evaluate_tree: theta must be in [0, 1]");
  }
  if (!(softening >= kSmallestSoftening) || !std::isfinite(softening)) {
    throw std::invalid_argument(
        fmt::format("evaluate_tree: the softening must be finite and at least {}, not {}",
                    kSmallestSoftening, softening));
  }
}

}  // namespace

GroupKernels group_kernels_for(Isa isa) {
  switch (isa) {
#define NBODY_ISA(id, ...) \
  case Isa::id:            \
    return group_kernels_##id();
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  throw std::logic_error("group_kernels_for: an ISA outside this build's list");
}

const GroupTerms& group_terms_for(Isa isa) {
  switch (isa) {
#define NBODY_ISA(id, ...) \
  case Isa::id:            \
    return group_terms_##id;
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  throw std::logic_error("group_terms_for: an ISA outside this build's list");
}

TermInstructions term_instructions(std::string_view isa, bool float64) {
  const GroupTerms& terms = group_terms_for(simd::resolve_isa(isa));
  return float64 ? terms.f64 : terms.f32;
}

template <class T>
struct TreeEvaluator<T>::Buffers {
  TreeSettings settings;
  GroupKernel<T> kernel;
  TreeWalk walk;
  Octree<T> tree;
  BuildScratch build_scratch;
  std::vector<CellMultipole<T>> multipoles;
  tbb::enumerable_thread_specific<InteractionLists> lists;
  TreeForces<T> forces;
};

template <class T>
TreeEvaluator<T>::TreeEvaluator(const TreeSettings& settings) {
  check_settings(settings);
  buffers_ = std::make_unique<Buffers>();
  buffers_->settings = settings;
  // TreeSettings::isa (empty: the widest this CPU has); UsageError for an unknown ISA or one this
  // CPU lacks, as --isa gives.
  const GroupKernels kernels = group_kernels_for(simd::resolve_isa(settings.isa));
  buffers_->kernel = group_kernel<T>(kernels);
  buffers_->walk = kernels.walk;
}

template <class T>
TreeEvaluator<T>::~TreeEvaluator() = default;

template <class T>
const TreeSettings& TreeEvaluator<T>::settings() const {
  return buffers_->settings;
}

template <class T>
const TreeForces<T>& TreeEvaluator<T>::evaluate(std::span<const Body<T>> bodies, double softening,
                                                double theta) {
  check_arguments(softening, theta);
  Buffers& b = *buffers_;
  TreeForces<T>& result = b.forces;
  result.accelerations.resize(bodies.size());
  result.interactions = {};
  result.seconds = {};
  result.shape = {};
  if (bodies.empty()) return result;
  rebuild_octree(bodies, b.settings, b.tree, b.build_scratch, result.seconds.build);
  const TreeFloat64 softening_squared = softening * softening;
  const SteadyClock::time_point rounding_start = SteadyClock::now();
  round_multipoles(b.tree, softening_squared, b.multipoles);
  result.seconds.build.moments += seconds_since(rounding_start);
  const SteadyClock::time_point traversal_start = SteadyClock::now();
  result.interactions = traverse<T>(b.tree, b.multipoles, static_cast<T>(softening_squared),
                                    theta * theta, b.kernel, b.walk, b.lists, result.accelerations);
  result.seconds.traversal = seconds_since(traversal_start);
  result.shape = {.cells = b.tree.cells.size(),
                  .leaves = b.tree.leaves.size(),
                  .groups = b.tree.groups.size(),
                  .depth = b.tree.depth()};
  return result;
}

template class TreeEvaluator<float>;
template class TreeEvaluator<double>;

}  // namespace nbody::cpu::tree
