// The GPU tree's walk, as Bonsai walks it: a team of warps per group of targets (up to 64 at a
// time), each warp testing up to 32 cells at once against the Salmon-Warren criterion in float64,
// its interaction lists gathered in shared memory and evaluated 32 sources at a time, each
// broadcast from shared memory: in float32 each quarter of a warp walking alone holds all the
// walk's targets (eight a lane) and takes every fourth source, so that a source read serves eight
// terms a lane (in a team, each half, four a lane); in float64 the whole warp holds them, two a
// lane. The warps of a team share one stack: each round
// they pop up to 32 cells a warp, dealt out in turn, each warp lists and evaluates what its cells
// give, and the team sums the warps' shares in a fixed order: a group whose box opens most of the
// tree (a sparse outer group) so takes a team's time over its members, where one warp alone
// would make the whole launch wait on it at small N. Persistent
// teams take the groups from a counter, a group of more than 64 targets as several walks. The
// interactions are the suite's (physics.hpp's accumulate_interaction, multipole_physics.hpp's
// accumulate_cell) with the GPU's rsqrt.
#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/device_math.cuh"
#include "tree_kernels.cuh"

namespace nbody::gpu::tree::detail {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;
// The sources of a batch are split between kStreams parts of the warp, each holding every
// target (kStreamLanes lanes, kTargetsPerLane targets a lane). Float32 in four quarters, eight
// targets a lane, where one warp walks a group (the float32 walk at 1M 2% faster than in two
// halves, four a lane, at 128 registers against 80); in two halves where a team walks it (four
// quarters were 5% slower from 64K to 256K). Float64 in two halves where one warp walks: a
// whole warp a slot computed a walk of 33 to 64 targets as 64, its FP64 pipe the bound (at 1M
// the walk 6% faster, at 128 registers against 96); in one where a team walks.
template <class T, int kMembers>
inline constexpr int kStreamsFor = kMembers == 1 ? (std::is_same_v<T, float> ? 4 : 2)
                                                 : (std::is_same_v<T, float> ? 2 : 1);
template <int kStreams>
inline constexpr int kStreamLanes = kWarpSize / kStreams;
template <int kStreams>
inline constexpr int kTargetsPerLane = static_cast<int>(kTargetsPerWalk) / kStreamLanes<kStreams>;
// Float32's register budget where one warp walks a group: four blocks of four warps an SM, 128
// registers (three, 158, walk 1M 10% slower; five, 96, spill 156 bytes and walk it 1% slower).
template <class T>
inline constexpr int kMinBlocksPerSm = std::is_same_v<T, float> ? 4 : 0;
// Listed sources waiting for a batch of 32: a step lists up to 32 cells, and the bodies of up to
// 32 opened leaves (written in windows where more).
constexpr int kCellListCapacity = 2 * kWarpSize;
constexpr int kBodyListCapacity = 8 * kWarpSize;

// Float64's walk reads its group's box from shared memory at each test rather than holding it in
// 12 registers through its terms (its kernels 122 registers -> 94-98: the walk at 256K 3-4%
// faster, at 1M 0.6%); float32's holds it (from shared memory its registers fell too, and its
// walk at 8K-32K was 12% slower at fewer blocks an SM, at 256K 1-2%).
template <class T>
inline constexpr bool kGroupBoxShared = std::is_same_v<T, double>;

template <class T>
struct WarpScratch {
  Box group;  // the walk's box, where kGroupBoxShared<T>
  Body<T> bodies[kWarpSize];
  CellMultipole<T> cells[kWarpSize];
  std::uint32_t body_list[kBodyListCapacity];
  std::uint32_t cell_list[kCellListCapacity];
};

// A lane's targets: kSlots of them (half as many where the walk has at most half its targets, so
// that no lane computes targets that are not there; groups of up to 64 are often that small).
// Slot k holds the walk's targets from k * kStreamLanes; a slot no lane of a stream fills (past
// used_slots) has its terms skipped: one branch the same for the whole warp. The walks of more
// than half kTargetsPerWalk targets, which take kTargetsPerLane slots, always fill the first
// kSlots / 2 + 1, and those need no test.
template <class T, int kSlots, int kStreams>
struct Targets {
  T x[kSlots], y[kSlots], z[kSlots];
  T ax[kSlots], ay[kSlots], az[kSlots];
  int used_slots = kSlots;

