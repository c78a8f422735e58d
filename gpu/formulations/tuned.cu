// gpu.tuned and gpu.tuned.f64: the all-pairs kernel tuned for sm_90 (docs/perf-notes.md, GPU).
//
// The inner loop is issue-bound: per interaction 3 FADD + 3 FFMA (softened distance), MUFU.RSQ,
// 3 FMUL, 3 FFMA (accumulation) = 13 issue slots, plus one LDS.128 shared by the thread's bodies.
// Hence:
//   - several bodies per thread: one shared-memory load feeds kBodiesPerThread interactions, and
//     their independent dependency chains hide MUFU and LDS latency without many warps;
//   - tiles of bodies staged through shared memory, read as broadcasts, loop unrolled;
//   - __launch_bounds__(128, 1): the compiler may take 108 registers for a deeper schedule; ncu
//     showed the issue slots, not the warp count, to be short (docs/perf-notes.md), and this shape
//     is 14% faster than the 71-register one at 28 warps per SM;
//   - the tile is stored mass first (m, x, y, z), so the LDS.128 of body j lands x_j, z_j in odd
//     registers and y_j in an even one, while the thread's own float4 x_i, z_i sit in even ones:
//     dx = x_j - x_i then never reads two registers of one register-file bank (ncu: issue slots
//     84% -> 87% busy, 3.5% faster at N = 1M);
//   - this file is compiled with -ftz=true, so rsqrtf is MUFU.RSQ alone (without it the compiler
//     adds a denormal fix-up of 3 instructions around it);
//   - split-j: when there are too few blocks of i bodies to fill every SM (small N), or the last
//     wave of blocks would leave SMs idle, the j range is split across blockIdx.y; the partial
//     sums are added in split order (deterministic) by a second kernel or, where there are few,
//     by the last block of an i range to finish (no second launch). The split count comes from the
//     SM count and the occupancy the device reports for the kernel, not from constants
//     (nbody/gpu/split_j_plan.hpp);
//   - a second, smaller shape for small N, where even split-j leaves the large shape blocks for
//     fewer than half the SMs (choose_shape);
//   - the leapfrog fused into the final store (nbody/gpu/leapfrog.cuh), so a time step of
//     `simulate` is one kernel.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/leapfrog.cuh"
#include "nbody/gpu/split_j_plan.hpp"

namespace nbody::gpu {

// The compile-time shape of the kernel; the tuning tool times several (tuned_variants()).
struct TunedShape {
  int bodies_per_thread;
  int block_size;  // threads per block = bodies per shared-memory tile
  int unroll;      // of the loop over a tile's bodies
  int min_blocks;  // second __launch_bounds__ argument; 0 leaves register allocation free
  bool prefetch;   // load the next j body from shared memory before using the current one
  // Split j also where that fills the last wave of blocks: the plan may be within 0.5% of its
  // model's best instead of 3% (at N = 65536 on 132 SMs: 57 splits instead of 8, +3.3%).
  bool exact_waves = false;
  // Shared-memory tile stored as (m, x, y, z) instead of (x, y, z, m): its LDS.128 then puts x_j
  // and z_j in odd registers and y_j in an even one, opposite the register banks of the thread's
  // own x_i, y_i, z_i (loaded as float4), so dx = x_j - x_i never reads two registers of one bank.
  bool mass_first_tile = false;

