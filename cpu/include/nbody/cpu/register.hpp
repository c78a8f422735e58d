#pragma once
// Every CPU formulation, added to a registry (cpu/formulations/formulations.inc lists them).
#include "nbody/registry.hpp"

namespace nbody {

void register_cpu_implementations(Registry& registry);

}  // namespace nbody
