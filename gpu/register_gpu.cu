// The list of GPU formulations: one line each.
#include "nbody/registry.hpp"

namespace nbody {

void register_gpu_implementations(Registry& /*registry*/) {}

}  // namespace nbody