  std::string name() const {
    return std::to_string(bodies_per_thread) + "x" + std::to_string(block_size) + "u" +
           std::to_string(unroll) + (min_blocks > 0 ? "m" + std::to_string(min_blocks) : "") +
           (prefetch ? "p" : "") + (exact_waves ? "w" : "") + (mass_first_tile ? "r" : "");
  }
};

namespace {

template <class T>
struct alignas(4 * sizeof(T)) MassFirstBody {
  T m, x, y, z;
};

// Split-j's scratch: one row of partial sums per split and, where the last block adds them, per
// block of i bodies a count of the splits done (zero between launches: the last block resets it).
template <class T>
struct SplitScratch {
  Vec3<T>* partials;
  unsigned* arrivals;
  int tiles_per_split;
};

// The end of a block's work (first_i: its thread's first target, counted from args.first_target):
// its sums stored (and integrated, where the leapfrog is fused); under
// split-j, its partial sums stored and then either added by sum_partials, a second kernel, or
// (split.arrivals set) by the last block of the i range to arrive, in split order (the same sums,
// bit for bit, whichever block that is). Out of line, taking the sums through the stack: inlined,
// this code changed the register allocation of the kernel's inner loop and cost 1.6-2% at N = 1M
// (docs/perf-notes.md, "Time integration, second pass").
template <class T, int kBodiesPerThread, int kBlockSize>
__device__ __noinline__ void finish_block(const ForceArgs<T>& args, const LeapfrogArgs<T>& leapfrog,
                                          const SplitScratch<T>& split, int first_i,
                                          const T (&ax)[kBodiesPerThread],
                                          const T (&ay)[kBodiesPerThread],
                                          const T (&az)[kBodiesPerThread]) {
  if (gridDim.y == 1) {
#pragma unroll
    for (int b = 0; b < kBodiesPerThread; ++b) {
      store_with_leapfrog(args, leapfrog, first_i + b * kBlockSize, {ax[b], ay[b], az[b]});
    }
    return;
  }
  const auto row = [&](unsigned s) {
    return split.partials +
           static_cast<std::size_t>(s) * static_cast<std::size_t>(args.padded_target_count);
  };
  Vec3<T>* mine = row(blockIdx.y);
#pragma unroll
  for (int b = 0; b < kBodiesPerThread; ++b) mine[first_i + b * kBlockSize] = {ax[b], ay[b], az[b]};
  if (split.arrivals == nullptr) return;  // sum_partials adds them
  __shared__ bool last_to_arrive;
  __threadfence();  // this block's partial sums are visible to every block before it counts
  __syncthreads();
  if (threadIdx.x == 0) {
    last_to_arrive = atomicAdd(&split.arrivals[blockIdx.x], 1u) == gridDim.y - 1;
  }
  __syncthreads();
  if (!last_to_arrive) return;
  __threadfence();
  T sx[kBodiesPerThread] = {}, sy[kBodiesPerThread] = {}, sz[kBodiesPerThread] = {};
  // Unrolled so that several splits' loads are in flight at once (48 registers' worth per thread:
  // more would raise the kernel's register count, which counts this function's): one split at a
  // time, the kernel's tail was one L2 latency per split (about 10 us for 32 splits).
  constexpr int kRegistersPerSplit = kBodiesPerThread * static_cast<int>(sizeof(T) / 4);
  constexpr int kSplitsInFlight = kRegistersPerSplit >= 16 ? 1 : 16 / kRegistersPerSplit;
#pragma unroll kSplitsInFlight
  for (unsigned s = 0; s < gridDim.y; ++s) {
    const Vec3<T>* partial = row(s);
#pragma unroll
    for (int b = 0; b < kBodiesPerThread; ++b) {
      // Around L1, which may hold nothing of this launch's rows but must not serve stale lines.
      const Vec3<T>* p = partial + first_i + b * kBlockSize;
      sx[b] += __ldcg(&p->x);
      sy[b] += __ldcg(&p->y);
      sz[b] += __ldcg(&p->z);
    }
  }
#pragma unroll
  for (int b = 0; b < kBodiesPerThread; ++b) {
    store_with_leapfrog(args, leapfrog, first_i + b * kBlockSize, {sx[b], sy[b], sz[b]});
  }
  if (threadIdx.x == 0) split.arrivals[blockIdx.x] = 0;  // ready for the next launch
}

// The kernel takes the shape's fields one by one: nvcc's host stubs cannot name a class-type
// template argument.
template <class T, int kBodiesPerThread, int kBlockSize, int kUnroll, int kMinBlocks,
          bool kPrefetch, bool kMassFirstTile>
__global__ void __launch_bounds__(kBlockSize, kMinBlocks)
    tuned_forces(ForceArgs<T> args, LeapfrogArgs<T> leapfrog, SplitScratch<T> split) {
  constexpr int kBodiesPerBlock = kBlockSize * kBodiesPerThread;
  using TileBody = std::conditional_t<kMassFirstTile, MassFirstBody<T>, Body<T>>;
  __shared__ TileBody tile[kBlockSize];
  // The thread's bodies are kBlockSize apart, so each of its loads is coalesced across the block.
  // first_i counts targets (from args.first_target), as the accelerations do.
  const int first_i =
      static_cast<int>(blockIdx.x) * kBodiesPerBlock + static_cast<int>(threadIdx.x);
  const T eps2 = args.softening_squared;
  T x[kBodiesPerThread], y[kBodiesPerThread], z[kBodiesPerThread];
  T ax[kBodiesPerThread], ay[kBodiesPerThread], az[kBodiesPerThread];
#pragma unroll
  for (int b = 0; b < kBodiesPerThread; ++b) {
    const Body<T> bi = args.bodies[args.first_target + first_i + b * kBlockSize];
    x[b] = bi.x;
    y[b] = bi.y;
    z[b] = bi.z;
    ax[b] = ay[b] = az[b] = 0;
  }
  const auto interact_all = [&](const TileBody& bj) {
#pragma unroll
    for (int b = 0; b < kBodiesPerThread; ++b) {
      accumulate_interaction<T, DeviceInvSqrt>(x[b], y[b], z[b], bj.x, bj.y, bj.z, bj.m, eps2,
                                               ax[b], ay[b], az[b]);
    }
  };
  const int tile_count = args.padded_count / kBlockSize;
  const int first_tile = static_cast<int>(blockIdx.y) * split.tiles_per_split;
  // The last split takes every tile left: a slice's padding may add a tile to the plan's.
  const int end_tile = blockIdx.y + 1 == gridDim.y
                           ? tile_count
                           : min(first_tile + split.tiles_per_split, tile_count);
  for (int t = first_tile; t < end_tile; ++t) {
    __syncthreads();  // everyone is done with the previous tile
    const Body<T> loaded = args.bodies[t * kBlockSize + static_cast<int>(threadIdx.x)];
    if constexpr (kMassFirstTile) {
      tile[threadIdx.x] = {loaded.m, loaded.x, loaded.y, loaded.z};
    } else {
      tile[threadIdx.x] = loaded;
    }
    __syncthreads();
    if constexpr (kPrefetch) {
      // The shared-memory latency of body k+1 overlaps the arithmetic of body k.
      TileBody bj = tile[0];
#pragma unroll kUnroll
      for (int k = 1; k < kBlockSize; ++k) {
        const TileBody next = tile[k];
        interact_all(bj);
        bj = next;
      }
      interact_all(bj);
    } else {
#pragma unroll kUnroll
      for (int k = 0; k < kBlockSize; ++k) interact_all(tile[k]);  // a broadcast: same address
    }
  }
  finish_block<T, kBodiesPerThread, kBlockSize>(args, leapfrog, split, first_i, ax, ay, az);
}

constexpr int kReduceBlockSize = 256;

// accelerations[i] = the sum over splits of partials[split][i], in split order (then integrated,
// where the leapfrog is fused): split-j's second kernel, where the last block would have too many
// partial sums to add (TunedKernel).
template <class T>
__global__ void __launch_bounds__(kReduceBlockSize)
    sum_partials(ForceArgs<T> args, LeapfrogArgs<T> leapfrog, const Vec3<T>* __restrict__ partials,
                 int splits) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);  // the i-th target
  if (i >= args.target_count) return;
  T sx = 0, sy = 0, sz = 0;
  for (int s = 0; s < splits; ++s) {
    const Vec3<T> p = partials[static_cast<std::size_t>(s) * args.padded_target_count + i];
    sx += p.x;
    sy += p.y;
    sz += p.z;
  }
  store_with_leapfrog(args, leapfrog, i, {sx, sy, sz});
}