  __device__ __forceinline__ bool computes(int k) const {
    constexpr int kAlwaysUsed = kSlots == kTargetsPerLane<kStreams> ? kSlots / 2 + 1 : 1;
    return k < kAlwaysUsed || k < used_slots;
  }
};

__device__ __forceinline__ int warp_exclusive_scan(int value, int lane, int& total) {
  int inclusive = value;
  for (int offset = 1; offset < kWarpSize; offset <<= 1) {
    const int below = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += below;
  }
  total = __shfl_sync(kFullMask, inclusive, kWarpSize - 1);
  return inclusive - value;
}

// std::max({low - p, 0, p - high}) as the CPU's squared_distance_to_box takes it.
__device__ __forceinline__ double box_gap(double low, double high, double p) {
  double largest = low - p;
  if (largest < 0.0) largest = 0.0;
  const double above = p - high;
  if (largest < above) largest = above;
  return largest;
}

// The CPU's accepts (cpu/tree/traversal.cpp), operation for operation and never fused, so that
// both trees accept the same cells: theta^2 |group box to centre|^2 > b_max^2.
__device__ __forceinline__ bool accepts(const Box& group, const CellCriterion& cell,
                                        double theta_squared) {
  const double dx = box_gap(group.low.x, group.high.x, cell.x);
  const double dy = box_gap(group.low.y, group.high.y, cell.y);
  const double dz = box_gap(group.low.z, group.high.z, cell.z);
  const double d2 = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
  return __dmul_rn(theta_squared, d2) > __dmul_rn(cell.b_max, cell.b_max);
}

template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void evaluate_bodies(WarpScratch<T>& scratch, const std::uint32_t* list,
                                                int count, const Body<T>* sorted,
                                                T softening_squared, int lane,
                                                Targets<T, kSlots, kStreams>& t) {
  if (lane < count) scratch.bodies[lane] = sorted[list[lane]];
  __syncwarp();
  for (int j = lane / kStreamLanes<kStreams>; j < count; j += kStreams) {
    const Body<T> s = scratch.bodies[j];
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      if (!t.computes(k)) continue;
      accumulate_interaction<T, DeviceInvSqrt>(t.x[k], t.y[k], t.z[k], s.x, s.y, s.z, s.m,
                                               softening_squared, t.ax[k], t.ay[k], t.az[k]);
    }
  }
  __syncwarp();
}

template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void evaluate_cells(WarpScratch<T>& scratch, int count,
                                               const CellMultipole<T>* multipoles,
                                               T softening_squared, int lane,
                                               Targets<T, kSlots, kStreams>& t) {
  if (lane < count) scratch.cells[lane] = multipoles[scratch.cell_list[lane]];
  __syncwarp();
  const auto interact = [&](int j) {
    const CellMultipole<T> cell = scratch.cells[j];
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      if (!t.computes(k)) continue;
      accumulate_cell<T, T, DeviceInvSqrt>(t.x[k], t.y[k], t.z[k], cell, softening_squared, t.ax[k],
                                           t.ay[k], t.az[k]);
    }
  };
  const int stream = lane / kStreamLanes<kStreams>;
  if (count == kWarpSize) {
    // A full batch, its count known: two cells an iteration, half the loop's own instructions.
#pragma unroll 2
    for (int j = stream; j < kWarpSize; j += kStreams) interact(j);
  } else {
    for (int j = stream; j < count; j += kStreams) interact(j);
  }
  __syncwarp();
}

// Moves list[from, from + count) (count < 32) to the front.
__device__ __forceinline__ void move_to_front(std::uint32_t* list, int from, int count, int lane) {
  const std::uint32_t value = lane < count ? list[from + lane] : 0;
  __syncwarp();
  if (lane < count) list[lane] = value;
  __syncwarp();
}

// One walk's state (a warp's part of it, in a team): the lists' fill and what they listed.
struct WalkLists {
  int body_fill = 0;
  int cell_fill = 0;
  unsigned long long listed_bodies = 0;
  unsigned long long listed_cells = 0;
};

