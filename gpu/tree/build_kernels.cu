// The GPU tree's build: the bounding cube, the Morton keys, the sorted bodies and the cells, read
// from the sorted keys body by body (nbody/octree_levels.hpp) in a fixed number of launches with
// nothing read back: the CPU tree's cells in the same order (breadth first, by first body).
#include <algorithm>
#include <cfloat>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/octree_levels.hpp"
#include "nbody/tree_groups.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

__device__ BoundsPartial empty_bounds() {
  return {{DBL_MAX, DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX, -DBL_MAX}};
}

__device__ void fold(BoundsPartial& into, const BoundsPartial& other) {
  for (int axis = 0; axis < 3; ++axis) {
    into.low[axis] = fmin(into.low[axis], other.low[axis]);
    into.high[axis] = fmax(into.high[axis], other.high[axis]);
  }
}

// The bounds of the whole block (valid in thread 0).
__device__ BoundsPartial reduce_block(BoundsPartial local) {
  __shared__ BoundsPartial per_warp[kBoundsThreads / 32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    BoundsPartial other;
    for (int axis = 0; axis < 3; ++axis) {
      other.low[axis] = __shfl_down_sync(kFullMask, local.low[axis], offset);
      other.high[axis] = __shfl_down_sync(kFullMask, local.high[axis], offset);
    }
    fold(local, other);
  }
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) per_warp[warp] = local;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBoundsThreads / 32; ++w) fold(local, per_warp[w]);
  }
  return local;
}

template <class T>
__global__ void __launch_bounds__(kBoundsThreads)
    bounds_partials_kernel(const Body<T>* bodies, std::uint32_t n, BoundsPartial* partials) {
  BoundsPartial local = empty_bounds();
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const Body<T> b = bodies[i];
    fold(local, BoundsPartial{{double(b.x), double(b.y), double(b.z)},
                              {double(b.x), double(b.y), double(b.z)}});
  }
  local = reduce_block(local);
  if (threadIdx.x == 0) partials[blockIdx.x] = local;
}

// The cube as bounding_cube (nbody/cpu/tree/morton.hpp) makes it: anchored at the lowest
// coordinates, its side the largest extent, 1 where every body sits at one point.
__global__ void __launch_bounds__(kBoundsThreads)
    finalize_cube_kernel(const BoundsPartial* partials, int count, BoundingCube* cube) {
  BoundsPartial local = empty_bounds();
  for (int i = threadIdx.x; i < count; i += blockDim.x) fold(local, partials[i]);
  local = reduce_block(local);
  if (threadIdx.x != 0) return;
  double extent = local.high[0] - local.low[0];
  for (int axis = 1; axis < 3; ++axis) {
    const double e = local.high[axis] - local.low[axis];
    if (extent < e) extent = e;
  }
  *cube = {local.low[0], local.low[1], local.low[2], extent > 0 ? extent : 1};
}

template <class T>
__global__ void morton_keys_kernel(const Body<T>* bodies, std::uint32_t n, const BoundingCube* cube,
                                   std::uint64_t* keys, std::uint32_t* indices) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Body<T> b = bodies[i];
  keys[i] = morton_key_of(b.x, b.y, b.z, *cube);
  indices[i] = i;
}

// The rank sort: a block ranks 32 keys, each of its warps against a share of all n (staged in
// shared memory), and the key with rank r lands at r with its index and its body.
constexpr int kRankSortWarps = 8;
constexpr int kRankedPerBlock = 32;

template <class T>
__global__ void __launch_bounds__(kRankSortWarps * 32)
    rank_sort_kernel(const std::uint64_t* unsorted_keys, const Body<T>* input, std::uint32_t n,
                     std::uint64_t* keys, std::uint32_t* indices, Body<T>* sorted) {
  __shared__ std::uint64_t all[kRankSortCapacity];
  __shared__ std::uint32_t partial[kRankSortWarps][kRankedPerBlock];
  for (std::uint32_t j = threadIdx.x; j < n; j += blockDim.x) all[j] = unsorted_keys[j];
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const std::uint32_t i = blockIdx.x * kRankedPerBlock + lane;
  const std::uint64_t key = i < n ? all[i] : 0;
  const std::uint32_t share = (n + kRankSortWarps - 1) / kRankSortWarps;
  const std::uint32_t from = min(n, warp * share);
  const std::uint32_t to = min(n, from + share);
  std::uint32_t rank = 0;
#pragma unroll 8
  for (std::uint32_t j = from; j < to; ++j) {
    const std::uint64_t other = all[j];
    rank += (other < key || (other == key && j < i)) ? 1u : 0u;
  }
  partial[warp][lane] = rank;
  __syncthreads();
  if (warp != 0 || i >= n) return;
  for (int w = 1; w < kRankSortWarps; ++w) rank += partial[w][lane];
  keys[rank] = key;
  indices[rank] = i;
  sorted[rank] = input[i];
}

