#pragma once
// Cheap questions about the CUDA device, asked before anything is allocated.
#include <cstddef>
#include <optional>
#include <string>

#include <cuda_runtime.h>

namespace nbody::gpu {

struct DeviceContext {
  int ordinal = 0;
  cudaDeviceProp properties{};
};

// Empty when device `ordinal` can run kernels; otherwise why not ("no CUDA device: ..."). Never
// throws or aborts, also on a machine without a driver.
std::optional<std::string> device_unavailable_reason(int ordinal);

// Makes `ordinal` the calling thread's device and reads its properties. Throws CudaError.
DeviceContext select_device(int ordinal);

// The PCI bus id of device `ordinal` ("0000:3b:00.0"): which physical GPU it is, however
// CUDA_VISIBLE_DEVICES numbered it. Throws CudaError.
std::string pci_bus_id(int ordinal);

// Why `bytes` of device memory cannot be had on `ordinal` now (free memory, less a margin for the
// context and the runtime); empty when they can. Never throws.
std::optional<std::string> device_memory_limit_reason(int ordinal, std::size_t bytes);

}  // namespace nbody::gpu