// Appends each lane's bodies [begin, begin + count) to the body list, evaluating every full batch
// of 32; the rest (under 32) stays listed.
template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void append_bodies(WarpScratch<T>& scratch, std::uint32_t begin,
                                              int count, const TraversalArgs<T>& args, int lane,
                                              Targets<T, kSlots, kStreams>& t, WalkLists& lists) {
  int total = 0;
  const int offset = warp_exclusive_scan(count, lane, total);
  lists.listed_bodies += static_cast<unsigned>(total);
  for (int written = 0; written < total;) {
    const int window = min(kBodyListCapacity - lists.body_fill, total - written);
    const int from = max(offset, written);
    const int to = min(offset + count, written + window);
    for (int v = from; v < to; ++v) {
      scratch.body_list[lists.body_fill + v - written] = begin + static_cast<unsigned>(v - offset);
    }
    lists.body_fill += window;
    written += window;
    __syncwarp();
    const int batches = lists.body_fill / kWarpSize;
    for (int b = 0; b < batches; ++b) {
      evaluate_bodies(scratch, scratch.body_list + b * kWarpSize, kWarpSize, args.sorted,
                      args.softening_squared, lane, t);
    }
    if (batches > 0) {
      lists.body_fill -= batches * kWarpSize;
      move_to_front(scratch.body_list, batches * kWarpSize, lists.body_fill, lane);
    }
  }
}

// A warp's test of the cells it popped (a lane each, where active): the accepted ones listed, and
// whether the lane's cell opens, with the cell itself.
struct TestedCell {
  GpuCell cell;
  bool opened;
};

template <class T>
__device__ __forceinline__ TestedCell test_cell(WarpScratch<T>& scratch, bool active,
                                                std::uint32_t c, const Box& group,
                                                const TraversalArgs<T>& args, int lane,
                                                WalkLists& lists) {
  GpuCell cell{};
  bool accepted = false;
  if (active) {
    cell = args.cells[c];
    accepted = accepts(group, args.criterion[c], args.theta_squared);
  }
  const unsigned accepted_mask = __ballot_sync(kFullMask, accepted);
  const unsigned lanes_below = (1u << lane) - 1;
  if (accepted) scratch.cell_list[lists.cell_fill + __popc(accepted_mask & lanes_below)] = c;
  lists.cell_fill += __popc(accepted_mask);
  lists.listed_cells += static_cast<unsigned>(__popc(accepted_mask));
  return {cell, active && !accepted};
}

// After a test: the opened leaves' bodies listed, and a full batch of cells evaluated.
template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void list_and_evaluate(WarpScratch<T>& scratch, const TestedCell& tested,
                                                  const TraversalArgs<T>& args, int lane,
                                                  Targets<T, kSlots, kStreams>& t,
                                                  WalkLists& lists) {
  const bool opened_leaf = tested.opened && tested.cell.child_count == 0;
  append_bodies(scratch, tested.cell.begin,
                opened_leaf ? static_cast<int>(tested.cell.end - tested.cell.begin) : 0, args, lane,
                t, lists);
  __syncwarp();
  if (lists.cell_fill >= kWarpSize) {
    evaluate_cells(scratch, kWarpSize, args.multipoles, args.softening_squared, lane, t);
    lists.cell_fill -= kWarpSize;
    move_to_front(scratch.cell_list, kWarpSize, lists.cell_fill, lane);
  }
}

// What is left listed at the end of a walk.
template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void evaluate_rest(WarpScratch<T>& scratch, const TraversalArgs<T>& args,
                                              int lane, Targets<T, kSlots, kStreams>& t,
                                              WalkLists& lists) {
  evaluate_cells(scratch, lists.cell_fill, args.multipoles, args.softening_squared, lane, t);
  evaluate_bodies(scratch, scratch.body_list, lists.body_fill, args.sorted, args.softening_squared,
                  lane, t);
}

// One walk from the root for the group's box by one warp, evaluating the lists as they fill.
template <class T, int kSlots, int kStreams>
__device__ __forceinline__ WalkLists walk(WarpScratch<T>& scratch, const Box& group,
                                          std::uint32_t* stack, const TraversalArgs<T>& args,
                                          int lane, Targets<T, kSlots, kStreams>& t) {
  WalkLists lists;
  int stack_size = 1;
  if (lane == 0) stack[0] = 0;
  __syncwarp();
  while (stack_size > 0) {
    const int take = min(kWarpSize, stack_size);
    stack_size -= take;
    const bool active = lane < take;
    const std::uint32_t c = active ? stack[stack_size + lane] : 0;
    __syncwarp();
    const TestedCell tested = test_cell(scratch, active, c, group, args, lane, lists);
    int children = tested.opened ? tested.cell.child_count : 0;
    int children_total = 0;
    const int child_offset = warp_exclusive_scan(children, lane, children_total);
    if (stack_size + children_total > static_cast<int>(kTraversalStackCapacity)) {
      if (lane == 0) atomicAdd(&args.counters->stack_overflow, 1u);
      children = children_total = 0;
    }
    for (int k = 0; k < children; ++k) {
      stack[stack_size + child_offset + k] = tested.cell.first_child + k;
    }
    stack_size += children_total;
    list_and_evaluate(scratch, tested, args, lane, t, lists);
  }
  evaluate_rest(scratch, args, lane, t, lists);
  return lists;
}

