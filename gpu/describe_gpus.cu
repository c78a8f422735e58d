// The CUDA devices of this machine, for the results' machine description (FAIRNESS rule 7).
#include <cuda_runtime.h>

#include <cstdint>

#include "nbody/gpu/describe_gpus.hpp"

namespace nbody::gpu {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, attr, device) == cudaSuccess ? value : 0;
}

}  // namespace

std::vector<GpuDescription> describe_gpus() {
  std::vector<GpuDescription> gpus;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return gpus;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) continue;
    gpus.push_back({
        .ordinal = device,
        .name = prop.name,
        .compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor),
        .sm_count = prop.multiProcessorCount,
        .sm_clock_khz = attribute(cudaDevAttrClockRate, device),
        .memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device),
        .memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device),
        .memory_bytes = prop.totalGlobalMem,
        .l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize),
        .driver_version = driver,
        .runtime_version = runtime,
    });
  }
  return gpus;
}

}  // namespace nbody::gpu
