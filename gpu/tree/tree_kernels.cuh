#pragma once
// What the GPU tree's kernels share: the device layout of the tree and the launches of each phase,
// enqueued on one stream (gpu/tree/*.cu). Internal to nbody_gpu_tree.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "nbody/bodies.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/morton_keys.hpp"
#include "nbody/multipole_physics.hpp"
#include "nbody/octree_levels.hpp"

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
  unsigned int cells = 0;  // emitted by the build: more than its capacity, and it runs again
  unsigned int leaves = 0;
  unsigned int depth = 0;
  // The cells of level L are [level_first[L], level_first[L + 1]), L <= depth.
  unsigned int level_first[kDeepestLevel + 2] = {};
  unsigned int groups = 0;
  unsigned int walks = 0;      // written by the selection of the walks, or their appending
  unsigned int next_walk = 0;  // the walks' work queue
  unsigned int stack_overflow = 0;
  // Runs of more than kMaxKeyRun keys sharing their sorted high bits: the sort by halves left
  // them, and the keys must be sorted whole.
  unsigned int long_key_runs = 0;
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

// Few keys (up to kRankSortCapacity) are sorted by ranking each against all the others: spread
// over the SMs, n^2 comparisons cost less than the device-wide sort's passes, or one block's
// (measured on the H100: docs/perf-notes.md, "Tree codes").

// keys, indices = unsorted_keys and 0 .. n - 1 sorted by key (stable: equal keys by index), and
// sorted[k] = input[indices[k]]; n <= kRankSortCapacity.
template <class T>
void enqueue_rank_sort(const std::uint64_t* unsorted_keys, const Body<T>* input, std::uint32_t n,
                       std::uint64_t* keys, std::uint32_t* indices, Body<T>* sorted,
                       cudaStream_t stream);

// sorted[k] = input[sorted_index[k]].
template <class T>
void enqueue_gather(const Body<T>* input, const std::uint32_t* sorted_index, std::uint32_t n,
                    Body<T>* sorted, cudaStream_t stream);

// The sort by halves: the radix sort's passes over the keys' 32 high bits alone (four of its
// eight; 10 2/3 levels, deeper than a tree of 1M Plummer bodies reaches, so that the keys sharing
// them are a leaf's few), then each run of keys sharing those bits ordered by the rest in place.
inline constexpr int kUnsortedLowKeyBits = kMortonKeyBits - 32;
inline constexpr std::uint32_t kMaxKeyRun = 64;

// The keys and indices, sorted by their high bits (stable), put in full order (by key, equal keys
// by index), every run of keys sharing their high bits of up to kMaxKeyRun by a thread of its
// own, and sorted[k] = input[indices[k]]; a longer run counted in counters->long_key_runs and
// left in the radix sort's order (its bodies gathered all the same).
template <class T>
void enqueue_sort_key_runs_and_gather(std::uint64_t* keys, std::uint32_t* indices,
                                      const Body<T>* input, std::uint32_t n, Body<T>* sorted,
                                      TreeCounters* counters, cudaStream_t stream);

// The levels 0 .. kDeepestLevel, and the unused slots' 31 past them, in 5 bits.
inline constexpr int kLevelBits = 5;

// The cells' build: each body's cells emitted into slots (bodies in order, each one's levels in
// order), up to `capacity` of them, sorted by level (stable) into the breadth-first order.
struct CellBuildScratch {
  std::uint32_t capacity = 0;
  std::uint32_t* counts = nullptr;            // n: the cells each body begins
  std::uint32_t* inclusive_counts = nullptr;  // n
  GpuCell* emitted = nullptr;                 // capacity
  std::uint8_t* emitted_levels = nullptr;     // capacity
  std::uint8_t* sorted_levels = nullptr;      // capacity
  std::uint32_t* emitted_slots = nullptr;     // capacity
  std::uint32_t* sorted_slots = nullptr;      // capacity: the slot of each place
  std::uint32_t* place_of_slot = nullptr;     // capacity
  void* cub_scratch = nullptr;
  std::size_t cub_bytes = 0;  // cell_build_cub_bytes
};

// CUB's temporary bytes for enqueue_cells.
std::size_t cell_build_cub_bytes(std::uint32_t n, std::uint32_t capacity);

// The cells of the n >= 1 sorted keys, breadth first (the CPU's order), each with its first child
// and child count: counters->cells of them, counted in full even where they overflow
// scratch.capacity (and then only those that fit are written); counters->leaves, depth and
// level_first where they fit; parents[c], the parent of every cell c but the root.
void enqueue_cells(const std::uint64_t* keys, std::uint32_t n, std::uint32_t leaf_capacity,
                   const CellBuildScratch& scratch, GpuCell* cells, std::uint32_t* parents,
                   TreeCounters* counters, cudaStream_t stream);

