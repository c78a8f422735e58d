// gpu.atomic: the CUDA Handbook's GPU_Atomic idea (seed 003): Newton's third law, each pair
// evaluated once and the reaction added to the other body with atomicAdd. Credited N^2 equivalent
// interactions; details() records the pairs actually evaluated (FAIRNESS rule 4).
//
// The seed's thread-per-body loop sends 3 atomics per pair, all 32 lanes of a warp to the same
// address; here a warp takes a 32 x 32 tile pair, the j bodies and their reaction sums travel
// round the warp by shuffles (one lane further per step), so each lane meets each j once and the
// reactions leave with 3 atomics per j per tile pair instead of 3 per pair.
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/launch.cuh"
#include "nbody/gpu/warp.cuh"

namespace nbody::gpu {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kBlockSize = kWarpsPerBlock * kWarpSize;
constexpr int kTilesPerTask = 16;  // j tiles one warp visits before handing back
constexpr int kMaxGridY = 65535;

template <class T>
__device__ __forceinline__ void add_atomically(Vec3<T>& target, T x, T y, T z) {
  atomicAdd(&target.x, x);
  atomicAdd(&target.y, y);
  atomicAdd(&target.z, z);
}

// The interactions between a warp's i bodies (one per lane) and one tile of 32 j bodies. Off the
// diagonal every lane meets every j (32 steps); on the diagonal (the j tile is the i tile) lane l
// meets l+1 .. l+16, where offset 16 pairs l with l+16 and l+16 with l, so only lanes < 16 take it.
template <class T, bool kDiagonal>
__device__ __forceinline__ void interact_with_tile(const Body<T>& bi, Body<T> bj,
                                                   Vec3<T>* tile_accelerations, T eps2, int lane,
                                                   T& ax, T& ay, T& az) {
  constexpr int kFirstOffset = kDiagonal ? 1 : 0;
  constexpr int kLastOffset = kDiagonal ? kWarpSize / 2 : kWarpSize - 1;
  const int next_lane = (lane + 1) % kWarpSize;
  if constexpr (kDiagonal) bj = shuffle_body(bj, next_lane);
  T rx = 0, ry = 0, rz = 0;  // reaction on bj, travels with it
#pragma unroll 4
  for (int offset = kFirstOffset; offset <= kLastOffset; ++offset) {
    if (!kDiagonal || offset < kWarpSize / 2 || lane < kWarpSize / 2) {
      // Unit mass: the bare geometric factor, scaled by each body's mass for the other.
      const PairAcceleration<T> g =
          pair_acceleration<T, DeviceInvSqrt>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, T(1), eps2);
      ax += bj.m * g.x;
      ay += bj.m * g.y;
      az += bj.m * g.z;
      rx -= bi.m * g.x;
      ry -= bi.m * g.y;
      rz -= bi.m * g.z;
    }
    if (offset < kLastOffset) {
      bj = shuffle_body(bj, next_lane);
      rx = __shfl_sync(kFullWarpMask, rx, next_lane);
      ry = __shfl_sync(kFullWarpMask, ry, next_lane);
      rz = __shfl_sync(kFullWarpMask, rz, next_lane);
    }
  }
  add_atomically(tile_accelerations[(lane + kLastOffset) % kWarpSize], rx, ry, rz);
}

// blockIdx.x: 8 i tiles (one per warp); blockIdx.y: a run of kTilesPerTask j tiles. Only tile
// pairs with j_tile <= i_tile are visited.
template <class T>
__global__ void __launch_bounds__(kBlockSize) atomic_forces(ForceArgs<T> args) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int tile_count = args.padded_count / kWarpSize;
  const int i_tile =
      static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / kWarpSize;
  const int j_first = static_cast<int>(blockIdx.y) * kTilesPerTask;
  // A warp-uniform exit; the kernel has no block-wide barrier.
  if (i_tile >= tile_count || j_first > i_tile) return;
  const int j_last = min(i_tile, j_first + kTilesPerTask - 1);
  const T eps2 = args.softening_squared;
  const int i = i_tile * kWarpSize + lane;
  const Body<T> bi = args.bodies[i];
  T ax = 0, ay = 0, az = 0;
  for (int j_tile = j_first; j_tile <= j_last; ++j_tile) {
    const Body<T> bj = args.bodies[j_tile * kWarpSize + lane];
    Vec3<T>* tile_accelerations = args.accelerations + j_tile * kWarpSize;
    if (j_tile == i_tile) {
      interact_with_tile<T, true>(bi, bj, tile_accelerations, eps2, lane, ax, ay, az);
    } else {
      interact_with_tile<T, false>(bi, bj, tile_accelerations, eps2, lane, ax, ay, az);
    }
  }
  add_atomically(args.accelerations[i], ax, ay, az);
}

// 8 i tiles per block in x, runs of kTilesPerTask j tiles in y.
dim3 atomic_grid(int count) {
  const int tiles = round_up(count, kWarpSize) / kWarpSize;
  const int task_rows = (tiles + kTilesPerTask - 1) / kTilesPerTask;
  if (task_rows > kMaxGridY) throw std::invalid_argument("gpu.atomic: too many bodies");
  return dim3(static_cast<unsigned>((tiles + kWarpsPerBlock - 1) / kWarpsPerBlock),
              static_cast<unsigned>(task_rows));
}

std::map<std::string, std::string> atomic_pairs(int count) {
  const auto padded = static_cast<long long>(round_up(count, kWarpSize));
  return {{"pair_scheme", "symmetric: 32x32 tile pairs, j_tile <= i_tile"},
          {"pairs_evaluated", std::to_string(padded * (padded - 1) / 2)},
          {"pairs_needed", std::to_string(static_cast<long long>(count) * (count - 1) / 2)},
          {"interactions_credited", "N^2"}};
}

}  // namespace

void register_gpu_atomic(Registry& registry) {
  registry.add(make_gpu_implementation<float>(
      {.name = "gpu.atomic",
       .description = "each pair once (Newton's third law), reactions added with atomicAdd",
       .layout = Layout::aos,
       .precision = Precision::f32,
       .pairs = PairScheme::symmetric,
       .optimizations = {"symmetric pairs (N(N-1)/2 evaluated, N^2 credited)",
                         "32x32 warp tiles, j bodies rotated by shuffles",
                         "3 atomics per j per tile pair", "rsqrtf (MUFU.RSQ)"},
       .tolerance = gpu_float32_tolerance()},
      launch<float>(atomic_forces<float>, {.block_size = kBlockSize,
                                           .padding_multiple = kWarpSize,
                                           .zero_accelerations_first = true,
                                           .grid = atomic_grid,
                                           .extra = atomic_pairs})));
}

}  // namespace nbody::gpu
