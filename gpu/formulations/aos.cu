// gpu.aos: the straight port of cpu.aos (CUDA Handbook's GPU_AOS). One thread per body; position
// and mass read as one 16-byte load per body straight from global memory, no shared memory.
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/launch.cuh"

namespace nbody::gpu {
namespace {

constexpr int kBlockSize = 256;

template <class T>
__global__ void __launch_bounds__(kBlockSize) aos_forces(ForceArgs<T> args) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);  // the k-th target
  if (k >= args.target_count) return;
  const Body<T> bi = args.bodies[args.first_target + k];
  T ax = 0, ay = 0, az = 0;
  for (int j = 0; j < args.count; ++j) {
    const Body<T> bj = args.bodies[j];
    accumulate_interaction<T, DeviceInvSqrt>(bi.x, bi.y, bi.z, bj.x, bj.y, bj.z, bj.m,
                                             args.softening_squared, ax, ay, az);
  }
  args.accelerations[k] = {ax, ay, az};
}

}  // namespace

void register_gpu_aos(Registry& registry) {
  registry.add(make_gpu_implementation<float>(
      {.name = "gpu.aos",
       .description = "one thread per body, float4 bodies read from global memory",
       .layout = Layout::aos,
       .precision = Precision::f32,
       .role = Role::naive_baseline,
       .optimizations = {"none (straight port)", "rsqrtf (MUFU.RSQ)"},
       .tolerance = gpu_float32_tolerance()},
      launch<float>(aos_forces<float>, {.block_size = kBlockSize})));
  registry.add(make_gpu_implementation<double>(
      {.name = "gpu.aos.f64",
       .description = "gpu.aos in float64: the GPU's naive float64 baseline",
       .layout = Layout::aos,
       .precision = Precision::f64,
       .role = Role::naive_baseline,
       .optimizations = {"none (straight port)", kDeviceFloat64InvCube},
       .tolerance = gpu_float64_tolerance()},
      launch<double>(aos_forces<double>, {.block_size = kBlockSize})));
}

}  // namespace nbody::gpu
