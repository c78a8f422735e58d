// The NEON (Advanced SIMD) kernels of aarch64: float32 in 4 lanes, float64 in 2, FMA, 32 vector
// registers. NEON's estimate FRSQRTE has 8 bits; one FRSQRTS (a Newton-Raphson step in one
// instruction, as Arm intends the pair to be used) makes it about 16, this ISA's "approximate
// rsqrt", which then takes the same steps as x86's 12- and 14-bit starts: one in float32, two in
// float64. xsimd 8.1's float32 sqrt and division on NEON are estimates too, so this file brings
// the exact FSQRT and FDIV. NEON is in every ARMv8-A core: compiled with the baseline flags.
#include <arm_neon.h>

#include "simd_kernels_impl.hpp"

namespace nbody::cpu::simd {
namespace {

using Arch = xsimd::neon64;
using FloatBatch = xsimd::batch<float, Arch>;
using DoubleBatch = xsimd::batch<double, Arch>;

struct Rsqrt {
  NBODY_FORCE_INLINE FloatBatch operator()(const FloatBatch& x) const {
    const float32x4_t y = vrsqrteq_f32(x);
    return vmulq_f32(y, vrsqrtsq_f32(vmulq_f32(x, y), y));
  }
  NBODY_FORCE_INLINE DoubleBatch operator()(const DoubleBatch& x) const {
    const float64x2_t y = vrsqrteq_f64(x);
    return vmulq_f64(y, vrsqrtsq_f64(vmulq_f64(x, y), y));
  }
};

// Correctly rounded square root and division (xsimd 8.1's float32 ones are estimates on NEON).
struct Sqrt {
  NBODY_FORCE_INLINE FloatBatch operator()(const FloatBatch& x) const { return vsqrtq_f32(x); }
  NBODY_FORCE_INLINE DoubleBatch operator()(const DoubleBatch& x) const { return vsqrtq_f64(x); }
  NBODY_FORCE_INLINE FloatBatch inverse(const FloatBatch& x) const {
    return vdivq_f32(vdupq_n_f32(1.0f), vsqrtq_f32(x));
  }
  NBODY_FORCE_INLINE DoubleBatch inverse(const DoubleBatch& x) const {
    return vdivq_f64(vdupq_n_f64(1.0), vsqrtq_f64(x));
  }
};

struct ReduceAdd {
  NBODY_FORCE_INLINE float operator()(const FloatBatch& v) const { return vaddvq_f32(v); }
  NBODY_FORCE_INLINE double operator()(const DoubleBatch& v) const { return vaddvq_f64(v); }
};

}  // namespace

// Four target vectors a step and four broadcast bodies a source vector: 32 registers, as
// AVX-512F's, and enough independent FMA chains for four 128-bit pipes (Neoverse V1 and V2) of
// 4-cycle latency. Not measured on Arm hardware (none is lent here): chosen by that model.
KernelSet<float> kernels_neon64() {
  return make_kernel_set<float, Arch, Rsqrt, ReduceAdd, 4, 4, 1, 2, Sqrt>(
      Isa::neon64, "frsqrte + frsqrts", InvSqrtMethod::newton, true);
}

// Float64: two broadcast bodies (a cluster fills at most a vector block of two lanes); d^-3 by its
// series from the 16-bit start (4 terms), as AVX-512F does, where FSQRT and FDIV on two lanes
// would set the pace (by the Neoverse V2 software optimization guide's
// throughputs; not measured).
KernelSet<double> kernels_f64_neon64() {
  return make_kernel_set<double, Arch, Rsqrt, ReduceAdd, 4, 2, 2, 4, Sqrt>(
      Isa::neon64, "frsqrte + frsqrts", InvSqrtMethod::cube_series, true);
}

}  // namespace nbody::cpu::simd
