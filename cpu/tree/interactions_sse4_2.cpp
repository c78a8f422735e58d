// The walk's interactions in SSE4.2: 4 float32 or 2 float64 lanes, no FMA (xsimd emulates it as a
// multiply and an add). Compiled with -msse4.2 (cpu/CMakeLists.txt).
#include <immintrin.h>

#include "nbody/cpu/tree/interaction_kernels_impl.hpp"

namespace nbody::cpu::tree {
namespace {

using Arch = xsimd::sse4_2;

// rsqrtps, 12 bits: the float32 all-pairs kernels' start on this ISA.
struct Rsqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm_rsqrt_ps(x);
  }
};

}  // namespace

GroupKernels group_kernels_sse4_2() {
  return make_group_kernels<Arch, Rsqrt>();
}

// Float32 takes the rsqrt and a Newton step, float64 a square root and a division; SSE4.2 has no
// FMA: a multiply and an add each.
constinit const GroupTerms group_terms_sse4_2 = {
    .f32 = {.lanes = 4, .body_body = 25, .body_cell = 58},
    .f64 = {.lanes = 2, .body_body = 20, .body_cell = 53}};

}  // namespace nbody::cpu::tree
