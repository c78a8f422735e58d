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

// x^(-3/2), the factor every interaction needs: the policy's own `cubed` where it has one (the
// GPU's float64 policy takes it in one Newton step from a rough rsqrt, which costs fewer FP64
// instructions than a full-accuracy rsqrt cubed), else the cube of its reciprocal square root.
template <class T, class InvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE T inv_sqrt_cubed(const T& x, InvSqrt inv_sqrt) {
  if constexpr (requires { inv_sqrt.cubed(x); }) {
    return inv_sqrt.cubed(x);
  } else {
    const T inv_distance = inv_sqrt(x);
    return inv_distance * inv_distance * inv_distance;
  }
}

// x^(-3/2) from y, an approximation of 1/sqrt(x), with no Newton step: with e = 1 - x y^2,
// x^(-3/2) = y^3 (1 - e)^(-3/2) = y^3 (1 + 3/2 e + 15/8 e^2 + 35/16 e^3 + ...), summed to
// e^kTerms by Horner's rule. |e| is about twice y's relative error; kTerms must leave the first
// term out, c e^(kTerms+1), below T's rounding. The `cubed` of the GPU's float64 policy and of the
// CPU's SIMD series policy (rounding of the small correction term is second order: within about
// 2 ulp).
template <int kTerms, class T>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE T inv_sqrt_cubed_series(const T& x, const T& y) {
  static_assert(kTerms >= 1 && kTerms <= 5);
  // 3/2, 15/8, 35/16, 315/128, 693/256: exact in float32, so exact in every T.
  constexpr float kCoefficients[] = {1.5f, 1.875f, 2.1875f, 2.4609375f, 2.70703125f};
  using std::fma;  // T = float or double; SIMD batches find theirs by argument-dependent lookup
  const T y2 = y * y;
  const T e = fma(-x, y2, T(1));
  const T y3 = y * y2;
  T series(kCoefficients[kTerms - 1]);
  for (int k = kTerms - 2; k >= 0; --k) series = fma(series, e, T(kCoefficients[k]));
  return fma(y3 * e, series, y3);
}

// The softenings the suite accepts: what every kernel of both precisions survives, measured
// (docs/tolerances.md, "The softening's bounds"). Below the smallest, a pair at distance 0 (the
// j = i term, bodies at one point) overflows float32: its x^(-3/2) is (1/eps)^3, past FLT_MAX
// below eps = FLT_MAX^(-1/3) = 1.44e-13, and 0 x infinity is NaN where FAIRNESS.md rule 1 counts on
// that term being zero. Above the largest, m/eps^3 falls out of float32's normal range at the
// largest N (kernels flushing subnormals lose every term), and float32 fails validation.
inline constexpr double kSmallestSoftening = 1.5e-13;
inline constexpr double kLargestSoftening = 1e8;

template <class T>
struct PairAcceleration {
  T x, y, z;
};

// Contribution of body j to the acceleration of body i. The term order is chosen so that a
// compiler with FMA contraction emits 3 subtractions, 3 FMAs for the distance, one rsqrt,
// 3 multiplies and (in accumulate_interaction) 3 FMAs: 12 arithmetic instructions plus the rsqrt
// (a policy with its own `cubed` replaces the rsqrt and 2 of the multiplies).
template <class T, class InvSqrt = ExactInvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE PairAcceleration<T> pair_acceleration(
    const T& xi, const T& yi, const T& zi, const T& xj, const T& yj, const T& zj, const T& mj,
    const T& softening_squared, InvSqrt inv_sqrt = {}) {
  const T dx = xj - xi;
  const T dy = yj - yi;
  const T dz = zj - zi;
  const T distance_squared = softening_squared + dx * dx + dy * dy + dz * dz;
  const T scale = mj * inv_sqrt_cubed(distance_squared, inv_sqrt);
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
