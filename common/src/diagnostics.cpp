#include "nbody/diagnostics.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "nbody/physics.hpp"

namespace nbody {

double ConservedQuantities::virial_ratio() const {
  return potential_energy != 0 ? 2 * kinetic_energy / std::abs(potential_energy) : 0;
}

void potential_rows(std::span<const Body<double>> bodies, double softening, TargetRange rows,
                    std::span<double> out) {
  if (rows.end > bodies.size() || rows.begin > rows.end || out.size() != rows.size()) {
    throw std::invalid_argument("potential_rows: rows outside the bodies, or a wrong output size");
  }
  const double softening_squared = softening * softening;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(rows.begin, rows.end, 16),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        const Body<double>& bi = bodies[i];
                        CompensatedSum row;
                        for (std::size_t j = i + 1; j < bodies.size(); ++j) {
                          const Body<double>& bj = bodies[j];
                          row.add(pair_potential<double>(bi.x, bi.y, bi.z, bi.m, bj.x, bj.y, bj.z,
                                                         bj.m, softening_squared));
                        }
                        out[i - rows.begin] = row.value();
                      }
                    });
}

ConservedQuantities conserved_quantities(std::span<const Body<double>> bodies,
                                         std::span<const Vec3<double>> velocities,
                                         double softening) {
  // Each row i sums its pairs j > i; the rows are then added in order, so the result is the same
  // on any number of threads (and of ranks, each summing a slice of the rows).
  std::vector<double> rows(bodies.size());
  potential_rows(bodies, softening, {0, bodies.size()}, rows);
  return conserved_quantities_given_potential(bodies, velocities, potential_from_rows(rows));
}

double potential_from_rows(std::span<const double> rows) {
  CompensatedSum potential;
  for (const double row : rows) potential.add(row);
  return potential.value();
}

ConservedQuantities conserved_quantities_given_potential(std::span<const Body<double>> bodies,
                                                         std::span<const Vec3<double>> velocities,
                                                         double potential_energy) {
  if (bodies.size() != velocities.size()) {
    throw std::invalid_argument("conserved_quantities: one velocity per body");
  }
  ConservedQuantities q;
  CompensatedSum kinetic, px, py, pz, lx, ly, lz;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Body<double>& b = bodies[i];
    const Vec3<double>& v = velocities[i];
    kinetic.add(0.5 * b.m * (v.x * v.x + v.y * v.y + v.z * v.z));
    px.add(b.m * v.x);
    py.add(b.m * v.y);
    pz.add(b.m * v.z);
    lx.add(b.m * (b.y * v.z - b.z * v.y));
    ly.add(b.m * (b.z * v.x - b.x * v.z));
    lz.add(b.m * (b.x * v.y - b.y * v.x));
  }
  q.kinetic_energy = kinetic.value();
  q.potential_energy = potential_energy;
  q.momentum = {px.value(), py.value(), pz.value()};
  q.angular_momentum = {lx.value(), ly.value(), lz.value()};
  return q;
}

double relative_energy_error(const ConservedQuantities& now, const ConservedQuantities& initial) {
  return std::abs(now.total_energy() - initial.total_energy()) / std::abs(initial.total_energy());
}

}  // namespace nbody
