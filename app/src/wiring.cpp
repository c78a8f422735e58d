#include "nbody/app/wiring.hpp"

#include "nbody/cpu/register.hpp"
#include "nbody/peaks/cpu_counter_source.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/gpu/describe_gpus.hpp"
#include "nbody/gpu/formulations.hpp"
#include "nbody/profiler/cupti.hpp"
#endif

namespace nbody {

Registry make_default_registry() {
  Registry registry;
  register_cpu_implementations(registry);
#if defined(NBODY_HAVE_CUDA)
  register_gpu_implementations(registry);
#endif
  return registry;
}

std::vector<std::unique_ptr<CounterSource>> make_counter_sources() {
  std::vector<std::unique_ptr<CounterSource>> sources;
#if defined(NBODY_HAVE_CUDA)
  sources.push_back(profiler::make_cupti_counter_source());
#endif
  sources.push_back(peaks::make_cpu_disassembly_counter_source());
  return sources;
}

std::vector<GpuDescription> describe_gpus() {
#if defined(NBODY_HAVE_CUDA)
  return gpu::describe_gpus();
#else
  return {};
#endif
}

}  // namespace nbody
