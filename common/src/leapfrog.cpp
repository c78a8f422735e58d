#include "nbody/leapfrog.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "nbody/leapfrog_updates.hpp"
#include "nbody/reference.hpp"

namespace nbody {

void leapfrog(PhaseSpaceState& state, double dt, int steps, const AccelerationField& field,
              std::vector<Vec3<double>>& accelerations) {
  const std::size_t n = state.bodies.size();
  if (state.velocities.size() != n) throw std::invalid_argument("leapfrog: one velocity per body");
  if (accelerations.size() != n) {
    accelerations.assign(n, Vec3<double>{0, 0, 0});
    field(state.bodies, accelerations);
  }
  const double half = 0.5 * dt;
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < n; ++i) {
      state.velocities[i] = kicked(state.velocities[i], accelerations[i], half);
      state.bodies[i] = drifted(state.bodies[i], state.velocities[i], dt);
    }
    field(state.bodies, accelerations);
    for (std::size_t i = 0; i < n; ++i) {
      state.velocities[i] = kicked(state.velocities[i], accelerations[i], half);
    }
  }
}

AccelerationField reference_field(double softening) {
  return [softening](std::span<const Body<double>> bodies, std::span<Vec3<double>> out) {
    const std::vector<std::uint32_t> all = validation_targets(bodies.size(), bodies.size());
    const std::vector<Vec3<double>> accelerations = reference_accelerations(bodies, softening, all);
    std::copy(accelerations.begin(), accelerations.end(), out.begin());
  };
}

}  // namespace nbody
