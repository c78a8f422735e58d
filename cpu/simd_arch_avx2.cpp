// The AVX2 kernels: float32 in 8 lanes, vrsqrtps (12 bits) plus a Newton-Raphson step; float64 in
// 4 lanes, the same vrsqrtps on the values narrowed to float32 (AVX2 has no float64 rsqrt) plus
// three steps; FMA. Compiled with -mavx2 -mfma (cpu/CMakeLists.txt) and called only once the
// dispatcher has seen AVX2 and FMA.
#include <immintrin.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;

struct Rsqrt {
  NBODY_FORCE_INLINE xsimd::batch<float, Arch> operator()(
      const xsimd::batch<float, Arch>& x) const {
    return _mm256_rsqrt_ps(x);
  }
  NBODY_FORCE_INLINE xsimd::batch<double, Arch> operator()(
      const xsimd::batch<double, Arch>& x) const {
    return _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(x)));
  }
};

struct ReduceAdd {
  template <class T>
  NBODY_FORCE_INLINE T operator()(const xsimd::batch<T, Arch>& v) const {
    return xsimd::hadd(v);
  }
};

}  // namespace

KernelSet<float> kernels_avx2() {
  return make_kernel_set<float, Arch, Rsqrt, ReduceAdd, 2, 2, 1, 2>(Isa::avx2, "vrsqrtps",
                                                                    InvSqrtMethod::newton, true);
}

KernelSet<double> kernels_f64_avx2() {
  return make_kernel_set<double, Arch, Rsqrt, ReduceAdd, 2, 2, 3, 5>(
      Isa::avx2, "vcvtpd2ps + vrsqrtps + vcvtps2pd", InvSqrtMethod::sqrt_divide, true);
}

}  // namespace nbody::cpu::simd