template <class T>
using TunedKernelFunction = void (*)(ForceArgs<T>, LeapfrogArgs<T>, SplitScratch<T>);

// A shape and its kernel, a candidate of TunedKernel's choice.
template <class T>
struct ShapeCandidate {
  TunedShape shape;
  TunedKernelFunction<T> kernel;
};

template <class T, TunedShape kShape>
ShapeCandidate<T> candidate() {
  return {kShape, tuned_forces<T, kShape.bodies_per_thread, kShape.block_size, kShape.unroll,
                               kShape.min_blocks, kShape.prefetch, kShape.mass_first_tile>};
}

// One launch plan for `target_count` of `count` bodies: the shape, its split of the j range and its
// grid (blocks of targets in x, splits of the sources in y).
template <class T>
struct ShapePlan {
  ShapeCandidate<T> candidate;
  int blocks_per_sm = 0;
  SplitPlan split;
  dim3 grid;

  ShapePlan(const ShapeCandidate<T>& shape, const DeviceContext& device, int count,
            int target_count)
      : candidate(shape) {
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, shape.kernel,
                                                             shape.shape.block_size, 0));
    const TileGrid tile_grid = plan_tile_grid({.bodies_per_thread = shape.shape.bodies_per_thread,
                                               .block_size = shape.shape.block_size,
                                               .exact_waves = shape.shape.exact_waves,
                                               .sm_count = device.properties.multiProcessorCount,
                                               .blocks_per_sm = blocks_per_sm,
                                               .partial_sum_bytes = sizeof(Vec3<T>)},
                                              count, target_count);
    split = tile_grid.split;
    grid = dim3(static_cast<unsigned>(tile_grid.i_blocks), static_cast<unsigned>(split.splits));
  }

  int padding_multiple() const {
    return candidate.shape.block_size * candidate.shape.bodies_per_thread;
  }
  long long blocks() const { return static_cast<long long>(grid.x) * grid.y; }
};

