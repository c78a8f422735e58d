// The upward pass of the GPU tree in one cooperative launch: every leaf from its bodies, then
// each level's other cells from their children, by the suite's one moments arithmetic
// (nbody/multipole_physics.hpp). This file is compiled with -fmad=false (gpu/CMakeLists.txt):
// without contraction the device rounds every operation as the CPU build does, so both trees hold
// the same moments to the bit and make the same opening decisions. Each level waits for its
// slowest thread: one cell's float64 operations over its children or bodies, one after another
// (not memory, nor the FMAs given up; docs/perf-notes.md, "Tree codes").
#include <algorithm>
#include <cstdint>

#include <cooperative_groups.h>

#include "nbody/gpu/cuda_check.hpp"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

template <class T>
struct MomentsArgs {
  const GpuCell* cells;
  std::uint32_t capacity;
  const Body<T>* sorted;
  const std::uint64_t* keys;
  const BoundingCube* cube;
  double softening_squared;
  const TreeCounters* counters;
  CellMoments* moments;
  CellCriterion* criterion;
  CellMultipole<T>* multipoles;
};

template <class T>
__device__ void store_moments(const MomentsArgs<T>& a, std::uint32_t c, const CellMoments& m) {
  a.moments[c] = m;
  a.criterion[c] = {m.centre.x, m.centre.y, m.centre.z, m.b_max};
  a.multipoles[c] = round_multipole<T>(m, a.softening_squared);
}

// Asks the L1 for the bytes [first, first + count) before a loop reads them one after another:
// their lines come in one wait rather than one wait each (a leaf's bodies, a cell's children).
template <class E>
__device__ __forceinline__ void prefetch_l1(const E* first, std::uint32_t count) {
  constexpr std::uintptr_t kLine = 128;
  const auto begin = reinterpret_cast<std::uintptr_t>(first) & ~(kLine - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(first + count);
  for (std::uintptr_t line = begin; line < end; line += kLine) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(line));
  }
}

// Every leaf, then each level's other cells from the level below, the deepest first, the whole
// grid waiting between levels: the grid's barrier orders the children's stores before their
// parents' loads, as __syncthreads orders a block's (copying the children aside past the L1
// instead spilled 1.6 kB a thread and took five times as long).
template <class T>
__global__ void __launch_bounds__(kMomentsThreads) moments_kernel(MomentsArgs<T> a) {
  const std::uint32_t cell_count = a.counters->cells;
  if (cell_count > a.capacity) return;  // the whole grid returns: nothing waits
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const std::uint32_t stride = gridDim.x * blockDim.x;
  const std::uint32_t start = blockIdx.x * blockDim.x + threadIdx.x;
  const BoundingCube cube = *a.cube;
  for (std::uint32_t c = start; c < cell_count; c += stride) {
    const GpuCell cell = a.cells[c];
    if (cell.child_count != 0) continue;
    prefetch_l1(a.sorted + cell.begin, cell.end - cell.begin);
    const Box box = box_of(cell_cube(a.keys[cell.begin], cell.level, cube));
    store_moments(a, c, moments_of_bodies<T>(a.sorted + cell.begin, cell.end - cell.begin, box));
  }
  for (int level = static_cast<int>(a.counters->depth) - 1; level >= 0; --level) {
    grid.sync();
    const std::uint32_t last = a.counters->level_first[level + 1];
    for (std::uint32_t c = a.counters->level_first[level] + start; c < last; c += stride) {
      const GpuCell cell = a.cells[c];
      if (cell.child_count == 0) continue;
      prefetch_l1(a.moments + cell.first_child, cell.child_count);
      const Box box = box_of(cell_cube(a.keys[cell.begin], cell.level, cube));
      store_moments(a, c, moments_of_children(a.moments + cell.first_child, cell.child_count, box));
    }
  }
}

}  // namespace

// One block an SM: the grid's waits between levels cost more with more blocks than their threads
// save (on the H100 at 1M: 0.30 ms with 132 blocks, 0.35 ms with 264).
template <class T>
int moments_blocks(int device) {
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, moments_kernel<T>,
                                                           kMomentsThreads, 0));
  if (per_sm < 1) throw CudaError("moments: no block of the upward pass fits an SM");
  int sm_count = 0;
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

template <class T>
void enqueue_moments(const GpuCell* cells, std::uint32_t capacity, const Body<T>* sorted,
                     const std::uint64_t* keys, const BoundingCube* cube, double softening_squared,
                     const TreeCounters* counters, CellMoments* moments, CellCriterion* criterion,
                     CellMultipole<T>* multipoles, int blocks, cudaStream_t stream) {
  MomentsArgs<T> args{cells,    capacity, sorted,    keys,      cube, softening_squared,
                      counters, moments,  criterion, multipoles};
  void* parameters[] = {&args};
  check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(moments_kernel<T>),
                                         dim3(blocks), dim3(kMomentsThreads), parameters, 0,
                                         stream));
}

#define NBODY_INSTANTIATE_MOMENTS(T)                                                  \
  template int moments_blocks<T>(int);                                                \
  template void enqueue_moments<T>(const GpuCell*, std::uint32_t, const Body<T>*,     \
                                   const std::uint64_t*, const BoundingCube*, double, \
                                   const TreeCounters*, CellMoments*, CellCriterion*, \
                                   CellMultipole<T>*, int, cudaStream_t);
NBODY_INSTANTIATE_MOMENTS(float)
NBODY_INSTANTIATE_MOMENTS(double)
#undef NBODY_INSTANTIATE_MOMENTS

}  // namespace nbody::gpu::tree::detail
