// gpu.shared and gpu.shared.f64: GPU Gems 3 chapter 31 (and the blocking step of the Burtscher
// slides): each block stages tiles of bodies through shared memory, every thread of the block
// reads each staged body, so global memory is read once per block instead of once per thread.
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/launch.cuh"

namespace nbody::gpu {
namespace {

constexpr int kTileSize = 256;  // GPU Gems 3's p: threads per block = bodies per tile

template <class T>
__global__ void __launch_bounds__(kTileSize) shared_forces(ForceArgs<T> args) {
  __shared__ Body<T> tile[kTileSize];
  // The grid covers the padded targets, so every thread takes part in every tile load.
  const int k = static_cast<int>(blockIdx.x) * kTileSize + static_cast<int>(threadIdx.x);
  const Body<T> bi = args.bodies[args.first_target + k];
  T ax = 0, ay = 0, az = 0;
  for (int tile_start = 0; tile_start < args.padded_count; tile_start += kTileSize) {
    tile[threadIdx.x] = args.bodies[tile_start + static_cast<int>(threadIdx.x)];
    __syncthreads();
#pragma unroll 4
    for (int t = 0; t < kTileSize; ++t) {
      const Body<T> bj = tile[t];
      accumulate_interaction<T, DeviceInvSqrt>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, bj.m,
                                               args.softening_squared, ax, ay, az);
    }
    __syncthreads();  // the tile is overwritten next
  }
  if (k < args.target_count) args.accelerations[k] = {ax, ay, az};
}

template <class T>
ForceKernelFactory<T> shared_launch() {
  return launch<T>(shared_forces<T>, {.block_size = kTileSize,
                                      .padding_multiple = kTileSize,
                                      .shared_memory_bytes = kTileSize * sizeof(Body<T>)});
}

}  // namespace

void register_gpu_shared(Registry& registry) {
  const auto optimizations = [](const char* rsqrt) {
    return std::vector<std::string>{"shared-memory tiles of 256", "unrolled x4", rsqrt};
  };
  registry.add(make_gpu_implementation<float>(
      {.name = "gpu.shared",
       .description = "one thread per body, tiles of bodies staged through shared memory",
       .layout = Layout::aos,
       .precision = Precision::f32,
       .optimizations = optimizations("rsqrtf (MUFU.RSQ)"),
       .tolerance = gpu_float32_tolerance()},
      shared_launch<float>()));
  registry.add(
      make_gpu_implementation<double>({.name = "gpu.shared.f64",
                                       .description = "gpu.shared in float64",
                                       .layout = Layout::aos,
                                       .precision = Precision::f64,
                                       .optimizations = optimizations(kDeviceFloat64InvCube),
                                       .tolerance = gpu_float64_tolerance()},
                                      shared_launch<double>()));
}

}  // namespace nbody::gpu