// The first shape whose plan gives at least half the SMs a block; where none does (the smallest
// N), the one with the most blocks. Shapes come largest first: more bodies per thread hide more
// latency (at N = 4096 on 132 SMs the large shape's 128 blocks beat the small shape's 1024,
// docs/perf-notes.md, "Time integration, second pass").
template <class T>
ShapePlan<T> choose_shape(const std::vector<ShapeCandidate<T>>& shapes, const DeviceContext& device,
                          int count, int target_count) {
  std::optional<ShapePlan<T>> most_blocks;
  for (const ShapeCandidate<T>& shape : shapes) {
    ShapePlan<T> plan(shape, device, count, target_count);
    if (2 * plan.blocks() >= device.properties.multiProcessorCount) return plan;
    if (!most_blocks || plan.blocks() > most_blocks->blocks()) most_blocks = plan;
  }
  return *most_blocks;
}

template <class T>
class TunedKernel final : public ForceKernel<T> {
 public:
  TunedKernel(const DeviceContext& device, int count, int target_count,
              const std::vector<ShapeCandidate<T>>& shapes)
      : plan_(choose_shape(shapes, device, count, target_count)),
        target_count_(target_count),
        last_block_adds_(last_block_adds(plan_.split, plan_.candidate.shape.bodies_per_thread)) {
    if (plan_.split.splits > 1) {
      const std::size_t padded =
          static_cast<std::size_t>(round_up(target_count, padding_multiple()));
      partials_ = DeviceBuffer<Vec3<T>>(static_cast<std::size_t>(plan_.split.splits) * padded);
      if (last_block_adds_) {
        arrivals_ = DeviceBuffer<unsigned>(plan_.grid.x);
        check_cuda(cudaMemset(arrivals_.data(), 0, arrivals_.bytes()));
        check_cuda(cudaDeviceSynchronize());  // before any stream, blocking or not, uses them
      }
    }
  }

  int padding_multiple() const override { return plan_.padding_multiple(); }

