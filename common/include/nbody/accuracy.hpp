#pragma once
// Error metrics exactly as FAIRNESS.md rule 2 defines them, and per-implementation tolerances.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "nbody/bodies.hpp"

namespace nbody {

struct AccuracyMetrics {
  double relative_l2 = 0;         // sqrt(sum |a_i - a_ref_i|^2 / sum |a_ref_i|^2)
  double max_relative = 0;        // max of e_i = |a_i - a_ref_i| / |a_ref_i|
  double p99_relative = 0;        // 99th percentile of e_i
  double median_relative = 0;     // median of e_i
  double net_force_residual = 0;  // |sum m_i a_i| / sum m_i |a_i|, over all bodies
  std::size_t bodies_compared = 0;
};

// `accelerations` holds all N bodies; `reference` holds the bodies listed in `targets`.
AccuracyMetrics compare_with_reference(std::span<const Vec3<double>> accelerations,
                                       std::span<const Vec3<double>> reference,
                                       std::span<const std::uint32_t> targets,
                                       std::span<const Body<double>> bodies);

// Unit roundoff of each accuracy class.
inline constexpr double kFloat32UnitRoundoff = 0x1.0p-24;
inline constexpr double kFloat64UnitRoundoff = 0x1.0p-53;

// Error bounds that grow like u * sqrt(N): float32 summation error is a random walk of N rounding
// errors (FAIRNESS.md rule 2). The coefficients are set per implementation from measurements,
// with margin, and kept as regression tests (docs/tolerances.md).
struct Tolerance {
  double unit_roundoff = kFloat32UnitRoundoff;
  double relative_l2_coefficient = 0;
  double max_relative_coefficient = 0;
  // An approximation's own error, which no N shrinks (a tree's truncation at its opening angle),
  // added to the rounding bounds above; 0 for the all-pairs formulations.
  double relative_l2_truncation = 0;
  double max_relative_truncation = 0;

  double relative_l2_bound(std::size_t n) const;
  double max_relative_bound(std::size_t n) const;
  bool accepts(const AccuracyMetrics& metrics, std::size_t n) const;
};

// The bounds of a Barnes-Hut tree at opening angle theta in [0, 1]: the all-pairs rounding bounds
// of its precision (`rounding`: at theta = 0 the tree is the all-pairs sum, in another order) plus
// the truncation the survey of docs/tolerances.md ("Tree codes") measured at the nearest surveyed
// angle at or above theta, over every input, coincident bodies included. Throws
// std::invalid_argument for theta outside [0, 1].
Tolerance barnes_hut_tolerance(const Tolerance& rounding, double theta);

// The worst relative L2 error the survey of docs/tolerances.md ("Tree codes") measured at the
// nearest surveyed angle at or above theta on the smooth inputs (uniform, Plummer, two Plummer
// spheres, thin disc; not the duplicated points): what a tree at theta is expected to reach on a
// run's generated input, where barnes_hut_tolerance is the bound it must keep on any. 0 at theta
// 0. Throws std::invalid_argument for theta outside [0, 1].
double barnes_hut_surveyed_relative_l2(double theta);

// The bars of relative L2 error at which formulations of different algorithms are compared
// (FAIRNESS.md rule 9), loosest first.
inline constexpr double kAccuracyBarsRelativeL2[] = {1e-2, 1e-3, 1e-4};

}  // namespace nbody
