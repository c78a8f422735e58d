// gpu.shuffle: the CUDA Handbook's GPU_Shuffle. Each warp loads 32 bodies, one per lane, and
// broadcasts them to the whole warp with __shfl_sync instead of staging them in shared memory.
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/launch.cuh"
#include "nbody/gpu/warp.cuh"

namespace nbody::gpu {
namespace {

constexpr int kBlockSize = 256;

template <class T>
__global__ void __launch_bounds__(kBlockSize) shuffle_forces(ForceArgs<T> args) {
  // The grid covers the padded targets, so every warp is full for the shuffles.
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);  // the i-th target
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const Body<T> bi = args.bodies[args.first_target + i];
  T ax = 0, ay = 0, az = 0;
  for (int chunk_start = 0; chunk_start < args.padded_count; chunk_start += kWarpSize) {
    const Body<T> mine = args.bodies[chunk_start + lane];
#pragma unroll 8
    for (int k = 0; k < kWarpSize; ++k) {
      const Body<T> bj = shuffle_body(mine, k);
      accumulate_interaction<T, DeviceInvSqrt>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, bj.m,
                                               args.softening_squared, ax, ay, az);
    }
  }
  if (i < args.target_count) args.accelerations[i] = {ax, ay, az};
}

}  // namespace

void register_gpu_shuffle(Registry& registry) {
  registry.add(make_gpu_implementation<float>(
      {.name = "gpu.shuffle",
       .description = "one thread per body, bodies broadcast between lanes with __shfl_sync",
       .layout = Layout::aos,
       .precision = Precision::f32,
       .optimizations = {"warp shuffles instead of shared memory", "unrolled x8",
                         "rsqrtf (MUFU.RSQ)"},
       .tolerance = gpu_float32_tolerance()},
      launch<float>(shuffle_forces<float>,
                    {.block_size = kBlockSize, .padding_multiple = kBlockSize})));
}

}  // namespace nbody::gpu