  void enqueue(const ForceArgs<T>& args, cudaStream_t stream) override {
    enqueue_with_leapfrog(args, LeapfrogArgs<T>{}, stream);
  }

  bool fuses_leapfrog() const override { return true; }

  void enqueue_with_leapfrog(const ForceArgs<T>& args, const LeapfrogArgs<T>& leapfrog,
                             cudaStream_t stream) override {
    plan_.candidate.kernel<<<plan_.grid, plan_.candidate.shape.block_size, 0, stream>>>(
        args, leapfrog, {partials_.data(), arrivals_.data(), plan_.split.tiles_per_split});
    check_launch();
    if (plan_.split.splits > 1 && !last_block_adds_) {
      const unsigned grid =
          static_cast<unsigned>((target_count_ + kReduceBlockSize - 1) / kReduceBlockSize);
      sum_partials<T><<<grid, kReduceBlockSize, 0, stream>>>(args, leapfrog, partials_.data(),
                                                             plan_.split.splits);
      check_launch();
    }
  }

  LaunchDescription describe() const override {
    const TunedShape& shape = plan_.candidate.shape;
    LaunchDescription launch;
    launch.grid = plan_.grid;
    launch.block = dim3(static_cast<unsigned>(shape.block_size));
    launch.bodies_per_thread = shape.bodies_per_thread;
    launch.threads_per_body = plan_.split.splits;
    launch.shared_memory_bytes = static_cast<std::size_t>(shape.block_size) * sizeof(Body<T>);
    const char* reduction = plan_.split.splits == 1 ? "none"
                            : last_block_adds_ ? "the last block of each i range, in split order"
                                               : "a second kernel, in split order";
    launch.extra = {{"j_splits", std::to_string(plan_.split.splits)},
                    {"tiles_per_split", std::to_string(plan_.split.tiles_per_split)},
                    {"blocks_per_sm", std::to_string(plan_.blocks_per_sm)},
                    {"shape", shape.name()},
                    {"reduction", reduction}};
    return launch;
  }

 private:
  ShapePlan<T> plan_;
  int target_count_;
  bool last_block_adds_;
  DeviceBuffer<Vec3<T>> partials_;
  DeviceBuffer<unsigned> arrivals_;  // only where the last block adds the partial sums
};

// Small N: one kernel whose block holds every body in shared memory; its 32 i bodies (one per
// lane) meet the j range split across the block's warps, and warp 0 adds the warps' sums in warp
// order (deterministic) and stores them (with the fused leapfrog). No partial sums leave the SM,
// so a step is one launch without split-j's global round trips, fence and counter, which made up
// most of the tile kernel's 11.5 us at N = 1024 (docs/perf-notes.md, "Time integration, second
// pass").
constexpr int kWarpSplitWarps = 16;
constexpr int kWarpSplitBlock = kWarpSplitWarps * 32;
// Where it is used: at most this many bodies. Measured on the H100 in kernel scope against the tile
// kernel: float32 9 against 16 us at 1K, 17 against 22 at 4K, 46 against 50 at 8K, but 95 against
// 89 at 12K, where one block per SM (192 KB of shared memory) no longer fills the GPU; float64 14
// against 40 us at 1K, 34 against 51 at 4K, 87 against 83 at 6K. 8 and 32 warps measured within 1
// us of 16 up to 8K (docs/perf-notes.md, "The warp-split kernel").
template <class T>
constexpr int kWarpSplitMaxBodies = std::is_same_v<T, float> ? 8192 : 4096;