template <class T>
__global__ void gather_kernel(const Body<T>* input, const std::uint32_t* sorted_index,
                              std::uint32_t n, Body<T>* sorted) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) sorted[k] = input[sorted_index[k]];
}

// Keys sorted by their high bits alone (stable: a run of keys sharing them in input order) put in
// full order run by run, each run by the thread at its start, which then gathers its bodies: an
// insertion sort, stable, so that equal keys keep their input order as the whole sort keeps it.
// A run of more than kMaxKeyRun keys is counted and left in input order (the sort must then take
// every bit, and the evaluation runs again), its bodies gathered all the same, so that the
// evaluation it runs before then meets only bodies of the input: its first kMaxKeyRun + 1 by the
// thread at its start, each later one by its own thread.
template <class T>
__global__ void sort_key_runs_and_gather_kernel(std::uint64_t* keys, std::uint32_t* indices,
                                                const Body<T>* input, std::uint32_t n,
                                                Body<T>* sorted, unsigned* long_runs) {
  const std::uint32_t first = blockIdx.x * blockDim.x + threadIdx.x;
  if (first >= n) return;
  const auto high_of = [&](std::uint32_t k) { return keys[k] >> kUnsortedLowKeyBits; };
  const std::uint64_t high = high_of(first);
  if (first > 0 && high_of(first - 1) == high) {
    // A key of a run: a long run's beyond its first kMaxKeyRun + 1 gathers its own body.
    if (first > kMaxKeyRun && high_of(first - kMaxKeyRun - 1) == high) {
      sorted[first] = input[indices[first]];
    }
    return;
  }
  std::uint32_t end = first + 1;
  while (end < n && end - first <= kMaxKeyRun && high_of(end) == high) ++end;
  if (end - first > kMaxKeyRun) {
    atomicAdd(long_runs, 1u);
  } else {
    for (std::uint32_t j = first + 1; j < end; ++j) {
      const std::uint64_t key = keys[j];
      const std::uint32_t index = indices[j];
      std::uint32_t k = j;
      for (; k > first && keys[k - 1] > key; --k) {
        keys[k] = keys[k - 1];
        indices[k] = indices[k - 1];
      }
      keys[k] = key;
      indices[k] = index;
    }
  }
  for (std::uint32_t k = first; k < end; ++k) sorted[k] = input[indices[k]];
}

// One cell emitted by a body (nbody/octree_levels.hpp): slot `slot` of the emission order.
__device__ void emit_cell(std::uint32_t slot, std::uint32_t begin, std::uint32_t end, int level,
                          const CellBuildScratch& scratch) {
  scratch.emitted[slot] = GpuCell{begin, end, 0, 0, static_cast<std::uint8_t>(level)};
  scratch.emitted_levels[slot] = static_cast<std::uint8_t>(level);
  scratch.emitted_slots[slot] = slot;
}

// Leaf capacities up to which a block reads the shared bits of its windows from shared memory.
constexpr std::uint32_t kMostTiledLeafCapacity = 4096;

