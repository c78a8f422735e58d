#pragma once
// The GPU's inverse square root for the one interaction (nbody/physics.hpp's InvSqrt parameter).
#include "nbody/physics.hpp"

namespace nbody {

// MUFU.RSQ (about 2 ulp in float32); double uses the correctly rounded rsqrt(). The interaction's
// x^(-3/2) (physics.hpp's inv_sqrt_cubed) is the rsqrt cubed in float32, and in float64 one Newton
// step of x^(-3/2) itself from the hardware's rough rsqrt (docs/perf-notes.md, "Float64 on the
// GPU"): 6 FP64 instructions and no branch, where rsqrt(double) cubed takes 7 and a branch around
// its slow path for zero, infinity and subnormals, none of which a softened distance can be.
struct DeviceInvSqrt {
  __device__ float operator()(float x) const { return rsqrtf(x); }
  __device__ double operator()(double x) const { return rsqrt(x); }

  __device__ float cubed(float x) const {
    const float inv = rsqrtf(x);
    return inv * inv * inv;
  }
  // x must be a normal positive double (x >= eps^2 >= kSmallestSoftening^2). From MUFU.RSQ64H
  // (relative error at most 2^-20.08 on the H100, device_math_test), physics.hpp's series to e^2:
  // the term left out, 35/16 e^3 < 2^-56, is below double rounding (measured within 2 u).
  __device__ double cubed(double x) const {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return inv_sqrt_cubed_series<2>(x, y);
  }
};

// How the float64 kernels take x^(-3/2), as their optimization lists name it.
inline constexpr const char* kDeviceFloat64InvCube =
    "x^(-3/2) in one Newton step from MUFU.RSQ64H, branch-free (float64)";

}  // namespace nbody
