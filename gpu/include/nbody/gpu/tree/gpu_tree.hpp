#pragma once
// The GPU Barnes-Hut core: every phase of a force evaluation on the device (bounding cube, Morton
// keys, radix sort, cells read from the sorted keys, the upward pass of the moments, a team of
// warps walking each group of targets). It builds the tree the CPU core builds
// (nbody/cpu/tree/octree.hpp: the same keys, cells, groups and float64 moments, to the bit) and
// applies the same criterion, so it counts the same interactions; the interactions run in T with
// the GPU's rsqrt (nbody/gpu/device_math.cuh). Host-only: no CUDA type crosses this header.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/tree_groups.hpp"

namespace nbody::gpu::tree {

// What the GPU tree computes in float64 whatever the bodies' precision (as the CPU tree's
// nbody/cpu/tree/precision.hpp names it).
inline constexpr std::string_view kGpuTreeFloat64Parts =
    "bounding cube of the Morton keys, cell moments (mass, centre of mass, quadrupole, b_max) and "
    "the opening criterion in float64; interactions and acceleration sums in the bodies' precision";

// How the GPU tree sorts its Morton keys; every way gives the same order (by key, equal keys by
// input index). rank: each key counted against all the others (at most 4096 keys); merge: CUB's
// stable merge sort; radix: CUB's radix sort over all 63 bits (8 passes); radix_by_halves: its
// passes over the 32 high bits, then each run of keys sharing them sorted by the rest, unless a
// run is longer than 64 keys (then that evaluation runs again, and every later one, by radix).
enum class GpuKeySort { by_n, rank, merge, radix, radix_by_halves };

// The most keys the rank sort takes (one block holds them all in shared memory).
inline constexpr std::uint32_t kRankSortCapacity = 4096;

// The order in which the walks are queued for the SMs; every order gives the same accelerations to
// the bit (each walk's lists are its own). targets: their targets' sorted order, so that the walks
// running at once share most of their cells; shallowest_first: appended as the cells are read,
// breadth first (a warp's cells' walks together, the warps in the order they reserve their
// places), so that the shallowest groups' walks, those of the sparse outskirts whose large boxes
// open most of the tree, start first rather than hold up the launch at its end; it also saves
// the selection's launches.
enum class GpuWalkOrder { by_n, targets, shallowest_first };

struct GpuTreeSettings {
  // A cell with more bodies than this is split, unless it is at the deepest level.
  std::size_t leaf_capacity = kDefaultLeafCapacity;
  // The targets that share one walk: runs of sibling cells of at most this many bodies together,
  // or a leaf holding more (nbody/tree_groups.hpp, as the CPU tree's).
  std::size_t group_capacity = kDefaultGroupCapacity;
  int gpu_device = 0;  // CUDA ordinal
  // The warps that walk each group together, sharing its cells' tests and each evaluating what it
  // lists: 1, 2, 4, 8 or 16; 0 chooses by the body count.
  int warps_per_walk = 0;
  // The lanes that compute each cell's moments together in the upward pass: 1, 4 or 8; 0 chooses
  // by the body count.
  int moments_lanes = 0;
  // The targets a walk takes at most: a group of more is walked for each run of this many of its
  // bodies, each walk from the whole group's box (so the same lists, and the same accelerations
  // to the bit, at every run length): 8, 16, 32 or 64; 0 chooses by the body count.
  int targets_per_walk = 0;
  // by_n: rank up to kRankSortCapacity bodies, merge up to 32K, radix_by_halves above.
  GpuKeySort key_sort = GpuKeySort::by_n;
  // by_n: shallowest_first up to 128K bodies, targets above.
  GpuWalkOrder walk_order = GpuWalkOrder::by_n;
  // Where the walks are queued shallowest first, a group whose cells sit at a level below this one
  // is walked in runs of shallow_group_targets (8, 16, 32 or 64) of its bodies, each from the whole
  // group's box as every walk: its long walk spread over more teams. 0: none; -1: 4 above 32K
  // bodies (up to 128K, where the walks are so queued), none below.
  int shallow_group_levels = -1;
  int shallow_group_targets = 16;
};

// The order of the walks an evaluator of n bodies with `settings` queues them in (never by_n).
GpuWalkOrder walk_order_for(std::size_t n, const GpuTreeSettings& settings);

// Device seconds of each phase, from CUDA events.
struct GpuTreeSeconds {
  double keys = 0;       // bounding cube and Morton keys
  double sort = 0;       // radix sort of the keys, and gathering the bodies in that order
  double build = 0;      // the cells from the sorted keys, and the target groups
  double moments = 0;    // the upward pass, with the rounding of the moments to T
  double traversal = 0;  // the walks and the interactions
  double build_total() const { return keys + sort + build + moments; }
  double total() const { return build_total() + traversal; }
};

// Counted on the device as the CPU tree counts them: per group, targets x listed bodies and
// targets x accepted cells. At theta = 0: body_body = N^2 (j = i included), body_cell = 0.
struct GpuInteractionCounts {
  std::uint64_t body_body = 0;
  std::uint64_t body_cell = 0;
  std::uint64_t total() const { return body_body + body_cell; }
};

struct GpuTreeShape {
  std::size_t cells = 0;
  std::size_t leaves = 0;
  std::size_t groups = 0;  // walks of the tree
  int depth = 0;           // the deepest level (the root is level 0)
};

struct GpuTreeResult {
  GpuTreeSeconds seconds;
  GpuInteractionCounts interactions;
  GpuTreeShape shape;
};

// Why the tree cannot run on CUDA device `ordinal`, or nothing where it can.
std::optional<std::string> gpu_tree_unavailable_reason(int ordinal);

// Owns the device buffers of one body count. Not thread-safe; move-only.
template <class T>
class GpuTreeEvaluator {
 public:
  // Throws std::invalid_argument for a leaf or group capacity of 0, warps_per_walk other than 0,
  // 1, 2, 4, 8 or 16, moments_lanes other than 0, 1, 4 or 8, the rank sort for more than 4096
  // bodies, or n >= 2^32 - 1, and
  // nbody::gpu::CudaError where the device cannot be used.
  GpuTreeEvaluator(std::size_t n, const GpuTreeSettings& settings = {});
  ~GpuTreeEvaluator();
  GpuTreeEvaluator(GpuTreeEvaluator&&) noexcept;
  GpuTreeEvaluator& operator=(GpuTreeEvaluator&&) noexcept;
  GpuTreeEvaluator(const GpuTreeEvaluator&) = delete;
  GpuTreeEvaluator& operator=(const GpuTreeEvaluator&) = delete;

  std::size_t size() const;

  // Rounds the bodies to T and uploads them (outside any timing). Throws std::invalid_argument
  // unless bodies.size() == size().
  void set_bodies(std::span<const Body<double>> bodies);

  // The accelerations of every body from all of them, by the tree at opening parameter theta in
  // [0, 1] (0: every cell opened, the all-pairs sum), every phase on the device. Throws
  // std::invalid_argument for theta outside [0, 1] or a softening below kSmallestSoftening.
  GpuTreeResult evaluate(double theta, double softening);

  // The last evaluation's accelerations, in the input order, promoted from T.
  std::vector<Vec3<double>> accelerations() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

extern template class GpuTreeEvaluator<float>;
extern template class GpuTreeEvaluator<double>;

}  // namespace nbody::gpu::tree