// counts[i] = the cells sorted body i begins: from its first level begun to its leaf's level.
// leaf_level_of_body's windows overlap: the bits the keys a and a + capacity share serve each body
// from a to a + capacity, so (up to kMostTiledLeafCapacity) the block computes each pair's once,
// into `window_bits` (blockDim.x + capacity of them), and each body takes the most of its
// capacity + 1: the same level, from two loads a body where it took 2 (capacity + 1).
__global__ void cell_counts_kernel(const std::uint64_t* keys, std::uint32_t n,
                                   std::uint32_t leaf_capacity, std::uint32_t* counts) {
  extern __shared__ int window_bits[];
  const std::uint32_t block_first = blockIdx.x * blockDim.x;
  const std::uint32_t i = block_first + threadIdx.x;
  const bool tiled = leaf_capacity <= kMostTiledLeafCapacity;
  if (tiled) {
    // window_bits[j]: pair a = block_first - capacity + j, -1 (none) outside [0, n - 1 - capacity].
    for (std::uint32_t j = threadIdx.x; j < blockDim.x + leaf_capacity; j += blockDim.x) {
      const std::int64_t a = std::int64_t{block_first} - leaf_capacity + j;
      const bool pair = a >= 0 && a + leaf_capacity < n;
      window_bits[j] = pair ? shared_key_bits(keys[a], keys[a + leaf_capacity]) : -1;
    }
    __syncthreads();
  }
  if (i >= n) return;
  int leaf = 0;
  if (!tiled) {
    leaf = leaf_level_of_body(keys, n, i, leaf_capacity);
  } else if (n > leaf_capacity) {
    int shared = -1;
    for (std::uint32_t j = threadIdx.x; j <= threadIdx.x + leaf_capacity; ++j) {
      shared = max(shared, window_bits[j]);
    }
    leaf = leaf_level_of_shared_bits(shared);
  }
  const int first = first_level_begun(keys, i);
  counts[i] = leaf >= first ? static_cast<std::uint32_t>(leaf - first + 1) : 0u;
}

// cell_end (nbody/octree_levels.hpp) found by a whole warp: 32 probes a step, from steps of 1
// growing 32-fold, then shrinking 32-fold, so that a cell of S bodies takes about 2 log32 S
// dependent loads rather than 2 log2 S (the first body's chain of cells from the root, one after
// another, made the emission wait on it: docs/perf-notes.md, "Tree codes"). Called by the whole
// warp alike.
__device__ std::uint32_t warp_cell_end(const std::uint64_t* keys, std::uint32_t n,
                                       std::uint32_t begin, int level, int lane) {
  if (level == 0) return n;
  const int dropped = kMortonKeyBits - 3 * level;
  const std::uint64_t prefix = keys[begin] >> dropped;
  // Probes at inside + (lane + 1) step: those inside the cell are the lanes below the first
  // outside one, the keys being sorted.
  const auto inside_probes = [&](std::uint64_t inside, std::uint64_t step, std::uint64_t limit) {
    const std::uint64_t probe = inside + (static_cast<std::uint64_t>(lane) + 1) * step;
    const bool in = probe < limit && (keys[probe] >> dropped) == prefix;
    return static_cast<std::uint64_t>(__popc(__ballot_sync(kFullMask, in)));
  };
  std::uint64_t inside = begin;  // the last body known to be inside
  std::uint64_t outside = n;     // the first body known to be outside (or n)
  for (std::uint64_t step = 1;; step *= 32) {
    const std::uint64_t in = inside_probes(inside, step, n);
    if (in < 32) {
      outside = min(outside, inside + (in + 1) * step);
      inside += in * step;
      break;
    }
    inside += 32 * step;
  }
  while (outside - inside > 1) {
    const std::uint64_t step = (outside - inside + 31) / 32;
    const std::uint64_t in = inside_probes(inside, step, outside);
    outside = min(outside, inside + (in + 1) * step);
    inside += in * step;
  }
  return static_cast<std::uint32_t>(outside);
}

// The end of the cell of level `level` that begins at sorted body `begin`, as cell_end finds it,
// where the cell holds at most kLaneSearchedBodies bodies; 0 where it holds more.
constexpr std::uint32_t kLaneSearchedBodies = 32;

__device__ std::uint32_t small_cell_end(const std::uint64_t* keys, std::uint32_t n,
                                        std::uint32_t begin, int level) {
  if (level == 0) return n > kLaneSearchedBodies ? 0 : n;
  const std::uint32_t last = begin + kLaneSearchedBodies;  // past the cell where it is small
  const int dropped = kMortonKeyBits - 3 * level;
  if (last < n && (keys[last] >> dropped) == (keys[begin] >> dropped)) return 0;
  return cell_end(keys, min(last, n), begin, level);
}

