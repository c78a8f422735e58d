// The SSE4.2 kernels: float32 in 4 lanes, rsqrtps (12 bits) plus a Newton-Raphson step; float64 in
// 2 lanes, the same rsqrtps on the values narrowed to float32 (SSE has no float64 rsqrt) plus
// three steps; no FMA (xsimd emulates fma as a multiply and an add). Compiled with -msse4.2
// (cpu/CMakeLists.txt).
#include <immintrin.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::sse4_2;

struct Rsqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm_rsqrt_ps(x);
  }
  // The two float32 results sit in the low half; the upper lanes (rsqrt of 0) are dropped.
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> operator()(
      const xsimd::batch<double, Arch>& x) const {
    return _mm_cvtps_pd(_mm_rsqrt_ps(_mm_cvtpd_ps(x)));
  }
};

struct ReduceAdd {
  template <class T>
  NBODY_FORCE_INLINE T operator()(const xsimd::batch<T, Arch>& v) const {
    return xsimd::hadd(v);
  }
};

}  // namespace

KernelSet<float> kernels_sse4_2() {
  return make_kernel_set<float, Arch, Rsqrt, ReduceAdd, 2, 2, 1, 2>(Isa::sse4_2, "rsqrtps",
                                                                    InvSqrtMethod::newton, false);
}

KernelSet<double> kernels_f64_sse4_2() {
  return make_kernel_set<double, Arch, Rsqrt, ReduceAdd, 2, 2, 3, 5>(
      Isa::sse4_2, "cvtpd2ps + rsqrtps + cvtps2pd", InvSqrtMethod::sqrt_divide, false);
}

}  // namespace nbody::cpu::simd
