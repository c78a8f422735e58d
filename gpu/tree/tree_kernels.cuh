#pragma once
// What the GPU tree's kernels share: the device layout of the tree and the launches of each phase,
// enqueued on one stream (gpu/tree/*.cu). Internal to nbody_gpu_tree.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "nbody/bodies.hpp"
#include "nbody/morton_keys.hpp"
#include "nbody/multipole_physics.hpp"

namespace nbody::gpu::tree::detail {

// One cell, as the CPU tree's Cell: bodies [begin, end) of the sorted order, children
// [first_child, first_child + child_count) (0: a leaf), level (the root is 0).
struct GpuCell {
  std::uint32_t begin = 0, end = 0;
  std::uint32_t first_child = 0;
  std::uint8_t child_count = 0;
  std::uint8_t level = 0;
};

// What the device counts during one evaluation: zeroed before it starts.
struct TreeCounters {
  unsigned long long body_body = 0;
  unsigned long long body_cell = 0;
  unsigned int leaves = 0;
  unsigned int groups = 0;
  unsigned int walks = 0;      // written by the selection of the walks
  unsigned int next_walk = 0;  // the walks' work queue
  unsigned int stack_overflow = 0;
};

// The lowest and highest coordinates of a part of the bodies, in float64.
struct BoundsPartial {
  double low[3];
  double high[3];
};

inline constexpr int kBoundsThreads = 256;
inline constexpr int kMaxBoundsBlocks = 512;

// Bounding cube (into `cube`, on the device) of n >= 1 bodies, as the CPU's bounding_cube.
template <class T>
void enqueue_bounding_cube(const Body<T>* bodies, std::uint32_t n, BoundsPartial* partials,
                           BoundingCube* cube, cudaStream_t stream);

// keys[i] = Morton key of body i in *cube; indices[i] = i.
template <class T>
void enqueue_morton_keys(const Body<T>* bodies, std::uint32_t n, const BoundingCube* cube,
                         std::uint64_t* keys, std::uint32_t* indices, cudaStream_t stream);

// sorted[k] = input[sorted_index[k]].
template <class T>
void enqueue_gather(const Body<T>* input, const std::uint32_t* sorted_index, std::uint32_t n,
                    Body<T>* sorted, cudaStream_t stream);

// For the cells [first, first + count) (one level): octant_bounds[9 i .. 9 i + 8] of each cell
// that splits and child_counts[i], its non-empty octants (0 for a leaf, counted in leaves).
void enqueue_split_count(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                         const std::uint64_t* keys, std::uint32_t leaf_capacity,
                         std::uint32_t* octant_bounds, std::uint32_t* child_counts,
                         TreeCounters* counters, cudaStream_t stream);

// Appends the children of the level's cells from `next_cell` on, in the parents' order and each
// parent's in octant order (inclusive_offsets: the inclusive scan of child_counts), and sets each
// parent's first_child and child_count.
void enqueue_split_write(GpuCell* cells, std::uint32_t first, std::uint32_t count,
                         const std::uint32_t* octant_bounds, const std::uint32_t* child_counts,
                         const std::uint32_t* inclusive_offsets, std::uint32_t next_cell,
                         cudaStream_t stream);

// The targets of one walk: a group's, kTargetsPerWalk at most (two a lane). A group of more is
// walked for each of its runs of kTargetsPerWalk bodies, by as many warps, each from the whole
// group's box (so with the lists the CPU's one walk of the group makes).
inline constexpr std::uint32_t kTargetsPerWalk = 64;

// A walk: its first target, and its group: the sibling cells [first_cell, first_cell +
// cell_count), as the CPU's TargetGroup. An entry never written has first_target kNoWalk.
struct WalkItem {
  std::uint32_t first_target;
  std::uint32_t first_cell;
  std::uint32_t cell_count;
};
inline constexpr std::uint32_t kNoWalk = ~std::uint32_t{0};

// walk_heads[b] = the walk whose first target is sorted body b (others untouched), for the groups
// of nbody/tree_groups.hpp, as the CPU's collect_groups_below chooses them (counted in
// counters->groups).
void enqueue_walk_heads(const GpuCell* cells, std::uint32_t cell_count,
                        std::uint32_t group_capacity, WalkItem* walk_heads, TreeCounters* counters,
                        cudaStream_t stream);

// The criterion's view of a cell, float64: its centre of mass and b_max.
struct alignas(32) CellCriterion {
  double x, y, z, b_max;
};

// The moments of the cells [first, first + count) (one level; the level below is done), with
// their criterion data and their multipoles rounded to T.
template <class T>
void enqueue_level_moments(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                           const Body<T>* sorted, const std::uint64_t* keys,
                           const BoundingCube* cube, double softening_squared, CellMoments* moments,
                           CellCriterion* criterion, CellMultipole<T>* multipoles,
                           cudaStream_t stream);

inline constexpr int kTraversalWarpsPerBlock = 4;
// Cells waiting to be tested, per warp: a walk pops up to 32 and pushes at most 8 for each, so
// it holds about 224 a level at most; an overflow is reported, never written past.
inline constexpr std::uint32_t kTraversalStackCapacity = 8192;

template <class T>
struct TraversalArgs {
  const GpuCell* cells;
  const CellCriterion* criterion;
  const CellMoments* moments;  // the groups' boxes
  const CellMultipole<T>* multipoles;
  const Body<T>* sorted;
  const std::uint32_t* input_index;
  const WalkItem* walks;
  std::uint32_t* stacks;  // kTraversalStackCapacity per warp of the grid
  double theta_squared;
  T softening_squared;
  Vec3<T>* accelerations;  // in the input order
  TreeCounters* counters;
};

// Blocks of the persistent walk kernel: as many as the device holds at once.
template <class T>
int traversal_blocks(int device);

template <class T>
void enqueue_traversal(const TraversalArgs<T>& args, int blocks, cudaStream_t stream);

}  // namespace nbody::gpu::tree::detail
