// The upward pass of the GPU tree, by the suite's one moments arithmetic
// (nbody/multipole_physics.hpp). This file is compiled with -fmad=false (gpu/CMakeLists.txt):
// without contraction the device rounds every operation as the CPU build does, so both trees hold
// the same moments to the bit and make the same opening decisions. Where the cells are few, one
// cooperative launch: every leaf from its bodies, then each level's other cells from their
// children, each level waiting for its slowest cell (its float64 operations over its items, one
// after another: docs/perf-notes.md, "Tree codes"), so a team of lanes computes each cell's
// items' terms side by side. Where they are many, the cells climb: a thread a leaf, and each other
// cell computed by the thread that completes its children, with no wait for the grid.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <cooperative_groups.h>
#include <cuda/atomic>

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
  const std::uint32_t* parents;
  unsigned* arrivals;  // zeroed: the children of each cell done so far
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

// The fields of a cell's moments that first_term_of_child reads, and those second_term_of_child
// reads, as another thread stored them: from the L2, where that thread's stores are seen once its
// fence and arrival are, past this SM's L1 (which may hold the line's older bytes: a line holds
// parts of two cells). The other fields stay zero: gpu_tree_test's moments-teams test compares the
// climb's accelerations bit for bit with the levels' teams', which read whole cells.
__device__ __forceinline__ CellMoments first_pass_fields_past_l1(const CellMoments* cell) {
  CellMoments m;
  m.mass = __ldcg(&cell->mass);
  m.centre = {__ldcg(&cell->centre.x), __ldcg(&cell->centre.y), __ldcg(&cell->centre.z)};
  m.box.low = {__ldcg(&cell->box.low.x), __ldcg(&cell->box.low.y), __ldcg(&cell->box.low.z)};
  m.box.high = {__ldcg(&cell->box.high.x), __ldcg(&cell->box.high.y), __ldcg(&cell->box.high.z)};
  return m;
}

__device__ __forceinline__ CellMoments second_pass_fields_past_l1(const CellMoments* cell) {
  CellMoments m;
  m.mass = __ldcg(&cell->mass);
  m.centre = {__ldcg(&cell->centre.x), __ldcg(&cell->centre.y), __ldcg(&cell->centre.z)};
  const TracelessQuadrupole* q = &cell->quadrupole;
  m.quadrupole = {__ldcg(&q->xx), __ldcg(&q->yy), __ldcg(&q->zz),
                  __ldcg(&q->xy), __ldcg(&q->xz), __ldcg(&q->yz)};
  m.second_moment_trace = __ldcg(&cell->second_moment_trace);
  m.body_radius = __ldcg(&cell->body_radius);
  return m;
}

// Children read two at a time, both loads issued before either term is computed: the climbing
// thread waits on the L2 once a pair rather than once a child and pass. Four or eight at a time
// took more registers than they saved waits (measured on the H200: docs/perf-notes.md, "Tree
// codes").
constexpr std::uint32_t kClimbBatch = 2;

// The cells a warp of the climb takes at once: a lane each.
constexpr int kClimbWarpCells = 32;

// use(k, child) for each child in order, the children read kClimbBatch at a time by `load`, every
// load of a batch issued before any of its uses.
template <class Load, class Use>
__device__ __forceinline__ void for_each_child_in_batches(const CellMoments* children,
                                                          std::uint32_t count, const Load& load,
                                                          const Use& use) {
  for (std::uint32_t base = 0; base < count; base += kClimbBatch) {
    CellMoments batch[kClimbBatch];
#pragma unroll
    for (std::uint32_t j = 0; j < kClimbBatch; ++j) {
      if (base + j < count) batch[j] = load(children + base + j);
    }
#pragma unroll
    for (std::uint32_t j = 0; j < kClimbBatch; ++j) {
      if (base + j >= count) break;
      use(base + j, batch[j]);
    }
  }
}

