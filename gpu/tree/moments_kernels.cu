// The upward pass of the GPU tree in one cooperative launch: every leaf from its bodies, then
// each level's other cells from their children, by the suite's one moments arithmetic
// (nbody/multipole_physics.hpp). This file is compiled with -fmad=false (gpu/CMakeLists.txt):
// without contraction the device rounds every operation as the CPU build does, so both trees hold
// the same moments to the bit and make the same opening decisions. Each level waits for its
// slowest cell: its float64 operations over its children or bodies, one after another where one
// thread computes it (not memory, nor the FMAs given up; docs/perf-notes.md, "Tree codes"), so
// where the cells are few a team of lanes computes each cell's items' terms side by side.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

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

// Where a team of kLanes lanes, which computes one cell's moments, leaves its items' terms for
// its first lane to sum, and that lane the centre: raw storage, as CUDA constructs no __shared__
// object.
template <int kLanes>
struct TeamScratch {
  static constexpr int kTeams = kMomentsThreads / kLanes;
  alignas(8) unsigned char first[kMomentsThreads * sizeof(MomentsFirstTerm)];
  alignas(8) unsigned char second[kMomentsThreads * sizeof(MomentsSecondTerm)];
  alignas(8) unsigned char centre[kTeams * sizeof(Vec3<double>)];
};

// The sums of a team's cell over its `count` items, round by round: each lane computes the term
// of one item of the round (term_of(k)), its first lane adds them in item order (add(t) for
// each; start(t) with the first item's before it). Called by the whole warp alike: `rounds` is the
// warp's most, a lane of an inactive team (count 0) computes nothing.
template <int kLanes, class Term, class TermOf, class Start, class Add>
__device__ __forceinline__ void sum_team_terms(Term* terms, int part, std::uint32_t count,
                                               std::uint32_t rounds, const TermOf& term_of,
                                               const Start& start, const Add& add) {
  for (std::uint32_t round = 0; round < rounds; ++round) {
    const std::uint32_t item = round * kLanes + part;
    if (item < count) terms[part] = term_of(item);
    __syncwarp();
    if (part == 0) {
      const std::uint32_t done = round * kLanes;
      const std::uint32_t in_round =
          count > done ? min(count - done, static_cast<std::uint32_t>(kLanes)) : 0;
      if (round == 0 && in_round > 0) start(terms[0]);
      for (std::uint32_t k = 0; k < in_round; ++k) add(terms[k]);
    }
    __syncwarp();
  }
}

// The moments of the cells [first, last) (one pass: the leaves, or one level's other cells),
// kLanes lanes a cell: each lane computes its share of the cell's items' terms (a leaf's bodies,
// another cell's children), the team's first lane sums them in item order and stores the cell.
// The same operations in the same order as moments_of_bodies and moments_of_children, so the
// same bits; what the team saves is its first lane computing every item's terms in turn.
template <class T, int kLanes, bool kLeaves>
__device__ __forceinline__ void team_pass(const MomentsArgs<T>& a, const BoundingCube& cube,
                                          std::uint32_t first, std::uint32_t last,
                                          TeamScratch<kLanes>& scratch) {
  constexpr int kTeamsPerWarp = 32 / kLanes;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int part = lane % kLanes;
  const int team_in_block = static_cast<int>(threadIdx.x) / kLanes;
  auto* first_terms = reinterpret_cast<MomentsFirstTerm*>(scratch.first) + team_in_block * kLanes;
  auto* second_terms =
      reinterpret_cast<MomentsSecondTerm*>(scratch.second) + team_in_block * kLanes;
  auto* centre = reinterpret_cast<Vec3<double>*>(scratch.centre) + team_in_block;
  const std::uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const std::uint32_t teams = gridDim.x * blockDim.x / kLanes;
  for (std::uint32_t base = first + warp * kTeamsPerWarp; base < last; base += teams) {
    const std::uint32_t c = base + static_cast<std::uint32_t>(lane / kLanes);
    GpuCell cell{};
    if (c < last) cell = a.cells[c];
    const bool mine = c < last && (cell.child_count == 0) == kLeaves;
    const std::uint32_t count = !mine ? 0 : kLeaves ? cell.end - cell.begin : cell.child_count;
    std::uint32_t rounds = (count + kLanes - 1) / kLanes;
    for (int offset = 16; offset > 0; offset /= 2) {
      rounds = max(rounds, __shfl_xor_sync(0xffffffffu, rounds, offset));
    }
    MomentsFirstSums first_sums;
    sum_team_terms<kLanes>(
        first_terms, part, count, rounds,
        [&](std::uint32_t k) {
          return kLeaves ? first_term_of_body(a.sorted[cell.begin + k])
                         : first_term_of_child(a.moments[cell.first_child + k]);
        },
        [&](const MomentsFirstTerm& t) { first_sums = start_first_sums(t); },
        [&](const MomentsFirstTerm& t) { add_first_term(first_sums, t); });
    if (part == 0 && count > 0) *centre = centre_of_sums(first_sums, count);
    __syncwarp();
    const Vec3<double> cell_centre = *centre;
    MomentsSecondSums second_sums;
    sum_team_terms<kLanes>(
        second_terms, part, count, rounds,
        [&](std::uint32_t k) {
          return kLeaves ? second_term_of_body(a.sorted[cell.begin + k], cell_centre)
                         : second_term_of_child(a.moments[cell.first_child + k], cell_centre);
        },
        [](const MomentsSecondTerm&) {},
        [&](const MomentsSecondTerm& t) { add_second_term(second_sums, t); });
    if (part == 0 && count > 0) {
      const Box box = box_of(cell_cube(a.keys[cell.begin], cell.level, cube));
      store_moments(a, c,
                    kLeaves ? leaf_moments(first_sums, cell_centre, second_sums, box)
                            : parent_moments(first_sums, cell_centre, second_sums, box));
    }
    __syncwarp();
  }
}

