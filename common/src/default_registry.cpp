#include "nbody/counters.hpp"
#include "nbody/registry.hpp"

namespace nbody {

Registry make_default_registry() {
  Registry registry;
  register_cpu_implementations(registry);
#if defined(NBODY_HAVE_CUDA)
  register_gpu_implementations(registry);
#endif
  return registry;
}

// make_counter_sources() and measure_ceilings() live in ceilings.cpp.

#if !defined(NBODY_HAVE_CUDA)
nlohmann::json describe_gpus() {
  return nlohmann::json::array();
}
#endif

}  // namespace nbody
