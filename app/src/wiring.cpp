#include "nbody/app/wiring.hpp"

#include "nbody/cpu/register.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/gpu/describe_gpus.hpp"
#include "nbody/gpu/formulations.hpp"
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

// make_counter_sources() lives in ceilings.cpp.

nlohmann::json describe_gpus() {
#if defined(NBODY_HAVE_CUDA)
  return gpu::describe_gpus();
#else
  return nlohmann::json::array();
#endif
}

}  // namespace nbody
