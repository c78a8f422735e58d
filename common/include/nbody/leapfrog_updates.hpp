#pragma once
// The leapfrog's two updates, one definition for every integrator: the float64 reference, the host
// leapfrog around CPU formulations and the device kernels (including those fused into a force
// kernel's store), so they round alike.
#include "nbody/bodies.hpp"
#include "nbody/host_device.hpp"

namespace nbody {

// v + h a: a kick of length h (half a step in kick-drift-kick).
template <class T>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE Vec3<T> kicked(const Vec3<T>& v, const Vec3<T>& a, T h) {
  return {v.x + h * a.x, v.y + h * a.y, v.z + h * a.z};
}

// x + dt v, the mass unchanged.
template <class T>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE Body<T> drifted(const Body<T>& b, const Vec3<T>& v, T dt) {
  return {b.x + dt * v.x, b.y + dt * v.y, b.z + dt * v.z, b.m};
}

}  // namespace nbody
