// The float64 leapfrog against closed-form orbits and its defining symmetries: a circular binary
// returns after one period with its energy and angular momentum kept, and the integrator run
// backwards retraces its steps.
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/leapfrog.hpp"

namespace nbody {
namespace {

// Equal masses 1/2 at separation 1 on a circular orbit about their centre of mass, under the
// softened force: relative acceleration d / (d^2 + eps^2)^(3/2), so v_rel^2 = d a_rel.
TEST(Leapfrog, CircularBinaryReturnsAfterOnePeriod) {
  const double softening = 1e-3, d = 1.0;
  const double relative_speed = std::sqrt(d * d / std::pow(d * d + softening * softening, 1.5));
  const double period = 2 * std::numbers::pi * d / relative_speed;
  PhaseSpaceState state{{{-0.5, 0, 0, 0.5}, {0.5, 0, 0, 0.5}},
                        {{0, -0.5 * relative_speed, 0}, {0, 0.5 * relative_speed, 0}}};
  const PhaseSpaceState start = state;
  const ConservedQuantities initial =
      conserved_quantities(state.bodies, state.velocities, softening);
  const int steps = 2000;
  std::vector<Vec3<double>> accelerations;
  leapfrog(state, period / steps, steps, reference_field(softening), accelerations);
  const ConservedQuantities final = conserved_quantities(state.bodies, state.velocities, softening);
  // Leapfrog's phase error after one orbit is of order (2 pi / steps)^2 ~ 1e-5 of the orbit.
  EXPECT_NEAR(state.bodies[1].x, start.bodies[1].x, 1e-4);
  EXPECT_NEAR(state.bodies[1].y, start.bodies[1].y, 1e-4);
  // A circular orbit keeps its energy to far better than the phase error, and angular momentum to
  // rounding (a central force).
  EXPECT_LT(relative_energy_error(final, initial), 1e-10);
  EXPECT_NEAR(final.angular_momentum.z, initial.angular_momentum.z, 1e-14);
}

// Leapfrog is time-symmetric: reversing the velocities and stepping again retraces the path to
// rounding, whatever the chaos of a small cluster.
TEST(Leapfrog, ReversedVelocitiesRetraceThePath) {
  const double softening = 0.05;
  const Snapshot s = make_plummer(64, 3);
  PhaseSpaceState state{s.bodies, s.velocities};
  std::vector<Vec3<double>> accelerations;
  const AccelerationField field = reference_field(softening);
  leapfrog(state, 1e-3, 200, field, accelerations);
  for (Vec3<double>& v : state.velocities) v = {-v.x, -v.y, -v.z};
  leapfrog(state, 1e-3, 200, field, accelerations);
  for (std::size_t i = 0; i < s.bodies.size(); ++i) {
    EXPECT_NEAR(state.bodies[i].x, s.bodies[i].x, 1e-11) << "body " << i;
    EXPECT_NEAR(state.bodies[i].z, s.bodies[i].z, 1e-11) << "body " << i;
    EXPECT_NEAR(-state.velocities[i].y, s.velocities[i].y, 1e-11) << "body " << i;
  }
}

// A cluster keeps its energy within leapfrog's bounded error, and its momentum (zero in the centre
// of mass frame) to rounding: the forces are pairwise equal and opposite.
TEST(Leapfrog, PlummerClusterKeepsEnergyAndMomentum) {
  const double softening = 0.05;
  const Snapshot s = make_plummer(256, 9);
  PhaseSpaceState state{s.bodies, s.velocities};
  const ConservedQuantities initial =
      conserved_quantities(state.bodies, state.velocities, softening);
  std::vector<Vec3<double>> accelerations;
  leapfrog(state, 1e-3, 300, reference_field(softening), accelerations);
  const ConservedQuantities final = conserved_quantities(state.bodies, state.velocities, softening);
  // Measured 1.4e-7 (Debian 12); the bound leaves a factor of 70.
  EXPECT_LT(relative_energy_error(final, initial), 1e-5);
  EXPECT_LT(std::hypot(final.momentum.x, final.momentum.y, final.momentum.z), 1e-13);
}

}  // namespace
}  // namespace nbody
