#include "nbody/gpu/device_query.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "nbody/gpu/cuda_check.hpp"

namespace nbody::gpu {
namespace {

// Why cudaGetDeviceCount failed. On a machine with no NVIDIA GPU or driver the runtime says "CUDA
// driver version is insufficient for CUDA runtime version", which reads as "upgrade the driver":
// say plainly what is missing, without those words. A driver that is really too old reports its
// version (0 means none is installed).
std::string no_device_reason(cudaError_t status) {
  int driver_version = 0;
  const bool no_driver =
      cudaDriverGetVersion(&driver_version) != cudaSuccess || driver_version == 0;
  cudaGetLastError();
  const bool nothing_there = status == cudaErrorNoDevice || status == cudaErrorStubLibrary ||
                             (status == cudaErrorInsufficientDriver && no_driver);
  if (nothing_there) {
    return no_driver ? "no NVIDIA GPU or driver found (no NVIDIA driver is installed or loaded)"
                     : fmt::format("no NVIDIA GPU or driver found (CUDA runtime: {})",
                                   cudaGetErrorString(status));
  }
  if (status == cudaErrorInsufficientDriver) {
    int runtime_version = 0;
    cudaRuntimeGetVersion(&runtime_version);
    return fmt::format(
        "the NVIDIA driver supports CUDA {}.{}, older than this build's runtime {}.{}",
        driver_version / 1000, driver_version % 1000 / 10, runtime_version / 1000,
        runtime_version % 1000 / 10);
  }
  return fmt::format("no CUDA device: {}", cudaGetErrorString(status));
}

}  // namespace

std::optional<std::string> device_unavailable_reason(int ordinal) {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the next launch check
    return no_device_reason(status);
  }
  if (count == 0) return "no NVIDIA GPU or driver found (the driver reports no CUDA device)";
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

std::string pci_bus_id(int ordinal) {
  char text[64] = {};
  check_cuda(cudaDeviceGetPCIBusId(text, static_cast<int>(sizeof text), ordinal));
  return text;
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
