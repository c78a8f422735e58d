// The walk's interactions in AVX-512F: 16 float32 or 8 float64 lanes, FMA. Compiled with
// -mavx512f (cpu/CMakeLists.txt) and called only once resolve_isa has seen AVX-512F.
#include <immintrin.h>

#include "nbody/cpu/tree/interaction_kernels_impl.hpp"
#include "nbody/cpu/tree/walk_avx512f_impl.hpp"

namespace nbody::cpu::tree {
namespace {

using Arch = xsimd::avx512f;

// vrsqrt14ps and vrsqrt14pd, 14 bits: the all-pairs kernels' start on this ISA. (xsimd 8.1's rsqrt
// for avx512f needs AVX-512ER; the zero-masked form because of the GCC warning below.)
struct Rsqrt14 {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm512_maskz_rsqrt14_ps(0xffff, x);
  }
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> operator()(
      const xsimd::batch<double, Arch>& x) const {
    return _mm512_maskz_rsqrt14_pd(0xff, x);
  }
};

// xsimd 8.1's sqrt for avx512f is the unmasked _mm512_sqrt_p*, which trips GCC 12's
// -Wmaybe-uninitialized (GCC PR 105593): the zero-masked form with every lane set.
struct Sqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm512_maskz_sqrt_ps(0xffff, x);
  }
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> operator()(
      const xsimd::batch<double, Arch>& x) const {
    return _mm512_maskz_sqrt_pd(0xff, x);
  }
};

}  // namespace

GroupKernels group_kernels_avx512f() {
  GroupKernels kernels = make_group_kernels<Arch, Rsqrt14, Sqrt, SeriesBatchInvSqrt<Rsqrt14>>();
  kernels.walk = &walk_avx512f;
  return kernels;
}

// Float32 takes the rsqrt and a Newton step; float64 the rsqrt and its series (a body) or two
// Newton steps (a cell).
constinit const GroupTerms group_terms_avx512f = {
    .f32 = {.lanes = 16, .body_body = 17, .body_cell = 37},
    .f64 = {.lanes = 8, .body_body = 20, .body_cell = 41}};

}  // namespace nbody::cpu::tree
