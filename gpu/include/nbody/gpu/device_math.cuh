#pragma once
// The GPU's inverse square root for the one interaction (nbody/physics.hpp's InvSqrt parameter).
namespace nbody {

// MUFU.RSQ (about 2 ulp in float32); double uses the correctly rounded rsqrt().
struct DeviceInvSqrt {
  __device__ float operator()(float x) const { return rsqrtf(x); }
  __device__ double operator()(double x) const { return rsqrt(x); }
};

}  // namespace nbody
