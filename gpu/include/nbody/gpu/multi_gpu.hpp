#pragma once
// Several GPUs driven by one process (ExecutionOptions::gpu_devices, issue 15; gpu/multi_gpu.cu).
#include <optional>
#include <span>
#include <string>

namespace nbody::gpu {

// Empty where this build and machine can drive `devices` together (NCCL; distinct, working
// ordinals); otherwise why not.
std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices);

}  // namespace nbody::gpu
