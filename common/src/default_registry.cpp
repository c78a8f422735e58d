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

// Filled in by the counters work (CUPTI on the GPU, disassembly counts on the CPU).
std::vector<std::unique_ptr<CounterSource>> make_counter_sources() {
  return {};
}

#if !defined(NBODY_HAVE_CUDA)
nlohmann::json describe_gpus() {
  return nlohmann::json::array();
}
#endif

nlohmann::json measure_ceilings(bool /*remeasure*/) {
  return nullptr;
}

}  // namespace nbody