template <class T>
__global__ void __launch_bounds__(kWarpSplitBlock)
    warp_split_forces(ForceArgs<T> args, LeapfrogArgs<T> leapfrog) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Body<T>* bodies = reinterpret_cast<Body<T>*>(shared_bytes);                   // padded_count
  Vec3<T>* warp_sums = reinterpret_cast<Vec3<T>*>(bodies + args.padded_count);  // [warp][lane]
  for (int k = static_cast<int>(threadIdx.x); k < args.padded_count; k += kWarpSplitBlock) {
    bodies[k] = args.bodies[k];
  }
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int i = static_cast<int>(blockIdx.x) * 32 + lane;  // the i-th target
  __syncthreads();
  const Body<T> bi = bodies[args.first_target + i];
  const T eps2 = args.softening_squared;
  T ax = 0, ay = 0, az = 0;
  const int per_warp = args.padded_count / kWarpSplitWarps;
  const int first_j = warp * per_warp;
#pragma unroll 8
  for (int j = first_j; j < first_j + per_warp; ++j) {
    const Body<T> bj = bodies[j];  // a broadcast: one address per warp
    accumulate_interaction<T, DeviceInvSqrt>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, bj.m, eps2, ax, ay,
                                             az);
  }
  warp_sums[warp * 32 + lane] = {ax, ay, az};
  __syncthreads();
  if (warp != 0) return;
  T sx = 0, sy = 0, sz = 0;
#pragma unroll
  for (int w = 0; w < kWarpSplitWarps; ++w) {
    const Vec3<T> part = warp_sums[w * 32 + lane];
    sx += part.x;
    sy += part.y;
    sz += part.z;
  }
  store_with_leapfrog(args, leapfrog, i, {sx, sy, sz});
}

template <class T>
std::size_t warp_split_shared_bytes(int padded_count) {
  return static_cast<std::size_t>(padded_count) * sizeof(Body<T>) +
         static_cast<std::size_t>(kWarpSplitBlock) * sizeof(Vec3<T>);
}

// The most bodies, padding included, a warp-split launch for `target_count` of `count` holds: a
// slice's padded targets may reach one block's worth of bodies past the padded count.
inline int warp_split_max_padded(int count, int target_count) {
  return round_up(count, kWarpSplitBlock) + (target_count < count ? kWarpSplitBlock : 0);
}

// Whether warp_split_forces runs `target_count` of `count` bodies: few enough, and its shared
// memory fits.
template <class T>
bool warp_split_suits(const DeviceContext& device, int count, int target_count) {
  return count <= kWarpSplitMaxBodies<T> &&
         warp_split_shared_bytes<T>(warp_split_max_padded(count, target_count)) <=
             device.properties.sharedMemPerBlockOptin;
}

template <class T>
class WarpSplitKernel final : public ForceKernel<T> {
 public:
  WarpSplitKernel(int count, int target_count)
      : padded_targets_(round_up(target_count, kWarpSplitBlock)),
        max_shared_bytes_(warp_split_shared_bytes<T>(warp_split_max_padded(count, target_count))) {
    check_cuda(cudaFuncSetAttribute(warp_split_forces<T>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(max_shared_bytes_)));
  }

  // Whole warps' worth of j for every warp of the block.
  int padding_multiple() const override { return kWarpSplitBlock; }

  void enqueue(const ForceArgs<T>& args, cudaStream_t stream) override {
    enqueue_with_leapfrog(args, LeapfrogArgs<T>{}, stream);
  }

  bool fuses_leapfrog() const override { return true; }

  void enqueue_with_leapfrog(const ForceArgs<T>& args, const LeapfrogArgs<T>& leapfrog,
                             cudaStream_t stream) override {
    warp_split_forces<T><<<static_cast<unsigned>(args.padded_target_count / 32), kWarpSplitBlock,
                           warp_split_shared_bytes<T>(args.padded_count), stream>>>(args, leapfrog);
    check_launch();
  }

  LaunchDescription describe() const override {
    LaunchDescription launch;
    launch.grid = dim3(static_cast<unsigned>(padded_targets_ / 32));
    launch.block = dim3(kWarpSplitBlock);
    launch.bodies_per_thread = 1;
    launch.threads_per_body = kWarpSplitWarps;
    launch.shared_memory_bytes = max_shared_bytes_;
    launch.extra = {{"shape", "warp-split: every body in shared memory, j split over " +
                                  std::to_string(kWarpSplitWarps) + " warps"},
                    {"j_splits", std::to_string(kWarpSplitWarps)},
                    {"reduction", "warp 0 of each block, in warp order, in shared memory"}};
    return launch;
  }

