// The GPU tree's build: the bounding cube, the Morton keys, the sorted bodies and the cells level
// by level, as the CPU tree's octree_build.cpp builds them (the same cells in the same order).
#include <cfloat>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/tree_groups.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

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

template <class T>
__global__ void gather_kernel(const Body<T>* input, const std::uint32_t* sorted_index,
                              std::uint32_t n, Body<T>* sorted) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) sorted[k] = input[sorted_index[k]];
}

// The first of [begin, end) whose key's octant below `level` is at least `octant` (the keys of a
// cell share their prefix, so the octant is monotone over its range).
__device__ std::uint32_t octant_start(const std::uint64_t* keys, std::uint32_t begin,
                                      std::uint32_t end, int level, unsigned octant) {
  while (begin < end) {
    const std::uint32_t middle = begin + (end - begin) / 2;
    if (child_octant(keys[middle], level) < octant) {
      begin = middle + 1;
    } else {
      end = middle;
    }
  }
  return begin;
}

__global__ void split_count_kernel(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                                   const std::uint64_t* keys, std::uint32_t leaf_capacity,
                                   std::uint32_t* octant_bounds, std::uint32_t* child_counts,
                                   TreeCounters* counters) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const GpuCell cell = cells[first + i];
  const bool splits = cell.end - cell.begin > leaf_capacity && cell.level < kDeepestLevel;
  if (!splits) {
    child_counts[i] = 0;
    atomicAdd(&counters->leaves, 1u);
    return;
  }
  std::uint32_t* bounds = octant_bounds + 9 * std::size_t{i};
  std::uint32_t start = cell.begin;
  std::uint32_t nonempty = 0;
  for (unsigned octant = 0; octant < 8; ++octant) {
    start = octant_start(keys, start, cell.end, cell.level, octant);
    bounds[octant] = start;
    if (octant > 0) nonempty += bounds[octant - 1] != start;
  }
  bounds[8] = cell.end;
  nonempty += bounds[7] != cell.end;
  child_counts[i] = nonempty;
}

__global__ void split_write_kernel(GpuCell* cells, std::uint32_t first, std::uint32_t count,
                                   const std::uint32_t* octant_bounds,
                                   const std::uint32_t* child_counts,
                                   const std::uint32_t* inclusive_offsets,
                                   std::uint32_t next_cell) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count || child_counts[i] == 0) return;
  GpuCell& parent = cells[first + i];
  const std::uint32_t first_child = next_cell + inclusive_offsets[i] - child_counts[i];
  parent.first_child = first_child;
  parent.child_count = static_cast<std::uint8_t>(child_counts[i]);
  const std::uint32_t* bounds = octant_bounds + 9 * std::size_t{i};
  const auto level = static_cast<std::uint8_t>(parent.level + 1);
  std::uint32_t child = first_child;
  for (unsigned octant = 0; octant < 8; ++octant) {
    if (bounds[octant] == bounds[octant + 1]) continue;
    cells[child++] = GpuCell{bounds[octant], bounds[octant + 1], 0, 0, level};
  }
}

__device__ bool can_be_group(const GpuCell& cell, std::uint32_t group_capacity) {
  return can_be_target_group(cell.end - cell.begin, cell.child_count == 0, group_capacity);
}

// Marks the walks of the group of sibling cells [first_cell, first_cell + cell_count): one per
// run of kTargetsPerWalk of its bodies.
__device__ void mark_walks(const GpuCell* cells, std::uint32_t first_cell, std::uint32_t cell_count,
                           WalkItem* walk_heads, TreeCounters* counters) {
  atomicAdd(&counters->groups, 1u);
  const std::uint32_t end = cells[first_cell + cell_count - 1].end;
  for (std::uint32_t b = cells[first_cell].begin; b < end; b += kTargetsPerWalk) {
    walk_heads[b] = WalkItem{b, first_cell, cell_count};
  }
}

// The groups just below each cell that cannot be one (nbody/tree_groups.hpp): runs of its
// children that can be; the root alone when it can be one.
__global__ void walk_heads_kernel(const GpuCell* cells, std::uint32_t cell_count,
                                  std::uint32_t group_capacity, WalkItem* walk_heads,
                                  TreeCounters* counters) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cell_count) return;
  const GpuCell cell = cells[c];
  if (can_be_group(cell, group_capacity)) {
    if (c == 0) mark_walks(cells, 0, 1, walk_heads, counters);
    return;
  }
  std::uint32_t run_first = 0, run_cells = 0, run_bodies = 0;
  for (std::uint32_t child = cell.first_child; child < cell.first_child + cell.child_count;
       ++child) {
    const GpuCell sibling = cells[child];
    const std::uint32_t bodies = sibling.end - sibling.begin;
    const bool ends_run = !can_be_group(sibling, group_capacity) ||
                          starts_new_group_run(run_cells, run_bodies, bodies, group_capacity);
    if (ends_run && run_cells > 0) mark_walks(cells, run_first, run_cells, walk_heads, counters);
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
  if (run_cells > 0) mark_walks(cells, run_first, run_cells, walk_heads, counters);
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
void enqueue_gather(const Body<T>* input, const std::uint32_t* sorted_index, std::uint32_t n,
                    Body<T>* sorted, cudaStream_t stream) {
  gather_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(input, sorted_index, n, sorted);
  check_launch();
}

void enqueue_split_count(const GpuCell* cells, std::uint32_t first, std::uint32_t count,
                         const std::uint64_t* keys, std::uint32_t leaf_capacity,
                         std::uint32_t* octant_bounds, std::uint32_t* child_counts,
                         TreeCounters* counters, cudaStream_t stream) {
  split_count_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      cells, first, count, keys, leaf_capacity, octant_bounds, child_counts, counters);
  check_launch();
}

void enqueue_split_write(GpuCell* cells, std::uint32_t first, std::uint32_t count,
                         const std::uint32_t* octant_bounds, const std::uint32_t* child_counts,
                         const std::uint32_t* inclusive_offsets, std::uint32_t next_cell,
                         cudaStream_t stream) {
  split_write_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      cells, first, count, octant_bounds, child_counts, inclusive_offsets, next_cell);
  check_launch();
}

void enqueue_walk_heads(const GpuCell* cells, std::uint32_t cell_count,
                        std::uint32_t group_capacity, WalkItem* walk_heads, TreeCounters* counters,
                        cudaStream_t stream) {
  walk_heads_kernel<<<blocks_for(cell_count), kThreads, 0, stream>>>(
      cells, cell_count, group_capacity, walk_heads, counters);
  check_launch();
}

#define NBODY_INSTANTIATE_BUILD(T)                                                               \
  template void enqueue_bounding_cube<T>(const Body<T>*, std::uint32_t, BoundsPartial*,          \
                                         BoundingCube*, cudaStream_t);                           \
  template void enqueue_morton_keys<T>(const Body<T>*, std::uint32_t, const BoundingCube*,       \
                                       std::uint64_t*, std::uint32_t*, cudaStream_t);            \
  template void enqueue_gather<T>(const Body<T>*, const std::uint32_t*, std::uint32_t, Body<T>*, \
                                  cudaStream_t);
NBODY_INSTANTIATE_BUILD(float)
NBODY_INSTANTIATE_BUILD(double)
#undef NBODY_INSTANTIATE_BUILD

}  // namespace nbody::gpu::tree::detail