// The children each warp of a team pushes in a round of its walk, so that each places its own
// after the warps' before it.
template <int kMembers>
struct TeamRound {
  int children[kMembers];
};

// One walk from the root by a team of kMembers warps (the block) sharing one stack: each round
// the team pops up to 32 cells a warp, each warp tests its own and lists and evaluates what it
// accepts or opens, and the children are pushed in the warps' order, so that the lists are fixed
// for a team size. No cell is tested twice, and a walk takes a round for every 32 kMembers cells
// of the tree's front where one warp alone takes one for every 32.
template <class T, int kSlots, int kStreams, int kMembers>
__device__ __forceinline__ WalkLists walk_as_team(WarpScratch<T>& scratch, const Box& group,
                                                  std::uint32_t* stack, TeamRound<kMembers>& round,
                                                  const TraversalArgs<T>& args, int lane,
                                                  int member, Targets<T, kSlots, kStreams>& t) {
  constexpr int kCapacity = kMembers * static_cast<int>(kTraversalStackCapacity);
  WalkLists lists;
  int stack_size = 1;
  if (threadIdx.x == 0) stack[0] = 0;
  __syncthreads();
  while (stack_size > 0) {
    const int take = min(kWarpSize * kMembers, stack_size);
    const int base = stack_size - take;
    // Dealt a cell to each warp in turn: neighbouring cells, opened or accepted alike, go to
    // different warps, which so list alike and reach the round's barrier together.
    const int dealt = lane * kMembers + member;
    const bool active = dealt < take;
    const std::uint32_t c = active ? stack[base + dealt] : 0;
    const TestedCell tested = test_cell(scratch, active, c, group, args, lane, lists);
    int children = tested.opened ? tested.cell.child_count : 0;
    int warp_total = 0;
    const int child_offset = warp_exclusive_scan(children, lane, warp_total);
    if (lane == 0) round.children[member] = warp_total;
    __syncthreads();  // every warp has read its cells and published its count
    int before = 0, team_total = 0;
#pragma unroll
    for (int m = 0; m < kMembers; ++m) {
      before += m < member ? round.children[m] : 0;
      team_total += round.children[m];
    }
    if (base + team_total > kCapacity) {
      if (threadIdx.x == 0) atomicAdd(&args.counters->stack_overflow, 1u);
      children = team_total = 0;
    }
    for (int k = 0; k < children; ++k) {
      stack[base + before + child_offset + k] = tested.cell.first_child + k;
    }
    stack_size = base + team_total;
    list_and_evaluate(scratch, tested, args, lane, t, lists);
    __syncthreads();  // the pushes seen by every warp, and the counts read before they change
  }
  evaluate_rest(scratch, args, lane, t, lists);
  return lists;
}

// Where a member leaves its share of the accelerations for the first member to sum: the cells of
// its scratch, unused once its walk is done.
template <class T>
__device__ __forceinline__ T* share_of(WarpScratch<T>& scratch) {
  static_assert(sizeof(WarpScratch<T>::cells) >= 3 * kTargetsPerWalk * sizeof(T));
  return reinterpret_cast<T*>(scratch.cells);
}

// The first stream's lanes take the other streams' sums of their targets, in pairs: ((s0 + s1) +
// (s2 + s3)) with four streams, the same order in every lane.
template <class T, int kSlots, int kStreams>
__device__ __forceinline__ void sum_streams(Targets<T, kSlots, kStreams>& t) {
#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
#pragma unroll
    for (int offset = kStreamLanes<kStreams>; offset < kWarpSize; offset *= 2) {
      t.ax[k] += __shfl_down_sync(kFullMask, t.ax[k], offset);
      t.ay[k] += __shfl_down_sync(kFullMask, t.ay[k], offset);
      t.az[k] += __shfl_down_sync(kFullMask, t.az[k], offset);
    }
  }
}

