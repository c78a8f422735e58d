// The AVX2 kernels: 8 lanes, vrsqrtps (12 bits) plus a Newton-Raphson step, FMA. Compiled with
// -mavx2 -mfma (cpu/CMakeLists.txt) and called only once the dispatcher has seen AVX2 and FMA.
#include <immintrin.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;
using Batch = xsimd::batch<float, Arch>;

struct Rsqrt {
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const { return _mm256_rsqrt_ps(x); }
};

struct ReduceAdd {
  NBODY_FORCE_INLINE float operator()(const Batch& v) const { return xsimd::hadd(v); }
};

}  // namespace

KernelSet kernels_avx2() {
  return make_kernel_set<Arch, Rsqrt, ReduceAdd, 2, 2>(Isa::avx2, "vrsqrtps", true);
}

}  // namespace nbody::cpu::simd
