#include "nbody/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <vector>

#include "nbody/diagnostics.hpp"

namespace nbody {
namespace {

double norm(const Vec3<double>& v) {
  return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

// The q-quantile by the nearest-rank method on a copy.
double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  const std::size_t index = std::clamp<std::size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

}  // namespace

AccuracyMetrics compare_with_reference(std::span<const Vec3<double>> accelerations,
                                       std::span<const Vec3<double>> reference,
                                       std::span<const std::uint32_t> targets,
                                       std::span<const Body<double>> bodies) {
  if (reference.size() != targets.size() || accelerations.size() != bodies.size()) {
    throw std::invalid_argument("compare_with_reference: mismatched sizes");
  }
  AccuracyMetrics metrics;
  metrics.bodies_compared = targets.size();
  std::vector<double> relative(targets.size());
  double error_squared = 0, reference_squared = 0;
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const Vec3<double>& a = accelerations[targets[k]];
    const Vec3<double>& r = reference[k];
    const Vec3<double> d{a.x - r.x, a.y - r.y, a.z - r.z};
    const double error = norm(d);
    const double magnitude = norm(r);
    error_squared += error * error;
    reference_squared += magnitude * magnitude;
    // A body with zero reference acceleration (N = 1) is exact only if its result is exactly zero.
    relative[k] = magnitude > 0 ? error / magnitude
                                : (error == 0 ? 0 : std::numeric_limits<double>::infinity());
  }
  metrics.relative_l2 = reference_squared > 0
                            ? std::sqrt(error_squared / reference_squared)
                            : (error_squared == 0 ? 0 : std::numeric_limits<double>::infinity());
  metrics.max_relative = relative.empty() ? 0 : *std::max_element(relative.begin(), relative.end());
  metrics.p99_relative = quantile(relative, 0.99);
  metrics.median_relative = quantile(relative, 0.5);

  // Newton's third law: the mass-weighted accelerations of a closed system sum to zero. Exact
  // symmetric kernels keep this to rounding; all-pairs kernels show their own drift here. The sum
  // is exact to about u^2: each product is split into its rounded value and its rounding error (an
  // FMA), and both are summed with compensation. A plain float64 sum rounds at about 1e-17 to 1e-16
  // of sum m_i |a_i|, where the float64 kernels' own residuals lie, and hid them.
  CompensatedSum px, py, pz;
  const auto add_product = [](CompensatedSum& sum, double m, double a) {
    const double product = m * a;
    sum.add(product);
    sum.add(std::fma(m, a, -product));
  };
  double total = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    add_product(px, bodies[i].m, accelerations[i].x);
    add_product(py, bodies[i].m, accelerations[i].y);
    add_product(pz, bodies[i].m, accelerations[i].z);
    total += bodies[i].m * norm(accelerations[i]);
  }
  const Vec3<double> net{px.value(), py.value(), pz.value()};
  metrics.net_force_residual = total > 0 ? norm(net) / total : 0;
  return metrics;
}

double Tolerance::relative_l2_bound(std::size_t n) const {
  return relative_l2_coefficient * unit_roundoff *
             std::sqrt(std::max<double>(1, static_cast<double>(n))) +
         relative_l2_truncation;
}

double Tolerance::max_relative_bound(std::size_t n) const {
  return max_relative_coefficient * unit_roundoff *
             std::sqrt(std::max<double>(1, static_cast<double>(n))) +
         max_relative_truncation;
}

namespace {

// The survey of docs/tolerances.md, "Tree codes": per opening angle, the relative L2 bound of its
// worst input (coincident bodies, whose few heavy points make a sum of few large truncation
// errors: 5 times their worst) and 3 times the worst maximum relative error of every input (a long
// tail of bodies whose forces nearly cancel).
// And the worst relative L2 of the smooth inputs, measured (the survey table's second column,
// the larger N's in brackets where it was worse).
struct TruncationBound {
  double theta, relative_l2, max_relative, surveyed_smooth_relative_l2;
};
constexpr TruncationBound kBarnesHutTruncation[] = {
    {0.2, 8e-5, 5.4e-3, 1.3e-5}, {0.35, 1.5e-3, 7.2e-2, 1.0e-4}, {0.5, 9e-3, 0.27, 4.1e-4},
    {0.7, 5e-2, 0.6, 1.6e-3},    {0.85, 0.1, 1.5, 3.7e-3},       {1.0, 0.3, 2.7, 1.4e-2}};

const TruncationBound& surveyed_at(double theta) {
  if (!(theta >= 0 && theta <= 1)) {
    throw std::invalid_argument("a Barnes-Hut opening angle must lie in [0, 1]");
  }
  for (const TruncationBound& bound : kBarnesHutTruncation) {
    if (theta <= bound.theta) return bound;
  }
  return kBarnesHutTruncation[std::size(kBarnesHutTruncation) - 1];  // unreachable
}

}  // namespace

double barnes_hut_surveyed_relative_l2(double theta) {
  return theta == 0 ? 0 : surveyed_at(theta).surveyed_smooth_relative_l2;
}

Tolerance barnes_hut_tolerance(const Tolerance& rounding, double theta) {
  const TruncationBound& bound = surveyed_at(theta);
  Tolerance tolerance = rounding;
  if (theta == 0) return tolerance;  // every cell opened: the all-pairs sum
  tolerance.relative_l2_truncation = bound.relative_l2;
  tolerance.max_relative_truncation = bound.max_relative;
  return tolerance;
}

bool Tolerance::accepts(const AccuracyMetrics& metrics, std::size_t n) const {
  // Written so that NaN fails.
  return metrics.relative_l2 <= relative_l2_bound(n) &&
         metrics.max_relative <= max_relative_bound(n);
}

}  // namespace nbody