 private:
  int padded_targets_;
  std::size_t max_shared_bytes_;  // a launch takes what its padded count needs, at most this
};

template <class T, TunedShape kShape, TunedShape... kSmallerShapes>
ImplementationInfo tuned_info(std::string name, std::string description) {
  const bool f32 = std::is_same_v<T, float>;
  std::vector<std::string> optimizations = {
      std::to_string(kShape.bodies_per_thread) + " bodies per thread",
      "shared-memory tiles of " + std::to_string(kShape.block_size) + " (broadcast loads)",
      "unrolled x" + std::to_string(kShape.unroll),
      f32 ? "rsqrtf (MUFU.RSQ), -ftz=true" : kDeviceFloat64InvCube,
      "split-j for small N (splits from SM count and occupancy)"};
  ((optimizations.push_back("small N: " + std::to_string(kSmallerShapes.bodies_per_thread) +
                            " bodies per thread, blocks of " +
                            std::to_string(kSmallerShapes.block_size) +
                            " where the large shape gives blocks to fewer than half the SMs")),
   ...);
  if (sizeof...(kSmallerShapes) > 0) {
    optimizations.push_back("N <= " + std::to_string(kWarpSplitMaxBodies<T>) +
                            " (where they fit): every body in shared memory, j split over " +
                            std::to_string(kWarpSplitWarps) + " warps, one launch");
  }
  optimizations.push_back("leapfrog fused into the final store (simulate: one kernel per step)");
  if (kShape.min_blocks == 1) {
    optimizations.push_back("__launch_bounds__ min 1 block: registers for ILP over occupancy");
  }
  if (kShape.prefetch) optimizations.push_back("next j body prefetched from shared memory");
  if (kShape.exact_waves) optimizations.push_back("split-j also to fill the last wave of blocks");
  if (kShape.mass_first_tile) {
    optimizations.push_back(
        "tile stored mass first: j and i coordinates in opposite register banks");
  }
  return {.name = std::move(name),
          .description = std::move(description),
          .layout = Layout::aos,
          .precision = f32 ? Precision::f32 : Precision::f64,
          .optimizations = std::move(optimizations),
          .tolerance = f32 ? gpu_float32_tolerance() : gpu_float64_tolerance()};
}

// gpu.tuned with the shapes it may choose from, largest first (choose_shape).
template <class T, TunedShape kShape, TunedShape... kSmallerShapes>
Implementation make_tuned(std::string name, std::string description) {
  return make_gpu_implementation<T>(
      tuned_info<T, kShape, kSmallerShapes...>(std::move(name), std::move(description)),
      [](const DeviceContext& device, int count,
         int target_count) -> std::unique_ptr<ForceKernel<T>> {
        // The shipped formulations (those with a small shape) take warp-split at small N.
        if (sizeof...(kSmallerShapes) > 0 && warp_split_suits<T>(device, count, target_count)) {
          return std::make_unique<WarpSplitKernel<T>>(count, target_count);
        }
        return std::make_unique<TunedKernel<T>>(
            device, count, target_count,
            std::vector<ShapeCandidate<T>>{candidate<T, kShape>(),
                                           candidate<T, kSmallerShapes>()...});
      },
      // The partial sums of split-j.
      [](std::size_t) { return kMaxPartialBytes; });
}

template <class T, TunedShape kShape>
Implementation make_tuned_variant() {
  Implementation variant =
      make_tuned<T, kShape>(std::string(std::is_same_v<T, float> ? "gpu.tuned" : "gpu.tuned.f64") +
                                "[" + kShape.name() + "]",
                            "tuning variant of gpu.tuned: " + kShape.name());
  variant.info.role = Role::tuning_variant;
  return variant;
}

