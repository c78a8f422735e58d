// The walk's interactions in NEON (aarch64): 4 float32 or 2 float64 lanes, FMA. Float32 starts
// from FRSQRTE and one FRSQRTS (about 16 bits, as cpu/simd_arch_neon64.cpp's all-pairs kernels
// do) before the walk's Newton step; float64 takes the exact FSQRT and FDIV. NEON is in every
// ARMv8-A core: compiled with the baseline flags.
#include <arm_neon.h>

#include "nbody/cpu/tree/interaction_kernels_impl.hpp"

namespace nbody::cpu::tree {
namespace {

using Arch = xsimd::neon64;

struct Rsqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    const float32x4_t y = vrsqrteq_f32(x);
    return vmulq_f32(y, vrsqrtsq_f32(vmulq_f32(x, y), y));
  }
};

// xsimd 8.1's float32 sqrt and division on NEON are estimates: the exact instructions.
struct Sqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return vsqrtq_f32(x);
  }
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> operator()(
      const xsimd::batch<double, Arch>& x) const {
    return vsqrtq_f64(x);
  }
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> inverse(const xsimd::batch<float, Arch>& x) const {
    return vdivq_f32(vdupq_n_f32(1.0f), vsqrtq_f32(x));
  }
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> inverse(const xsimd::batch<double, Arch>& x) const {
    return vdivq_f64(vdupq_n_f64(1.0), vsqrtq_f64(x));
  }
};

}  // namespace

GroupKernels group_kernels_neon64() {
  return make_group_kernels<Arch, Rsqrt, Sqrt>();
}

// Float32 takes FRSQRTE, FRSQRTS and a Newton step, float64 FSQRT and FDIV.
constinit const GroupTerms group_terms_neon64 = {
    .f32 = {.lanes = 4, .body_body = 20, .body_cell = 40},
    .f64 = {.lanes = 2, .body_body = 14, .body_cell = 34}};

}  // namespace nbody::cpu::tree
