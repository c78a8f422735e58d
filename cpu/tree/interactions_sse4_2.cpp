// The walk's interactions in SSE4.2: 4 float32 or 2 float64 lanes, no FMA. Compiled with -msse4.2
// (cpu/CMakeLists.txt).
#include "nbody/cpu/tree/interaction_kernels_impl.hpp"

namespace nbody::cpu::tree {

GroupKernels group_kernels_sse4_2() {
  return make_group_kernels<xsimd::sse4_2>();
}

}  // namespace nbody::cpu::tree
