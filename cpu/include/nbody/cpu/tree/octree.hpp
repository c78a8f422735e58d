#pragma once
// A CPU Barnes-Hut force evaluator: an octree of Morton-sorted bodies, monopole and quadrupole
// moments, and one walk of the tree per group of targets with the Salmon-Warren opening criterion,
// parallel over the groups with oneTBB. What it computes in float64 is in
// nbody/cpu/tree/precision.hpp; the accuracy it reaches at each theta is in docs/tolerances.md,
// "Tree codes".
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/octree_build.hpp"

namespace nbody::cpu::tree {

// The interactions really evaluated, target by target: a tree is never credited N^2, and these
// are its secondary figure beside its time. At theta = 0 every cell is opened: body_body = N^2
// (the j = i terms included, as the all-pairs kernels count them) and body_cell = 0.
struct InteractionCounts {
  std::uint64_t body_body = 0;
  std::uint64_t body_cell = 0;
  std::uint64_t total() const { return body_body + body_cell; }
};

struct TreeSeconds {
  BuildSeconds build;    // keys, sort, cells, moments
  double traversal = 0;  // the walks and the interactions, every group
};

struct TreeShape {
  std::size_t cells = 0;
  std::size_t leaves = 0;
  std::size_t groups = 0;  // walks of the tree
  int depth = 0;           // the deepest level (the root is level 0)
};

template <class T>
struct TreeForces {
  std::vector<Vec3<T>> accelerations;  // in the input order
  InteractionCounts interactions;
  TreeSeconds seconds;
  TreeShape shape;
};

// The Barnes-Hut force evaluation, with every buffer it needs (the tree, the build's scratch, the
// rounded multipoles, the accelerations, the walks' lists) kept from one evaluation to the next:
// a run evaluates the same N many times, and allocating about 100 bytes a body each time costs it
// the page faults and zeroing of fresh memory (as the all-pairs formulations' buffers and the GPU
// tree's are kept, allocated before the timing). One owner: not copyable.
template <class T>
class TreeEvaluator {
 public:
  // Throws std::invalid_argument for a leaf or group capacity of 0, and nbody::UsageError for a
  // TreeSettings::isa that is unknown or wider than this CPU's (or for a CPU without SSE4.2), as
  // --isa does.
  explicit TreeEvaluator(const TreeSettings& settings = {});
  ~TreeEvaluator();
  TreeEvaluator(const TreeEvaluator&) = delete;
  TreeEvaluator& operator=(const TreeEvaluator&) = delete;

  // The accelerations of every body of `bodies` from all of them (the j = i term included, zero
  // with softening > 0), by the tree at opening parameter theta in [0, 1]: a cell is accepted for
  // a group of targets when the distance from the group's box to the cell's centre of mass exceeds
  // b_max / theta. theta = 0 opens every cell: the all-pairs sum, in another order. The softening
  // is taken in float64 and eps^2 rounded to T, as the all-pairs formulations do. Throws
  // std::invalid_argument for theta outside [0, 1] or a softening below kSmallestSoftening. The
  // result stays valid until the next call.
  const TreeForces<T>& evaluate(std::span<const Body<T>> bodies, double softening, double theta);

  const TreeSettings& settings() const;

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

extern template class TreeEvaluator<float>;
extern template class TreeEvaluator<double>;

// One evaluation in fresh buffers (TreeEvaluator::evaluate says what it computes and throws).
template <class T>
TreeForces<T> evaluate_tree(std::span<const Body<T>> bodies, double softening, double theta,
                            const TreeSettings& settings = {}) {
  TreeEvaluator<T> evaluator(settings);
  return evaluator.evaluate(bodies, softening, theta);
}

}  // namespace nbody::cpu::tree
