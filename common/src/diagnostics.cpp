#include "nbody/diagnostics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "compensated_sum_block.hpp"
#include "nbody/physics.hpp"

namespace nbody {

void CompensatedSum::add(double value) {
  const double t = sum_ + value;
  compensation_ += std::abs(sum_) >= std::abs(value) ? (sum_ - t) + value : (value - t) + sum_;
  sum_ = t;
}

namespace {

constexpr std::size_t kRowBlock = 8;

// Rows first .. first + kRowBlock - 1 (those below N) of the potential: row i is the compensated
// sum over j > i, in ascending j, of pair_potential(i, j), exactly as a CompensatedSum one row at
// a time would add them. The pairs inside the block go one by one; from the block's end on, every
// row takes the same j, and the loop over the rows is what vectorizes (target_clones: AVX-512,
// AVX2 or the baseline; no FMA contraction in this file, and vector sqrt and division round as
// scalar ones do).
__attribute__((target_clones("avx512f", "avx2", "default"))) void potential_rows(
    std::span<const Body<double>> bodies, double softening_squared, std::size_t first,
    std::vector<double>& rows) {
  const std::size_t n = bodies.size();
  CompensatedSumBlock<kRowBlock> sums;
  std::array<double, kRowBlock> x{}, y{}, z{}, m{};
  for (std::size_t q = 0; q < kRowBlock; ++q) {
    const Body<double>& b = bodies[std::min(first + q, n - 1)];
    x[q] = b.x;
    y[q] = b.y;
    z[q] = b.z;
    m[q] = b.m;
  }
  const std::size_t block_end = std::min(first + kRowBlock, n);
  for (std::size_t i = first; i < block_end; ++i) {
    for (std::size_t j = i + 1; j < block_end; ++j) {
      const Body<double>& bj = bodies[j];
      sums.add(i - first,
               pair_potential<double>(x[i - first], y[i - first], z[i - first], m[i - first], bj.x,
                                      bj.y, bj.z, bj.m, softening_squared));
    }
  }
  for (std::size_t j = block_end; j < n; ++j) {
    const Body<double>& bj = bodies[j];
    for (std::size_t q = 0; q < kRowBlock; ++q) {
      sums.add(q, pair_potential<double>(x[q], y[q], z[q], m[q], bj.x, bj.y, bj.z, bj.m,
                                         softening_squared));
    }
  }
  for (std::size_t i = first; i < block_end; ++i) rows[i] = sums.value(i - first);
}

}  // namespace

double ConservedQuantities::virial_ratio() const {
  return potential_energy != 0 ? 2 * kinetic_energy / std::abs(potential_energy) : 0;
}

ConservedQuantities conserved_quantities(std::span<const Body<double>> bodies,
                                         std::span<const Vec3<double>> velocities,
                                         double softening) {
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
  // Each row i sums its pairs j > i; the rows are then added in order, so the result is the same
  // on any number of threads. Rows go eight at a time (potential_rows), bit-identical to one at
  // a time.
  const double softening_squared = softening * softening;
  std::vector<double> rows(bodies.size());
  const std::size_t blocks = (bodies.size() + kRowBlock - 1) / kRowBlock;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t block = range.begin(); block != range.end(); ++block) {
                        potential_rows(bodies, softening_squared, block * kRowBlock, rows);
                      }
                    });
  CompensatedSum potential;
  for (const double row : rows) potential.add(row);
  q.kinetic_energy = kinetic.value();
  q.potential_energy = potential.value();
  q.momentum = {px.value(), py.value(), pz.value()};
  q.angular_momentum = {lx.value(), ly.value(), lz.value()};
  return q;
}

double relative_energy_error(const ConservedQuantities& now, const ConservedQuantities& initial) {
  return std::abs(now.total_energy() - initial.total_energy()) / std::abs(initial.total_energy());
}

}  // namespace nbody