// The walk of the targets [first, end) (at most kStreamLanes kSlots) by one warp, or by the
// `member`th warp of a team: its streams' sums added, its share of the accelerations summed with
// the other members' (in the members' order, through each one's scratch) and stored by the first
// member's first stream.
template <class T, int kSlots, int kStreams, int kMembers>
__device__ __forceinline__ WalkLists walk_targets(WarpScratch<T>& scratch, const Box& box,
                                                  std::uint32_t first, std::uint32_t end,
                                                  std::uint32_t* stack,
                                                  const TraversalArgs<T>& args, int lane,
                                                  int member, WarpScratch<T>* team,
                                                  TeamRound<kMembers>& round) {
  Targets<T, kSlots, kStreams> t;
  const int position = lane % kStreamLanes<kStreams>;
  const bool first_stream = lane < kStreamLanes<kStreams>;
#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
    const std::uint32_t target = first + k * kStreamLanes<kStreams> + position;
    // A lane past the walk's end computes for its first target and stores nothing.
    const Body<T> b = args.sorted[target < end ? target : first];
    t.x[k] = b.x;
    t.y[k] = b.y;
    t.z[k] = b.z;
    t.ax[k] = t.ay[k] = t.az[k] = T(0);
  }
  t.used_slots =
      (static_cast<int>(end - first) + kStreamLanes<kStreams> - 1) / kStreamLanes<kStreams>;
  WalkLists lists;
  if constexpr (kMembers > 1) {
    lists = walk_as_team(scratch, box, stack, round, args, lane, member, t);
  } else {
    lists = walk(scratch, box, stack, args, lane, t);
  }
  sum_streams(t);
  if constexpr (kMembers > 1) {
    T* mine = share_of(team[member]);
    if (first_stream) {
#pragma unroll
      for (int k = 0; k < kSlots; ++k) {
        mine[(3 * k + 0) * kStreamLanes<kStreams> + position] = t.ax[k];
        mine[(3 * k + 1) * kStreamLanes<kStreams> + position] = t.ay[k];
        mine[(3 * k + 2) * kStreamLanes<kStreams> + position] = t.az[k];
      }
    }
    __syncthreads();
    if (member == 0 && first_stream) {
      for (int m = 1; m < kMembers; ++m) {
        const T* theirs = share_of(team[m]);
#pragma unroll
        for (int k = 0; k < kSlots; ++k) {
          t.ax[k] += theirs[(3 * k + 0) * kStreamLanes<kStreams> + position];
          t.ay[k] += theirs[(3 * k + 1) * kStreamLanes<kStreams> + position];
          t.az[k] += theirs[(3 * k + 2) * kStreamLanes<kStreams> + position];
        }
      }
    }
    __syncthreads();
  }
  if (member == 0 && first_stream) {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const std::uint32_t target = first + k * kStreamLanes<kStreams> + position;
      if (target < end) args.accelerations[args.input_index[target]] = {t.ax[k], t.ay[k], t.az[k]};
    }
  }
  return lists;
}

// Warps of a block: teams of kMembers warps, or kTraversalWarpsPerBlock warps each its own team.
template <int kMembers>
inline constexpr int kBlockWarps = kMembers > 1 ? kMembers : kTraversalWarpsPerBlock;

// The next walk of a warp's team (taken by its first lane, or the block's first thread).
template <int kMembers>
__device__ __forceinline__ unsigned next_walk(TreeCounters* counters, int lane) {
  if constexpr (kMembers > 1) {
    __shared__ unsigned taken;
    if (threadIdx.x == 0) taken = atomicAdd(&counters->next_walk, 1u);
    __syncthreads();
    const unsigned w = taken;
    __syncthreads();
    return w;
  } else {
    unsigned w = 0;
    if (lane == 0) w = atomicAdd(&counters->next_walk, 1u);
    return __shfl_sync(kFullMask, w, 0);
  }
}

