// The AVX-512F kernels: float32 in 16 lanes, vrsqrt14ps (14 bits) plus a Newton-Raphson step;
// float64 in 8 lanes, vrsqrt14pd (14 bits) plus two steps; FMA. Compiled with -mavx512f
// (cpu/CMakeLists.txt) and called only once the dispatcher has seen AVX-512F.
#include <immintrin.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::avx512f;
using FloatBatch = xsimd::batch<float, Arch>;
using DoubleBatch = xsimd::batch<double, Arch>;

// xsimd 8.1's rsqrt for avx512f uses AVX-512ER (Xeon Phi only): call rsqrt14 directly. The
// zero-masked form because GCC 12's unmasked one trips -Wmaybe-uninitialized (GCC PR 105593).
struct Rsqrt14 {
  NBODY_FORCE_INLINE FloatBatch operator()(const FloatBatch& x) const {
    return _mm512_maskz_rsqrt14_ps(0xffff, x);
  }
  NBODY_FORCE_INLINE DoubleBatch operator()(const DoubleBatch& x) const {
    return _mm512_maskz_rsqrt14_pd(0xff, x);
  }
};

// xsimd 8.1's sqrt for avx512f is the unmasked _mm512_sqrt_p*, which trips the same GCC warning.
struct Sqrt {
  NBODY_FORCE_INLINE FloatBatch operator()(const FloatBatch& x) const {
    return _mm512_maskz_sqrt_ps(0xffff, x);
  }
  NBODY_FORCE_INLINE DoubleBatch operator()(const DoubleBatch& x) const {
    return _mm512_maskz_sqrt_pd(0xff, x);
  }
};

// xsimd 8.1's hadd for avx512f needs AVX-512DQ, and GCC 12's _mm512_reduce_add_ps trips the same
// warning: halve with AVX-512F and AVX moves only, all in this file's own instruction set.
struct ReduceAdd {
  NBODY_FORCE_INLINE float operator()(const FloatBatch& v) const {
    const __m512d all = _mm512_castps_pd(v);
    const __m256 low = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, all, 0));
    const __m256 high = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, all, 1));
    const __m256 eight = _mm256_add_ps(low, high);
    const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
    const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
  }
  NBODY_FORCE_INLINE double operator()(const DoubleBatch& v) const {
    const __m256d four = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xf, v, 0),
                                       _mm512_maskz_extractf64x4_pd(0xf, v, 1));
    const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
    return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
  }
};

}  // namespace

// Two target vectors per step keep the 4-cycle FMA chains of the accumulators off the critical
// path; four broadcast bodies per source vector in the symmetric kernel fit the 32 registers.
KernelSet<float> kernels_avx512f() {
  return make_kernel_set<float, Arch, Rsqrt14, ReduceAdd, 2, 4, 1, 2, Sqrt>(
      Isa::avx512f, "vrsqrt14ps", InvSqrtMethod::newton, true);
}

KernelSet<double> kernels_f64_avx512f() {
  return make_kernel_set<double, Arch, Rsqrt14, ReduceAdd, 2, 4, 2, 4, Sqrt>(
      Isa::avx512f, "vrsqrt14pd", InvSqrtMethod::cube_series, true);
}

}  // namespace nbody::cpu::simd
