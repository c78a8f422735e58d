#pragma once
// Second-order kick-drift-kick leapfrog (symplectic and time-reversible), in float64 on the host:
// the reference trajectory that `simulate` measures the divergence of every force engine
// against, and the integrator's definition the device and SIMD versions follow.
#include <functional>
#include <span>
#include <vector>

#include "nbody/bodies.hpp"

namespace nbody {

struct PhaseSpaceState {
  std::vector<Body<double>> bodies;      // positions and masses
  std::vector<Vec3<double>> velocities;  // one per body
};

// A state held in precision T (a simulation's own), promoted to float64.
template <class T>
PhaseSpaceState promoted_state(std::span<const Body<T>> bodies,
                               std::span<const Vec3<T>> velocities) {
  PhaseSpaceState state;
  state.bodies.reserve(bodies.size());
  for (const Body<T>& b : bodies) state.bodies.push_back({b.x, b.y, b.z, b.m});
  state.velocities.reserve(velocities.size());
  for (const Vec3<T>& v : velocities) state.velocities.push_back({v.x, v.y, v.z});
  return state;
}

// Fills the accelerations of every body at the state's current positions.
using AccelerationField =
    std::function<void(std::span<const Body<double>> bodies, std::span<Vec3<double>> out)>;

// Advances `state` by `steps` steps of `dt`: v += a dt/2, x += v dt, a = a(x), v += a dt/2.
// `accelerations` holds a(x) of the current positions on entry (computed when empty) and on exit,
// so consecutive calls cost one force evaluation per step.
void leapfrog(PhaseSpaceState& state, double dt, int steps, const AccelerationField& field,
              std::vector<Vec3<double>>& accelerations);

// The float64 reference's field (exact 1/sqrt, compensated sums) for every body.
AccelerationField reference_field(double softening);

}  // namespace nbody
