// The walk's interactions in AVX2 with FMA: 8 float32 or 4 float64 lanes. Compiled with -mavx2
// -mfma (cpu/CMakeLists.txt) and called only once resolve_isa has seen AVX2 and FMA.
#include <immintrin.h>

#include "nbody/cpu/tree/interaction_kernels_impl.hpp"

namespace nbody::cpu::tree {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;

// vrsqrtps, 12 bits: the float32 all-pairs kernels' start on this ISA.
struct Rsqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm256_rsqrt_ps(x);
  }
};

}  // namespace

GroupKernels group_kernels_avx2() {
  return make_group_kernels<Arch, Rsqrt>();
}

// Float32 takes the rsqrt and a Newton step, float64 a square root and a division.
constinit const GroupTerms group_terms_avx2 = {
    .f32 = {.lanes = 8, .body_body = 17, .body_cell = 37},
    .f64 = {.lanes = 4, .body_body = 14, .body_cell = 34}};

}  // namespace nbody::cpu::tree
