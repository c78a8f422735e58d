#pragma once
// What a time integration must conserve: energy, linear and
// angular momentum, and the virial ratio, accumulated in float64 with compensated sums whatever
// precision the bodies were integrated in, so that the diagnostics' own rounding stays far below
// the integrator's error they measure.
#include <cmath>
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/host_device.hpp"
#include "nbody/target_range.hpp"

namespace nbody {

// Neumaier's improvement of Kahan summation: the error does not grow with the number of terms.
// Host and device (the GPU's potential rows sum exactly as the host's do).
class CompensatedSum {
 public:
  NBODY_HOST_DEVICE void add(double value) {
    const double t = sum_ + value;
    compensation_ += fabs(sum_) >= fabs(value) ? (sum_ - t) + value : (value - t) + sum_;
    sum_ = t;
  }
  NBODY_HOST_DEVICE double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

struct ConservedQuantities {
  double kinetic_energy = 0;    // sum m v^2 / 2
  double potential_energy = 0;  // softened: -sum over pairs i < j of m_i m_j / sqrt(r^2 + eps^2)
  Vec3<double> momentum{0, 0, 0};
  Vec3<double> angular_momentum{0, 0, 0};  // about the origin

  double total_energy() const { return kinetic_energy + potential_energy; }
  // 2K / |W|: 1 for a system in virial equilibrium.
  double virial_ratio() const;
};

// The quantities of `bodies` moving at `velocities` (the same length). The potential sums every
// pair once, spread over the cores; its result does not depend on how many threads ran.
ConservedQuantities conserved_quantities(std::span<const Body<double>> bodies,
                                         std::span<const Vec3<double>> velocities,
                                         double softening);

// The same with the potential energy already summed elsewhere (a GPU simulation sums the same
// rows on the device: Simulation::potential_energy).
ConservedQuantities conserved_quantities_given_potential(std::span<const Body<double>> bodies,
                                                         std::span<const Vec3<double>> velocities,
                                                         double potential_energy);

// Rows `rows` of the potential (row i: the compensated sum of pair_potential over j > i, in order
// of j), into `out` (rows.size() entries): a slice of what conserved_quantities sums, so that
// ranks can share it (the decomposed simulation) and still give its result bit for bit.
void potential_rows(std::span<const Body<double>> bodies, double softening, TargetRange rows,
                    std::span<double> out);

// The potential energy from its rows (row i: the compensated sum of pair_potential over j > i in
// order of j), added in order with compensation,
// so the result does not depend on where or on how many threads the rows were summed.
double potential_from_rows(std::span<const double> rows);

// |E - E0| / |E0|.
double relative_energy_error(const ConservedQuantities& now, const ConservedQuantities& initial);

}  // namespace nbody
