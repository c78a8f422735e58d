// The SSE4.2 kernels: 4 lanes, rsqrtps (12 bits) plus a Newton-Raphson step, no FMA (xsimd
// emulates fma as a multiply and an add). Compiled with -msse4.2 (cpu/CMakeLists.txt).
#include <immintrin.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::sse4_2;
using Batch = xsimd::batch<float, Arch>;

struct Rsqrt {
  NBODY_FORCE_INLINE Batch operator()(const Batch& x) const { return _mm_rsqrt_ps(x); }
};

struct ReduceAdd {
  NBODY_FORCE_INLINE float operator()(const Batch& v) const { return xsimd::hadd(v); }
};

}  // namespace

KernelSet kernels_sse4_2() {
  return make_kernel_set<Arch, Rsqrt, ReduceAdd, 2, 2>(Isa::sse4_2, "rsqrtps", false);
}

}  // namespace nbody::cpu::simd