// Each body's cells in the emission order (bodies in order, each one's levels in order), as many
// as the scratch holds; the count of them all in counters->cells. Each lane searches the ends of
// its body's cells of up to kLaneSearchedBodies bodies; the warp then searches each larger one's
// together (a body's chain of large cells, one search after another, made the emission wait on
// the first bodies of the largest cells: docs/perf-notes.md, "Tree codes").
__global__ void emit_cells_kernel(const std::uint64_t* keys, std::uint32_t n,
                                  const std::uint32_t* inclusive_counts, CellBuildScratch scratch,
                                  TreeCounters* counters) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x % 32);
  std::uint32_t count = 0, first_slot = 0;
  int first = 0;
  unsigned large = 0;  // bit k: the body's cell k holds more than kLaneSearchedBodies
  if (i < n) {
    if (i == n - 1) counters->cells = inclusive_counts[i];
    count = inclusive_counts[i] - (i == 0 ? 0 : inclusive_counts[i - 1]);
    first = first_level_begun(keys, i);
    first_slot = inclusive_counts[i] - count;
  }
  for (std::uint32_t k = 0; k < count && first_slot + k < scratch.capacity; ++k) {
    const int level = first + static_cast<int>(k);
    const std::uint32_t end = small_cell_end(keys, n, i, level);
    if (end == 0) {
      large |= 1u << k;
    } else {
      emit_cell(first_slot + k, i, end, level, scratch);
    }
  }
  for (unsigned owners = __ballot_sync(kFullMask, large != 0); owners != 0; owners &= owners - 1) {
    const int owner = __ffs(owners) - 1;
    const std::uint32_t body = __shfl_sync(kFullMask, i, owner);
    const int body_first = __shfl_sync(kFullMask, first, owner);
    const std::uint32_t body_slot = __shfl_sync(kFullMask, first_slot, owner);
    for (unsigned cells = __shfl_sync(kFullMask, large, owner); cells != 0; cells &= cells - 1) {
      const int k = __ffs(cells) - 1;
      const std::uint32_t end = warp_cell_end(keys, n, body, body_first + k, lane);
      if (lane == 0) emit_cell(body_slot + k, body, end, body_first + k, scratch);
    }
  }
}

// cells[c] = the emitted cell sorted to place c (by level, stable), and where each went.
__global__ void place_cells_kernel(CellBuildScratch scratch, std::uint32_t leaf_capacity,
                                   GpuCell* cells, TreeCounters* counters) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t total = min(counters->cells, scratch.capacity);
  const bool placed = c < total;
  bool leaf = false;
  if (placed) {
    const std::uint32_t slot = scratch.sorted_slots[c];
    const GpuCell cell = scratch.emitted[slot];
    cells[c] = cell;
    scratch.place_of_slot[slot] = c;
    leaf = cell.end - cell.begin <= leaf_capacity || cell.level >= kDeepestLevel;
    if (c == 0 || scratch.sorted_levels[c - 1] != cell.level) counters->level_first[cell.level] = c;
    if (c == total - 1) {
      counters->depth = cell.level;
      counters->level_first[cell.level + 1] = total;
    }
  }
  const unsigned leaves = __ballot_sync(kFullMask, leaf);
  if (threadIdx.x % 32 == 0 && leaves != 0) atomicAdd(&counters->leaves, __popc(leaves));
}

// A cell that begins at its parent's first body (its body emitted the parent one level up, the
// slot before its own) is the first child: it links its parent to itself and to its siblings,
// which follow it at its level while they begin within the parent, and them to their parent.
__global__ void link_cells_kernel(CellBuildScratch scratch, GpuCell* cells, std::uint32_t* parents,
                                  const TreeCounters* counters) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t total = min(counters->cells, scratch.capacity);
  if (c >= total) return;
  const std::uint32_t slot = scratch.sorted_slots[c];
  if (slot == 0) return;
  const GpuCell cell = scratch.emitted[slot];
  const GpuCell before = scratch.emitted[slot - 1];
  if (before.begin != cell.begin) return;
  const std::uint32_t parent = scratch.place_of_slot[slot - 1];
  std::uint32_t siblings = 1;
  while (c + siblings < total && cells[c + siblings].level == cell.level &&
         cells[c + siblings].begin < before.end) {
    ++siblings;
  }
  cells[parent].first_child = c;
  cells[parent].child_count = static_cast<std::uint8_t>(siblings);
  for (std::uint32_t k = 0; k < siblings; ++k) parents[c + k] = parent;
}