template <class T, int kMembers>
__global__ void __launch_bounds__(kBlockWarps<kMembers>* kWarpSize,
                                  kMembers == 1 ? kMinBlocksPerSm<T> : 0)
    traversal_kernel(TraversalArgs<T> args) {
  constexpr int kWarps = kBlockWarps<kMembers>;
  constexpr int kStreams = kStreamsFor<T, kMembers>;
  // Dynamic: a team of 16 warps' scratch is more than a block's 48 KB of static shared memory.
  extern __shared__ __align__(16) unsigned char traversal_shared[];
  WarpScratch<T>* block_scratch = reinterpret_cast<WarpScratch<T>*>(traversal_shared);
  __shared__ TeamRound<kMembers> round;
  const int lane = threadIdx.x % kWarpSize;
  const int warp_in_block = threadIdx.x / kWarpSize;
  const int member = kMembers > 1 ? warp_in_block : 0;
  WarpScratch<T>& scratch = block_scratch[warp_in_block];
  // A warp's stack, or a team's: its warps' stacks end to end.
  const std::size_t warp = std::size_t{blockIdx.x} * kWarps + (kMembers > 1 ? 0 : warp_in_block);
  std::uint32_t* stack = args.stacks + warp * kTraversalStackCapacity;
  // A tree built from keys the sort by halves left out of order, or cut off at the cells'
  // capacity, is built and walked again once the host has read the counters; walked now, its links
  // may lead a walk round in circles.
  if (args.counters->long_key_runs != 0 || args.counters->cells > args.cell_capacity) return;
  const unsigned walk_count = args.counters->walks;
  unsigned long long body_body = 0, body_cell = 0;
  for (;;) {
    const unsigned w = next_walk<kMembers>(args.counters, lane);
    if (w >= walk_count) break;
    const WalkItem item = args.walks[w];
    const std::uint32_t first = item.first_target;
    const std::uint32_t end = item.end_target;
    Box group = args.moments[item.first_cell].box;
    for (std::uint32_t k = 1; k < item.cell_count; ++k) {
      widen_box(group, args.moments[item.first_cell + k].box);
    }
    if constexpr (kGroupBoxShared<T>) {
      __syncwarp();  // every lane is done with the last walk's box
      if (lane == 0) scratch.group = group;
      __syncwarp();
    }
    const Box& box = kGroupBoxShared<T> ? scratch.group : group;
    const WalkLists lists =
        end - first <= kTargetsPerWalk / 2
            ? walk_targets<T, kTargetsPerLane<kStreams> / 2, kStreams, kMembers>(
                  scratch, box, first, end, stack, args, lane, member, block_scratch, round)
            : walk_targets<T, kTargetsPerLane<kStreams>, kStreams, kMembers>(
                  scratch, box, first, end, stack, args, lane, member, block_scratch, round);
    body_body += (end - first) * lists.listed_bodies;
    body_cell += (end - first) * lists.listed_cells;
  }
  // Each warp of a team lists its own part of the walk.
  if (lane == 0) {
    atomicAdd(&args.counters->body_body, body_body);
    atomicAdd(&args.counters->body_cell, body_cell);
  }
}

// The team sizes a launch may take.
template <class T, class F>
void with_team_kernel(int members, F&& use) {
  switch (members) {
    case 1:
      return use(traversal_kernel<T, 1>, kBlockWarps<1>);
    case 2:
      return use(traversal_kernel<T, 2>, kBlockWarps<2>);
    case 4:
      return use(traversal_kernel<T, 4>, kBlockWarps<4>);
    case 8:
      return use(traversal_kernel<T, 8>, kBlockWarps<8>);
    case 16:
      return use(traversal_kernel<T, 16>, kBlockWarps<16>);
    default:
      throw std::invalid_argument("traversal: a team of 1, 2, 4, 8 or 16 warps");
  }
}

}  // namespace

template <class T>
TraversalLaunch traversal_launch(int device, int members) {
  TraversalLaunch launch{.members = members};
  with_team_kernel<T>(members, [&](auto kernel, int warps) {
    const std::size_t shared_bytes = warps * sizeof(WarpScratch<T>);
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared_bytes)));
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, warps * kWarpSize,
                                                             shared_bytes));
    int sm_count = 0;
    check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    launch.blocks = std::max(1, per_sm) * sm_count;
    launch.warps_per_block = warps;
  });
  return launch;
}

template <class T>
void enqueue_traversal(const TraversalArgs<T>& args, const TraversalLaunch& launch,
                       cudaStream_t stream) {
  with_team_kernel<T>(launch.members, [&](auto kernel, int warps) {
    kernel<<<launch.blocks, warps * kWarpSize, warps * sizeof(WarpScratch<T>), stream>>>(args);
    check_launch();
  });
}

template TraversalLaunch traversal_launch<float>(int, int);
template TraversalLaunch traversal_launch<double>(int, int);
template void enqueue_traversal<float>(const TraversalArgs<float>&, const TraversalLaunch&,
                                       cudaStream_t);
template void enqueue_traversal<double>(const TraversalArgs<double>&, const TraversalLaunch&,
                                        cudaStream_t);

}  // namespace nbody::gpu::tree::detail
