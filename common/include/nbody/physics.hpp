#pragma once
// The one body-body interaction of the suite (FAIRNESS.md rule 1): softened Newtonian gravity, G =
// 1,
//   a_i += m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2).
// Every kernel, CPU and GPU, scalar and SIMD, and the float64 reference call this function. It is
// templated on the scalar type (float, double, or a SIMD batch) and on the reciprocal square root,
// the one operation whose implementation legitimately differs between devices.
#include <cmath>

#include "nbody/host_device.hpp"

namespace nbody {

// Exact 1/sqrt: the reference and the scalar CPU kernels.
struct ExactInvSqrt {
  template <class T>
  NBODY_HOST_DEVICE T operator()(T x) const {
    using std::sqrt;
    return T(1) / sqrt(x);
  }
};

template <class T>
struct PairAcceleration {
  T x, y, z;
};

// Contribution of body j to the acceleration of body i. The term order is chosen so that a
// compiler with FMA contraction emits 3 subtractions, 3 FMAs for the distance, one rsqrt,
// 3 multiplies and (in accumulate_interaction) 3 FMAs: 12 arithmetic instructions plus the rsqrt.
template <class T, class InvSqrt = ExactInvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE PairAcceleration<T> pair_acceleration(
    const T& xi, const T& yi, const T& zi, const T& xj, const T& yj, const T& zj, const T& mj,
    const T& softening_squared, InvSqrt inv_sqrt = {}) {
  const T dx = xj - xi;
  const T dy = yj - yi;
  const T dz = zj - zi;
  const T distance_squared = softening_squared + dx * dx + dy * dy + dz * dz;
  const T inv_distance = inv_sqrt(distance_squared);
  const T scale = mj * (inv_distance * inv_distance * inv_distance);
  return {dx * scale, dy * scale, dz * scale};
}

// The same interaction, accumulated in place: what every float32 kernel's inner loop does.
template <class T, class InvSqrt = ExactInvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE void accumulate_interaction(
    const T& xi, const T& yi, const T& zi, const T& xj, const T& yj, const T& zj, const T& mj,
    const T& softening_squared, T& ax, T& ay, T& az, InvSqrt inv_sqrt = {}) {
  const PairAcceleration<T> a =
      pair_acceleration<T, InvSqrt>(xi, yi, zi, xj, yj, zj, mj, softening_squared, inv_sqrt);
  ax += a.x;
  ay += a.y;
  az += a.z;
}

// The softened potential energy of the pair (i, j), -m_i m_j / sqrt(r^2 + eps^2): the potential
// whose gradient pair_acceleration is, for the energy diagnostics of integration. The GPU sums it
// with its float64 rsqrt (within an ulp of the exact one, and a third of sqrt and divide's cost).
template <class T, class InvSqrt = ExactInvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE T pair_potential(const T& xi, const T& yi, const T& zi,
                                                      const T& mi, const T& xj, const T& yj,
                                                      const T& zj, const T& mj,
                                                      const T& softening_squared,
                                                      InvSqrt inv_sqrt = {}) {
  const T dx = xj - xi;
  const T dy = yj - yi;
  const T dz = zj - zi;
  return -(mi * mj) * inv_sqrt(softening_squared + dx * dx + dy * dy + dz * dz);
}

// Flops credited per interaction by the convention of GPU Gems 3 and the CUDA Handbook
// (FAIRNESS.md rule 4). Counted flops are reported separately.
inline constexpr double kConventionalFlopsPerInteraction = 20.0;

}  // namespace nbody