__device__ bool can_be_group(const GpuCell& cell, std::uint32_t group_capacity) {
  return can_be_target_group(cell.end - cell.begin, cell.child_count == 0, group_capacity);
}

// The walks of the group of sibling cells [first_cell, first_cell + cell_count), one per run of
// `run` of its bodies: each given to emit(index, walk), index counting from 0.
template <class Emit>
__device__ std::uint32_t group_walks(const GpuCell* cells, std::uint32_t first_cell,
                                     std::uint32_t cell_count, std::uint32_t run, Emit&& emit) {
  const std::uint32_t begin = cells[first_cell].begin;
  const std::uint32_t end = cells[first_cell + cell_count - 1].end;
  std::uint32_t k = 0;
  for (std::uint32_t b = begin; b < end; b += run, ++k) {
    emit(k, WalkItem{b, min(b + run, end), first_cell, cell_count});
  }
  return k;
}

__device__ std::uint32_t run_of(const GpuCell* cells, std::uint32_t first_cell,
                                const WalkRuns& runs) {
  return cells[first_cell].level < runs.shallow_levels ? runs.shallow_targets : runs.targets;
}

// The groups just below cell c that cannot be one (nbody/tree_groups.hpp): runs of its children
// that can be; the root alone when it can be one. Each is given to visit(first_cell, cell_count).
template <class Visit>
__device__ void visit_groups_below(const GpuCell* cells, std::uint32_t c,
                                   std::uint32_t group_capacity, Visit&& visit) {
  const GpuCell cell = cells[c];
  if (can_be_group(cell, group_capacity)) {
    if (c == 0) visit(0u, 1u);
    return;
  }
  std::uint32_t run_first = 0, run_cells = 0, run_bodies = 0;
  for (std::uint32_t child = cell.first_child; child < cell.first_child + cell.child_count;
       ++child) {
    const GpuCell sibling = cells[child];
    const std::uint32_t bodies = sibling.end - sibling.begin;
    const bool ends_run = !can_be_group(sibling, group_capacity) ||
                          starts_new_group_run(run_cells, run_bodies, bodies, group_capacity);
    if (ends_run && run_cells > 0) visit(run_first, run_cells);
    if (!can_be_group(sibling, group_capacity)) {
      run_cells = 0;
    } else if (ends_run) {
      run_first = child;
      run_cells = 1;
      run_bodies = bodies;
    } else {
      ++run_cells;
      run_bodies += bodies;
    }
  }
  if (run_cells > 0) visit(run_first, run_cells);
}

// Each cell's groups and a head for each of their walks at its first target's place in
// walk_heads. Nothing where the cells overflowed their capacity (the evaluation is run again).
__global__ void walk_heads_kernel(const GpuCell* cells, std::uint32_t capacity,
                                  std::uint32_t group_capacity, std::uint32_t targets_per_walk,
                                  WalkItem* walk_heads, TreeCounters* counters) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t cell_count = counters->cells;
  if (cell_count > capacity || c >= cell_count) return;
  visit_groups_below(cells, c, group_capacity, [&](std::uint32_t first, std::uint32_t count) {
    atomicAdd(&counters->groups, 1u);
    group_walks(cells, first, count, targets_per_walk,
                [&](std::uint32_t, const WalkItem& walk) { walk_heads[walk.first_target] = walk; });
  });
}