// moments_of_children's sums, over the children as other threads stored them: the same terms
// added in the same order, so the same bits.
__device__ __forceinline__ CellMoments moments_of_children_past_l1(const CellMoments* children,
                                                                   std::uint32_t count,
                                                                   const Box& cube) {
  MomentsFirstSums first;
  for_each_child_in_batches(children, count, first_pass_fields_past_l1,
                            [&](std::uint32_t k, const CellMoments& child) {
                              const MomentsFirstTerm term = first_term_of_child(child);
                              if (k == 0) first = start_first_sums(term);
                              add_first_term(first, term);
                            });
  const Vec3<double> centre = centre_of_sums(first, count);
  MomentsSecondSums second;
  for_each_child_in_batches(children, count, second_pass_fields_past_l1,
                            [&](std::uint32_t, const CellMoments& child) {
                              add_second_term(second, second_term_of_child(child, centre));
                            });
  return parent_moments(first, centre, second, cube);
}

// A warp's element of each of its 32 consecutive cells from `first` (its lanes' `mine`), stored
// where the lane's bit of `lanes` is set, through `staging`: eight consecutive bytes a lane a
// store, where a lane storing its own cell would touch a line of its own at each of the element's
// fields (a cell's moments are 152 bytes: 19 stores, each to 32 lines). Every lane of the warp
// calls it.
template <class E>
__device__ __forceinline__ void store_through_staging(E* out, std::uint32_t first, const E& mine,
                                                      unsigned lanes, unsigned char* staging,
                                                      int lane) {
  static_assert(sizeof(E) % sizeof(std::uint64_t) == 0);
  constexpr int kWords = sizeof(E) / sizeof(std::uint64_t);
  reinterpret_cast<E*>(staging)[lane] = mine;
  __syncwarp();
  const auto* words = reinterpret_cast<const std::uint64_t*>(staging);
  auto* target = reinterpret_cast<std::uint64_t*>(out + first);
  for (int w = lane; w < kClimbWarpCells * kWords; w += kClimbWarpCells) {
    if ((lanes >> (w / kWords)) & 1u) target[w] = words[w];
  }
  __syncwarp();
}

// Every leaf from its bodies, a thread a leaf, its moments stored by its warp together; then the
// thread that completes a cell's children (the last to arrive) computes that cell, and climbs on
// while it is the last. No level waits for the whole grid's slowest cell, as the cooperative
// launch's levels wait; each cell's sums are the same operations in the same order, so the same
// bits.
template <class T>
__global__ void __launch_bounds__(kClimbingThreads) climbing_moments_kernel(MomentsArgs<T> a) {
  const std::uint32_t cell_count = a.counters->cells;
  if (cell_count > a.capacity) return;
  __shared__ alignas(32) unsigned char staging[kClimbingThreads * sizeof(CellMoments)];
  static_assert(sizeof(CellMoments) >= sizeof(CellCriterion) &&
                sizeof(CellMoments) >= sizeof(CellMultipole<T>));
  const int lane = static_cast<int>(threadIdx.x % kClimbWarpCells);
  unsigned char* warp_staging = staging + (threadIdx.x - lane) * sizeof(CellMoments);
  const BoundingCube cube = *a.cube;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  // The whole warp takes each round, so that it stores its leaves together.
  for (std::uint32_t first = blockIdx.x * blockDim.x + threadIdx.x - lane; first < cell_count;
       first += stride) {
    const std::uint32_t c = first + lane;
    GpuCell leaf{};
    if (c < cell_count) leaf = a.cells[c];
    const bool is_leaf = c < cell_count && leaf.child_count == 0;
    CellMoments m{};
    if (is_leaf) {
      prefetch_l1(a.sorted + leaf.begin, leaf.end - leaf.begin);
      const Box leaf_box = box_of(cell_cube(a.keys[leaf.begin], leaf.level, cube));
      m = moments_of_bodies<T>(a.sorted + leaf.begin, leaf.end - leaf.begin, leaf_box);
    }
    const unsigned leaves = __ballot_sync(0xffffffffu, is_leaf);
    store_through_staging(a.moments, first, m, leaves, warp_staging, lane);
    store_through_staging(a.criterion, first,
                          CellCriterion{m.centre.x, m.centre.y, m.centre.z, m.b_max}, leaves,
                          warp_staging, lane);
    store_through_staging(a.multipoles, first, round_multipole<T>(m, a.softening_squared), leaves,
                          warp_staging, lane);
    if (!is_leaf) continue;
    for (std::uint32_t child = c; child != 0;) {
      const std::uint32_t parent = a.parents[child];
      const GpuCell cell = a.cells[parent];
      // Released: the stores of this cell (its warp's, ordered before by the warp's barrier) are
      // seen by whichever thread acquires a later arrival. Acquired: the siblings' stores, each
      // released by its own arrival, are seen by the loads below. One acquire-release add where
      // two full fences stood around a relaxed one.
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrivals(a.arrivals[parent]);
      if (arrivals.fetch_add(1u, cuda::memory_order_acq_rel) + 1u != cell.child_count) break;
      const Box box = box_of(cell_cube(a.keys[cell.begin], cell.level, cube));
      store_moments(
          a, parent,
          moments_of_children_past_l1(a.moments + cell.first_child, cell.child_count, box));
      child = parent;
    }
  }
}