// The shipped shapes, chosen by timing the variants (`nbody-fair bench --variants`) on an H200
// (docs/perf-notes.md, GPU).
constexpr TunedShape kFloatShape{.bodies_per_thread = 8,
                                 .block_size = 128,
                                 .unroll = 4,
                                 .min_blocks = 1,
                                 .prefetch = false,
                                 .exact_waves = true,
                                 .mass_first_tile = true};
// Float64 with split-j filling the last wave (exact_waves): on the H100 0.776 x10^12 interactions/s
// at N = 262144 and 0.779 at 65536, against 0.670 and 0.668 without (docs/perf-notes.md, "Float64
// on the GPU").
constexpr TunedShape kDoubleShape{.bodies_per_thread = 4,
                                  .block_size = 128,
                                  .unroll = 4,
                                  .min_blocks = 0,
                                  .prefetch = false,
                                  .exact_waves = true};

// For small N: fewer bodies per thread and smaller blocks give 8-16 times as many blocks of the
// same work (docs/perf-notes.md, "Time integration, second pass").
constexpr TunedShape kSmallFloatShape{.bodies_per_thread = 2,
                                      .block_size = 64,
                                      .unroll = 4,
                                      .min_blocks = 0,
                                      .prefetch = false,
                                      .exact_waves = true,
                                      .mass_first_tile = true};
constexpr TunedShape kSmallDoubleShape{
    .bodies_per_thread = 2, .block_size = 64, .unroll = 4, .min_blocks = 0, .prefetch = false};

}  // namespace

void register_gpu_tuned(Registry& registry) {
  registry.add(make_tuned<float, kFloatShape, kSmallFloatShape>(
      "gpu.tuned", "several bodies per thread, broadcast tiles, split-j for small N, sm_90"));
  registry.add(
      make_tuned<double, kDoubleShape, kSmallDoubleShape>("gpu.tuned.f64", "gpu.tuned in float64"));
  // Other shapes (bodies per thread, block size, unroll, ...), named "gpu.tuned[8x128u4]", for the
  // tuning tool (`nbody-fair bench --variants`); left out of runs and reports.
  std::vector<Implementation> variants;
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 0, false}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 1, false}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 1, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 5, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 6, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 8, 1, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 256, 4, 1, false}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 256, 4, 1, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{12, 128, 2, 1, false, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 1, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 1, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 256, 4, 1, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 8, 1, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 2, 1, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 128, 4, 1, true, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 32, 4, 16, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 64, 4, 8, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{12, 128, 2, 1, false, true, true}>());
  // Small-N shapes (with exact waves and the mass-first tile), against which kSmallFloatShape was
  // chosen.
  variants.push_back(make_tuned_variant<float, TunedShape{1, 64, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{1, 128, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{2, 64, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{2, 128, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{4, 64, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{4, 128, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<float, TunedShape{8, 64, 4, 0, false, true, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 4, 1, false}>());
  // Float64 shapes: gpu.shared.f64's, one body per thread in tiles of 256, measured faster than
  // the shipped 4x128 at N = 262144.
  variants.push_back(make_tuned_variant<double, TunedShape{1, 256, 4, 0, false}>());
  variants.push_back(make_tuned_variant<double, TunedShape{2, 128, 4, 0, false}>());
  variants.push_back(make_tuned_variant<double, TunedShape{2, 256, 4, 0, false}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 64, 4, 0, false}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 2, 0, false}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 4, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{2, 128, 4, 0, false, true, true}>());
  // Float64 after the one-Newton-step x^(-3/2) (16 FP64 instructions per interaction): more
  // bodies per thread, other blocks, prefetch and the mass-first tile, all filling the last wave.
  variants.push_back(make_tuned_variant<double, TunedShape{8, 64, 4, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{8, 128, 2, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 64, 4, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 256, 4, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 8, 0, false, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 4, 0, true, true}>());
  variants.push_back(make_tuned_variant<double, TunedShape{4, 128, 4, 0, false, true, true}>());
  for (Implementation& variant : variants) registry.add(std::move(variant));
}

}  // namespace nbody::gpu
