// The walk's interactions in AVX2 with FMA: 8 float32 or 4 float64 lanes. Compiled with -mavx2
// -mfma (cpu/CMakeLists.txt) and called only once resolve_isa has seen AVX2 and FMA.
#include "nbody/cpu/tree/interaction_kernels_impl.hpp"

namespace nbody::cpu::tree {

GroupKernels group_kernels_avx2() {
  return make_group_kernels<xsimd::fma3<xsimd::avx2>>();
}

}  // namespace nbody::cpu::tree