// Every leaf, then each level's other cells from the level below, the deepest first, the whole
// grid waiting between levels: the grid's barrier orders the children's stores before their
// parents' loads, as __syncthreads orders a block's (copying the children aside past the L1
// instead spilled 1.6 kB a thread and took five times as long). A thread a cell (kLanes 1) where
// the cells are many; where they are few, a team of lanes shares each cell's items.
template <class T, int kLanes>
__global__ void __launch_bounds__(kMomentsThreads) moments_kernel(MomentsArgs<T> a) {
  const std::uint32_t cell_count = a.counters->cells;
  if (cell_count > a.capacity) return;  // the whole grid returns: nothing waits
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const BoundingCube cube = *a.cube;
  if constexpr (kLanes == 1) {
    const std::uint32_t stride = gridDim.x * blockDim.x;
    const std::uint32_t start = blockIdx.x * blockDim.x + threadIdx.x;
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
        store_moments(a, c,
                      moments_of_children(a.moments + cell.first_child, cell.child_count, box));
      }
    }
  } else {
    __shared__ TeamScratch<kLanes> scratch;
    team_pass<T, kLanes, true>(a, cube, 0, cell_count, scratch);
    for (int level = static_cast<int>(a.counters->depth) - 1; level >= 0; --level) {
      grid.sync();
      team_pass<T, kLanes, false>(a, cube, a.counters->level_first[level],
                                  a.counters->level_first[level + 1], scratch);
    }
  }
}

// The lanes a cell that a launch may take.
template <class T, class F>
void with_moments_kernel(int lanes, F&& use) {
  switch (lanes) {
    case 1:
      return use(moments_kernel<T, 1>);
    case 4:
      return use(moments_kernel<T, 4>);
    case 8:
      return use(moments_kernel<T, 8>);
    default:
      throw std::invalid_argument("moments: 1, 4 or 8 lanes a cell");
  }
}

}  // namespace

// One block an SM: the grid's waits between levels cost more with more blocks than their threads
// save (on the H100 at 1M: 0.30 ms with 132 blocks, 0.35 ms with 264).
template <class T>
int moments_blocks(int device) {
  for (const int lanes : {1, 4, 8}) {
    with_moments_kernel<T>(lanes, [&](auto kernel) {
      int per_sm = 0;
      check_cuda(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kMomentsThreads, 0));
      if (per_sm < 1) throw CudaError("moments: no block of the upward pass fits an SM");
    });
  }
  int sm_count = 0;
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

template <class T>
void enqueue_moments(const GpuCell* cells, std::uint32_t capacity, const Body<T>* sorted,
                     const std::uint64_t* keys, const BoundingCube* cube, double softening_squared,
                     const TreeCounters* counters, CellMoments* moments, CellCriterion* criterion,
                     CellMultipole<T>* multipoles, const MomentsLaunch& launch,
                     cudaStream_t stream) {
  MomentsArgs<T> args{cells,    capacity, sorted,    keys,      cube, softening_squared,
                      counters, moments,  criterion, multipoles};
  void* parameters[] = {&args};
  with_moments_kernel<T>(launch.lanes, [&](auto kernel) {
    check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                           dim3(launch.blocks), dim3(kMomentsThreads), parameters,
                                           0, stream));
  });
}

#define NBODY_INSTANTIATE_MOMENTS(T)                                                  \
  template int moments_blocks<T>(int);                                                \
  template void enqueue_moments<T>(const GpuCell*, std::uint32_t, const Body<T>*,     \
                                   const std::uint64_t*, const BoundingCube*, double, \
                                   const TreeCounters*, CellMoments*, CellCriterion*, \
                                   CellMultipole<T>*, const MomentsLaunch&, cudaStream_t);
NBODY_INSTANTIATE_MOMENTS(float)
NBODY_INSTANTIATE_MOMENTS(double)
#undef NBODY_INSTANTIATE_MOMENTS

}  // namespace nbody::gpu::tree::detail