// Each cell's groups and their walks, appended to `walks`: a warp reserves its cells' walks with
// one atomic, so a warp's follow one another in its cells' order, and the cells being breadth
// first, the shallowest groups' walks come about first. Nothing where the cells overflowed their
// capacity.
__global__ void append_walks_kernel(const GpuCell* cells, std::uint32_t capacity,
                                    std::uint32_t group_capacity, WalkRuns runs, WalkItem* walks,
                                    TreeCounters* counters) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t cell_count = counters->cells;
  const bool present = cell_count <= capacity && c < cell_count;
  const auto count_only = [](std::uint32_t, const WalkItem&) {};
  std::uint32_t groups = 0, walk_count = 0;
  if (present) {
    visit_groups_below(cells, c, group_capacity, [&](std::uint32_t first, std::uint32_t count) {
      ++groups;
      walk_count += group_walks(cells, first, count, run_of(cells, first, runs), count_only);
    });
  }
  const unsigned lane = threadIdx.x % kWarpSize;
  std::uint32_t through = walk_count;  // this lane's walks and the lower lanes'
  for (int offset = 1; offset < kWarpSize; offset <<= 1) {
    const std::uint32_t lower = __shfl_up_sync(kFullMask, through, offset);
    if (lane >= static_cast<unsigned>(offset)) through += lower;
  }
  const std::uint32_t warp_walks = __shfl_sync(kFullMask, through, kWarpSize - 1);
  const std::uint32_t warp_groups = __reduce_add_sync(kFullMask, groups);
  std::uint32_t base = 0;
  if (lane == 0 && warp_walks > 0) {
    base = atomicAdd(&counters->walks, warp_walks);
    atomicAdd(&counters->groups, warp_groups);
  }
  std::uint32_t next = __shfl_sync(kFullMask, base, 0) + through - walk_count;
  if (walk_count == 0) return;
  visit_groups_below(cells, c, group_capacity, [&](std::uint32_t first, std::uint32_t count) {
    next += group_walks(cells, first, count, run_of(cells, first, runs),
                        [&](std::uint32_t k, const WalkItem& walk) { walks[next + k] = walk; });
  });
}

constexpr int kThreads = 256;

unsigned blocks_for(std::uint32_t count) {
  return (count + kThreads - 1) / kThreads;
}

}  // namespace

template <class T>
void enqueue_bounding_cube(const Body<T>* bodies, std::uint32_t n, BoundsPartial* partials,
                           BoundingCube* cube, cudaStream_t stream) {
  const int blocks = static_cast<int>(
      std::min<std::uint32_t>(kMaxBoundsBlocks, (n + kBoundsThreads - 1) / kBoundsThreads));
  bounds_partials_kernel<T><<<blocks, kBoundsThreads, 0, stream>>>(bodies, n, partials);
  check_launch();
  finalize_cube_kernel<<<1, kBoundsThreads, 0, stream>>>(partials, blocks, cube);
  check_launch();
}

template <class T>
void enqueue_morton_keys(const Body<T>* bodies, std::uint32_t n, const BoundingCube* cube,
                         std::uint64_t* keys, std::uint32_t* indices, cudaStream_t stream) {
  morton_keys_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(bodies, n, cube, keys, indices);
  check_launch();
}

template <class T>
void enqueue_rank_sort(const std::uint64_t* unsorted_keys, const Body<T>* input, std::uint32_t n,
                       std::uint64_t* keys, std::uint32_t* indices, Body<T>* sorted,
                       cudaStream_t stream) {
  const unsigned blocks = (n + kRankedPerBlock - 1) / kRankedPerBlock;
  rank_sort_kernel<T>
      <<<blocks, kRankSortWarps * 32, 0, stream>>>(unsorted_keys, input, n, keys, indices, sorted);
  check_launch();
}

template <class T>
void enqueue_gather(const Body<T>* input, const std::uint32_t* sorted_index, std::uint32_t n,
                    Body<T>* sorted, cudaStream_t stream) {
  gather_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(input, sorted_index, n, sorted);
  check_launch();
}

template <class T>
void enqueue_sort_key_runs_and_gather(std::uint64_t* keys, std::uint32_t* indices,
                                      const Body<T>* input, std::uint32_t n, Body<T>* sorted,
                                      TreeCounters* counters, cudaStream_t stream) {
  sort_key_runs_and_gather_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      keys, indices, input, n, sorted, &counters->long_key_runs);
  check_launch();
}