// Every leaf, then each level's other cells from the level below, the deepest first, the whole
// grid waiting between levels: the grid's barrier orders the children's stores before their
// parents' loads, as __syncthreads orders a block's. A team of kLanes lanes a cell, where the cells
// are few (where they are many, the cells climb: climbing_moments_kernel).
template <class T, int kLanes>
__global__ void __launch_bounds__(kMomentsThreads) moments_kernel(MomentsArgs<T> a) {
  const std::uint32_t cell_count = a.counters->cells;
  if (cell_count > a.capacity) return;  // the whole grid returns: nothing waits
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const BoundingCube cube = *a.cube;
  __shared__ TeamScratch<kLanes> scratch;
  team_pass<T, kLanes, true>(a, cube, 0, cell_count, scratch);
  for (int level = static_cast<int>(a.counters->depth) - 1; level >= 0; --level) {
    grid.sync();
    team_pass<T, kLanes, false>(a, cube, a.counters->level_first[level],
                                a.counters->level_first[level + 1], scratch);
  }
}

// The lanes a cell that a cooperative launch may take.
template <class T, class F>
void with_moments_kernel(int lanes, F&& use) {
  switch (lanes) {
    case 4:
      return use(moments_kernel<T, 4>);
    case 8:
      return use(moments_kernel<T, 8>);
    default:
      throw std::invalid_argument("moments: 4 or 8 lanes a cell in a cooperative launch");
  }
}

}  // namespace

// One block an SM: the grid's waits between levels cost more with more blocks than their threads
// save (on the H100 at 1M, when the levels took every size: 0.30 ms with 132 blocks, 0.35 with
// 264).
template <class T>
int moments_blocks(int device) {
  for (const int lanes : {4, 8}) {
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
                     const TreeCounters* counters, const std::uint32_t* parents, unsigned* arrivals,
                     CellMoments* moments, CellCriterion* criterion, CellMultipole<T>* multipoles,
                     const MomentsLaunch& launch, cudaStream_t stream) {
  MomentsArgs<T> args{cells,    capacity, sorted,   keys,    cube,      softening_squared,
                      counters, parents,  arrivals, moments, criterion, multipoles};
  if (launch.climbing_blocks > 0) {
    check_cuda(cudaMemsetAsync(arrivals, 0, std::size_t{capacity} * sizeof(unsigned), stream));
    climbing_moments_kernel<T><<<launch.climbing_blocks, kClimbingThreads, 0, stream>>>(args);
    check_launch();
    return;
  }
  void* parameters[] = {&args};
  with_moments_kernel<T>(launch.lanes, [&](auto kernel) {
    check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                           dim3(launch.blocks), dim3(kMomentsThreads), parameters,
                                           0, stream));
  });
}

#define NBODY_INSTANTIATE_MOMENTS(T)                                                              \
  template int moments_blocks<T>(int);                                                            \
  template void enqueue_moments<T>(                                                               \
      const GpuCell*, std::uint32_t, const Body<T>*, const std::uint64_t*, const BoundingCube*,   \
      double, const TreeCounters*, const std::uint32_t*, unsigned*, CellMoments*, CellCriterion*, \
      CellMultipole<T>*, const MomentsLaunch&, cudaStream_t);
NBODY_INSTANTIATE_MOMENTS(float)
NBODY_INSTANTIATE_MOMENTS(double)
#undef NBODY_INSTANTIATE_MOMENTS

}  // namespace nbody::gpu::tree::detail
