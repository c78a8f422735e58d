#include "nbody/gpu/device_query.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "nbody/gpu/cuda_check.hpp"

namespace nbody::gpu {

std::optional<std::string> device_unavailable_reason(int ordinal) {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the next launch check
    return fmt::format("no CUDA device: {}", cudaGetErrorString(status));
  }
  if (count == 0) return "no CUDA device: the driver reports none";
  if (ordinal < 0 || ordinal >= count) {
    return fmt::format("no CUDA device {}: this machine has {} (ordinals 0 to {})", ordinal, count,
                       count - 1);
  }
  cudaDeviceProp properties{};
  if (const cudaError_t status = cudaGetDeviceProperties(&properties, ordinal);
      status != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("CUDA device {} unusable: {}", ordinal, cudaGetErrorString(status));
  }
  return std::nullopt;
}

DeviceContext select_device(int ordinal) {
  if (const auto reason = device_unavailable_reason(ordinal)) throw CudaError(*reason);
  DeviceContext context;
  context.ordinal = ordinal;
  check_cuda(cudaSetDevice(ordinal));
  check_cuda(cudaGetDeviceProperties(&context.properties, ordinal));
  return context;
}

std::optional<std::string> device_memory_limit_reason(int ordinal, std::size_t bytes) {
  if (auto reason = device_unavailable_reason(ordinal)) return reason;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaSetDevice(ordinal) != cudaSuccess ||
      cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    const cudaError_t status = cudaGetLastError();
    return fmt::format("cannot read free memory of CUDA device {}: {}", ordinal,
                       cudaGetErrorString(status));
  }
  // Keep 5% and 256 MiB back for the runtime, the reference's pinned buffers and fragmentation.
  constexpr std::size_t kReserveBytes = std::size_t{256} << 20;
  const std::size_t usable = free_bytes - std::min(free_bytes, kReserveBytes + free_bytes / 20);
  if (bytes <= usable) return std::nullopt;
  return fmt::format("needs {:.2f} GiB of device memory; CUDA device {} has {:.2f} GiB free",
                     static_cast<double>(bytes) / (1 << 30), ordinal,
                     static_cast<double>(free_bytes) / (1 << 30));
}

}  // namespace nbody::gpu