void enqueue_cells(const std::uint64_t* keys, std::uint32_t n, std::uint32_t leaf_capacity,
                   const CellBuildScratch& scratch, GpuCell* cells, std::uint32_t* parents,
                   TreeCounters* counters, cudaStream_t stream) {
  const std::size_t window_bytes =
      leaf_capacity <= kMostTiledLeafCapacity ? (kThreads + leaf_capacity) * sizeof(int) : 0;
  cell_counts_kernel<<<blocks_for(n), kThreads, window_bytes, stream>>>(keys, n, leaf_capacity,
                                                                        scratch.counts);
  check_launch();
  std::size_t bytes = scratch.cub_bytes;
  check_cuda(cub::DeviceScan::InclusiveSum(scratch.cub_scratch, bytes, scratch.counts,
                                           scratch.inclusive_counts, n, stream));
  // Slots past the last emitted cell sort last, after the deepest level.
  check_cuda(cudaMemsetAsync(scratch.emitted_levels, 0xff, scratch.capacity, stream));
  emit_cells_kernel<<<blocks_for(n), kThreads, 0, stream>>>(keys, n, scratch.inclusive_counts,
                                                            scratch, counters);
  check_launch();
  bytes = scratch.cub_bytes;
  check_cuda(cub::DeviceRadixSort::SortPairs(
      scratch.cub_scratch, bytes, scratch.emitted_levels, scratch.sorted_levels,
      scratch.emitted_slots, scratch.sorted_slots, scratch.capacity, 0, kLevelBits, stream));
  place_cells_kernel<<<blocks_for(scratch.capacity), kThreads, 0, stream>>>(scratch, leaf_capacity,
                                                                            cells, counters);
  check_launch();
  link_cells_kernel<<<blocks_for(scratch.capacity), kThreads, 0, stream>>>(scratch, cells, parents,
                                                                           counters);
  check_launch();
}

std::size_t cell_build_cub_bytes(std::uint32_t n, std::uint32_t capacity) {
  std::size_t scan = 0, sort = 0;
  check_cuda(cub::DeviceScan::InclusiveSum(nullptr, scan, static_cast<std::uint32_t*>(nullptr),
                                           static_cast<std::uint32_t*>(nullptr), n));
  check_cuda(cub::DeviceRadixSort::SortPairs(
      nullptr, sort, static_cast<std::uint8_t*>(nullptr), static_cast<std::uint8_t*>(nullptr),
      static_cast<std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), capacity, 0,
      kLevelBits));
  return std::max(scan, sort);
}

void enqueue_walk_heads(const GpuCell* cells, std::uint32_t capacity, std::uint32_t group_capacity,
                        std::uint32_t targets_per_walk, WalkItem* walk_heads,
                        TreeCounters* counters, cudaStream_t stream) {
  walk_heads_kernel<<<blocks_for(capacity), kThreads, 0, stream>>>(
      cells, capacity, group_capacity, targets_per_walk, walk_heads, counters);
  check_launch();
}

void enqueue_appended_walks(const GpuCell* cells, std::uint32_t capacity,
                            std::uint32_t group_capacity, const WalkRuns& runs, WalkItem* walks,
                            TreeCounters* counters, cudaStream_t stream) {
  append_walks_kernel<<<blocks_for(capacity), kThreads, 0, stream>>>(
      cells, capacity, group_capacity, runs, walks, counters);
  check_launch();
}

#define NBODY_INSTANTIATE_BUILD(T)                                                               \
  template void enqueue_bounding_cube<T>(const Body<T>*, std::uint32_t, BoundsPartial*,          \
                                         BoundingCube*, cudaStream_t);                           \
  template void enqueue_morton_keys<T>(const Body<T>*, std::uint32_t, const BoundingCube*,       \
                                       std::uint64_t*, std::uint32_t*, cudaStream_t);            \
  template void enqueue_gather<T>(const Body<T>*, const std::uint32_t*, std::uint32_t, Body<T>*, \
                                  cudaStream_t);                                                 \
  template void enqueue_rank_sort<T>(const std::uint64_t*, const Body<T>*, std::uint32_t,        \
                                     std::uint64_t*, std::uint32_t*, Body<T>*, cudaStream_t);    \
  template void enqueue_sort_key_runs_and_gather<T>(std::uint64_t*, std::uint32_t*,              \
                                                    const Body<T>*, std::uint32_t, Body<T>*,     \
                                                    TreeCounters*, cudaStream_t);
NBODY_INSTANTIATE_BUILD(float)
NBODY_INSTANTIATE_BUILD(double)
#undef NBODY_INSTANTIATE_BUILD

}  // namespace nbody::gpu::tree::detail