// The targets of one walk: a group's, kTargetsPerWalk at most (eight a lane in each quarter of
// a warp where a warp walks alone, four in each half where a team walks).
// A group of more than a walk's targets is walked for each of its runs of that many bodies, by as
// many warps or teams, each from the whole group's box (so with the lists the CPU's one walk of
// the group makes).
inline constexpr std::uint32_t kTargetsPerWalk = 64;

// A walk: its targets [first_target, end_target), and its group: the sibling cells [first_cell,
// first_cell + cell_count), as the CPU's TargetGroup. An entry never written has first_target
// kNoWalk.
struct WalkItem {
  std::uint32_t first_target;
  std::uint32_t end_target;
  std::uint32_t first_cell;
  std::uint32_t cell_count;
};

// How a group's bodies are cut into walks: runs of `targets`, or of `shallow_targets` for a group
// whose cells sit at a level below `shallow_levels` (the sparse outskirts' long walks, spread over
// more teams; 0: none). At most kTargetsPerWalk each.
struct WalkRuns {
  std::uint32_t targets = kTargetsPerWalk;
  std::uint32_t shallow_levels = 0;
  std::uint32_t shallow_targets = kTargetsPerWalk;
};
inline constexpr std::uint32_t kNoWalk = ~std::uint32_t{0};

// walk_heads[b] = the walk whose first target is sorted body b (others untouched), for the groups
// of nbody/tree_groups.hpp, as the CPU's collect_groups_below chooses them (counted in
// counters->groups), of the counters->cells cells, a walk for each run of targets_per_walk
// (at most kTargetsPerWalk) of a group's bodies; none where the cells overflowed `capacity`.
void enqueue_walk_heads(const GpuCell* cells, std::uint32_t capacity, std::uint32_t group_capacity,
                        std::uint32_t targets_per_walk, WalkItem* walk_heads,
                        TreeCounters* counters, cudaStream_t stream);

// The same groups, their walks cut as `runs` says, written to walks[0, counters->walks) (zeroed
// before) in about the cells' order, breadth first: the shallowest groups' walks first.
void enqueue_appended_walks(const GpuCell* cells, std::uint32_t capacity,
                            std::uint32_t group_capacity, const WalkRuns& runs, WalkItem* walks,
                            TreeCounters* counters, cudaStream_t stream);

// The criterion's view of a cell, float64: its centre of mass and b_max.
struct alignas(32) CellCriterion {
  double x, y, z, b_max;
};

// The upward pass's launch: `blocks` blocks (at most moments_blocks) of one cooperative launch,
// each cell computed by a team of `lanes` lanes (1, 4 or 8); or, where climbing_blocks > 0, that
// many blocks of a thread a leaf, each climbing on to the cells it completes.
struct MomentsLaunch {
  int lanes = 1;
  int blocks = 1;
  int climbing_blocks = 0;
};

// The moments of the counters->cells cells, with their criterion data and their multipoles
// rounded to T: in one cooperative launch, every leaf from its bodies, then each level's other
// cells from their children, the deepest first; or climbing, each cell computed by the thread
// that completes its children (parents from the build, arrivals `capacity` counters zeroed here).
// Nothing where the cells overflowed `capacity`.
template <class T>
void enqueue_moments(const GpuCell* cells, std::uint32_t capacity, const Body<T>* sorted,
                     const std::uint64_t* keys, const BoundingCube* cube, double softening_squared,
                     const TreeCounters* counters, const std::uint32_t* parents, unsigned* arrivals,
                     CellMoments* moments, CellCriterion* criterion, CellMultipole<T>* multipoles,
                     const MomentsLaunch& launch, cudaStream_t stream);

// The most blocks of the moments' launch: one an SM.
template <class T>
int moments_blocks(int device);
inline constexpr int kMomentsThreads = 256;
// The climbing launch's block: smaller blocks fill an SM's registers closer to the full.
inline constexpr int kClimbingThreads = 128;

// Warps of a block where each walks alone.
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
  std::uint32_t cell_capacity;  // of the cells' buffers
};

// The persistent walk kernel's launch: teams of `members` warps (1, 2, 4, 8 or 16) walk each group
// together, as many blocks as the device holds at once.
struct TraversalLaunch {
  int members = 1;
  int blocks = 0;
  int warps_per_block = 0;
};

template <class T>
TraversalLaunch traversal_launch(int device, int members);

template <class T>
void enqueue_traversal(const TraversalArgs<T>& args, const TraversalLaunch& launch,
                       cudaStream_t stream);

}  // namespace nbody::gpu::tree::detail
