#include "nbody/gpu/gpu_monitor.hpp"

#include <memory>

#include "nvml_library.hpp"

namespace nbody::gpu {

#if defined(NBODY_HAVE_NVML_HEADER)

GpuSampler make_gpu_sampler(int ordinal, std::string& why_not) {
  const std::shared_ptr<Nvml> nvml = Nvml::open(why_not);
  if (!nvml) return {};
  const std::optional<nvmlDevice_t> device = nvml->device(ordinal, why_not);
  if (!device) return {};
  return [nvml, device = *device] { return nvml->sample(device); };
}

#else

GpuSampler make_gpu_sampler(int, std::string& why_not) {
  why_not =
      "this build has no NVML: nvml.h was not found beside the CUDA toolkit at configure time";
  return {};
}

#endif

}  // namespace nbody::gpu
