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

}  // namespace nbody
