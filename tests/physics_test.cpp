// The float64 reference and the shared interaction against closed-form cases, and the initial
// condition generators against their defining statistics.
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "nbody/accuracy.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/errors.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

std::vector<Vec3<double>> reference_all(std::span<const Body<double>> bodies, double softening) {
  const auto targets = validation_targets(bodies.size(), bodies.size());
  return reference_accelerations(bodies, softening, targets);
}

TEST(Reference, TwoBodiesMatchClosedForm) {
  const double softening = 0.1, separation = 2.0;
  const std::vector<Body<double>> bodies = {{0, 0, 0, 3.0}, {separation, 0, 0, 5.0}};
  const auto acc = reference_all(bodies, softening);
  const double denominator = std::pow(separation * separation + softening * softening, 1.5);
  EXPECT_DOUBLE_EQ(acc[0].x, 5.0 * separation / denominator);
  EXPECT_DOUBLE_EQ(acc[1].x, -3.0 * separation / denominator);
  EXPECT_EQ(acc[0].y, 0.0);
  EXPECT_EQ(acc[1].z, 0.0);
}

TEST(Reference, SingleBodyFeelsNoForce) {
  const std::vector<Body<double>> bodies = {{0.3, -0.2, 0.1, 1.0}};
  const auto acc = reference_all(bodies, 0.01);
  EXPECT_EQ(acc[0].x, 0.0);
  EXPECT_EQ(acc[0].y, 0.0);
  EXPECT_EQ(acc[0].z, 0.0);
}

// K equal masses on a circle of radius R: by symmetry each acceleration points at the centre with
// magnitude sum_{k=1}^{K-1} m (R - R cos t_k) / (d_k^2 + eps^2)^(3/2), d_k = 2 R sin(t_k / 2).
TEST(Reference, SymmetricRingPointsInwardWithClosedFormMagnitude) {
  constexpr int kBodies = 12;
  const double radius = 1.5, mass = 0.25, softening = 0.05;
  std::vector<Body<double>> bodies;
  for (int k = 0; k < kBodies; ++k) {
    const double t = 2 * std::numbers::pi * k / kBodies;
    bodies.push_back({radius * std::cos(t), radius * std::sin(t), 0.0, mass});
  }
  double expected = 0;
  for (int k = 1; k < kBodies; ++k) {
    const double t = 2 * std::numbers::pi * k / kBodies;
    const double d = 2 * radius * std::sin(t / 2);
    expected +=
        mass * (radius - radius * std::cos(t)) / std::pow(d * d + softening * softening, 1.5);
  }
  const auto acc = reference_all(bodies, softening);
  for (int k = 0; k < kBodies; ++k) {
    const double t = 2 * std::numbers::pi * k / kBodies;
    EXPECT_NEAR(acc[k].x, -expected * std::cos(t), 1e-13) << "body " << k;
    EXPECT_NEAR(acc[k].y, -expected * std::sin(t), 1e-13) << "body " << k;
    EXPECT_EQ(acc[k].z, 0.0);
  }
}

TEST(Reference, SampledTargetsMatchFullEvaluation) {
  const Snapshot s = make_plummer(3001, 7);
  const auto full = reference_all(s.bodies, 0.01);
  const auto targets = validation_targets(s.bodies.size(), 100);
  ASSERT_EQ(targets.size(), 100u);
  EXPECT_EQ(targets.front(), 0u);
  EXPECT_EQ(targets.back(), 3000u);
  const auto sampled = reference_accelerations(s.bodies, 0.01, targets);
  for (std::size_t k = 0; k < targets.size(); ++k) EXPECT_EQ(sampled[k].x, full[targets[k]].x);
}

// The reference one target at a time, as it was before it vectorized over blocks of targets:
// plain scalar code with a branching Neumaier sum (this file is compiled without FMA contraction,
// like the reference).
std::vector<Vec3<double>> scalar_reference(std::span<const Body<double>> bodies, double softening,
                                           std::span<const std::uint32_t> targets) {
  struct Sum {
    double sum = 0, compensation = 0;
    void add(double value) {
      const double t = sum + value;
      compensation += std::abs(sum) >= std::abs(value) ? (sum - t) + value : (value - t) + sum;
      sum = t;
    }
  };
  std::vector<Vec3<double>> result;
  for (const std::uint32_t i : targets) {
    Sum ax, ay, az;
    for (const Body<double>& bj : bodies) {
      const PairAcceleration<double> a = pair_acceleration<double>(
          bodies[i].x, bodies[i].y, bodies[i].z, bj.x, bj.y, bj.z, bj.m, softening * softening);
      ax.add(a.x);
      ay.add(a.y);
      az.add(a.z);
    }
    result.push_back(
        {ax.sum + ax.compensation, ay.sum + ay.compensation, az.sum + az.compensation});
  }
  return result;
}

// Blocks of targets, vectorized on whatever ISA this machine has, give the scalar reference's bits
// at awkward target counts (partial blocks) and sizes.
TEST(Reference, BlocksOfTargetsGiveTheScalarReferencesBits) {
  for (const std::size_t n : {1, 2, 7, 31, 1000, 4097}) {
    const Snapshot s = make_plummer(n, 11 + n);
    for (const std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{9}, n}) {
      const auto targets = validation_targets(n, std::min(count, n));
      const auto blocked = reference_accelerations(s.bodies, 0.01, targets);
      const auto scalar = scalar_reference(s.bodies, 0.01, targets);
      ASSERT_EQ(blocked.size(), scalar.size());
      for (std::size_t k = 0; k < targets.size(); ++k) {
        EXPECT_EQ(blocked[k].x, scalar[k].x) << "N=" << n << " target " << targets[k];
        EXPECT_EQ(blocked[k].y, scalar[k].y) << "N=" << n << " target " << targets[k];
        EXPECT_EQ(blocked[k].z, scalar[k].z) << "N=" << n << " target " << targets[k];
      }
    }
  }
}

TEST(Reference, DiskCacheReturnsTheSameResult) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "nbody-fair-cache-test";
  std::filesystem::remove_all(dir);
  const Snapshot s = make_uniform_ball(500, 3);
  const auto targets = validation_targets(500, 500);
  ReferenceCache cache(dir);
  const auto first = cache.get_or_compute(s.bodies, 0.01, targets);
  EXPECT_FALSE(std::filesystem::is_empty(dir / "reference"));
  const auto second = cache.get_or_compute(s.bodies, 0.01, targets);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].y, second[i].y);
  std::filesystem::remove_all(dir);
}

TEST(Metrics, FollowTheFairnessDefinitions) {
  const std::vector<Body<double>> bodies = {{0, 0, 0, 1}, {1, 0, 0, 1}};
  const std::vector<Vec3<double>> reference = {{1, 0, 0}, {-1, 0, 0}};
  const std::vector<Vec3<double>> result = {{1, 0.03, 0.04}, {-1, 0, 0}};
  const std::vector<std::uint32_t> targets = {0, 1};
  const AccuracyMetrics m = compare_with_reference(result, reference, targets, bodies);
  EXPECT_DOUBLE_EQ(m.max_relative, 0.05);  // vector norm, not per component
  EXPECT_DOUBLE_EQ(m.relative_l2, std::sqrt(0.05 * 0.05 / 2));
  EXPECT_DOUBLE_EQ(m.median_relative, 0.0);
  EXPECT_NEAR(m.net_force_residual, 0.05 / (std::sqrt(1 + 0.0025) + 1), 1e-15);
}

// The net force residual is summed exactly enough to show a float64 kernel's own residual: here
// a plain float64 sum would round 0.1 * 10 to 1 and report 0.
TEST(Metrics, NetForceResidualKeepsTheRoundingOfEachProduct) {
  const std::vector<Body<double>> bodies = {{0, 0, 0, 0.1}, {1, 0, 0, 1}};
  const std::vector<Vec3<double>> result = {{10, 0, 0}, {-1, 0, 0}};
  const std::vector<std::uint32_t> targets = {0, 1};
  const AccuracyMetrics m = compare_with_reference(result, result, targets, bodies);
  const double exact_net = std::fma(0.1, 10.0, -1.0);  // 0.1 is not a tenth: 5.55e-17
  ASSERT_GT(exact_net, 0);
  EXPECT_DOUBLE_EQ(m.net_force_residual, exact_net / 2);
}

TEST(Metrics, NanNeverPasses) {
  AccuracyMetrics m;
  m.relative_l2 = std::nan("");
  const Tolerance t{.relative_l2_coefficient = 1e9, .max_relative_coefficient = 1e9};
  EXPECT_FALSE(t.accepts(m, 10));
}

TEST(InitialConditions, AreDeterministicAndSeeded) {
  for (const InitialCondition ic : kAllInitialConditions) {
    SCOPED_TRACE(std::string(to_string(ic)));
    const Snapshot a = make_initial_condition(ic, 1000, 42);
    const Snapshot b = make_initial_condition(ic, 1000, 42);
    const Snapshot c = make_initial_condition(ic, 1000, 43);
    EXPECT_EQ(input_hash(a.bodies), input_hash(b.bodies));
    EXPECT_NE(input_hash(a.bodies), input_hash(c.bodies));
    ASSERT_EQ(a.velocities.size(), b.velocities.size());
    for (std::size_t i = 0; i < a.velocities.size(); ++i) {
      EXPECT_EQ(a.velocities[i].x, b.velocities[i].x);
      EXPECT_EQ(a.velocities[i].z, b.velocities[i].z);
    }
  }
}

// Pins the generator's output: a change of stream, order or arithmetic shows up here.
TEST(InitialConditions, HashesArePinnedAcrossPlatforms) {
  EXPECT_EQ(hash_to_hex(input_hash(make_uniform_ball(1024, 1).bodies)), PINNED_UNIFORM_HASH);
  EXPECT_EQ(hash_to_hex(input_hash(make_plummer(1024, 1).bodies)), PINNED_PLUMMER_HASH);
  EXPECT_EQ(hash_to_hex(input_hash(make_two_plummer(1024, 1).bodies)), "5bb8a75e7b423046");
  EXPECT_EQ(hash_to_hex(input_hash(make_coincident(1024, 1).bodies)), "e22d2960e0a5dd95");
  EXPECT_EQ(hash_to_hex(input_hash(make_thin_disc(1024, 1).bodies)), "391aa03b00cdc0a6");
}

TEST(InitialConditions, EveryNameParsesAndABadOneNamesTheOption) {
  for (const InitialCondition ic : kAllInitialConditions) {
    EXPECT_EQ(parse_initial_condition(to_string(ic)), ic);
  }
  EXPECT_EQ(parse_initial_condition("uniform_ball"), InitialCondition::uniform_ball);
  EXPECT_EQ(initial_condition_choices(), "uniform, plummer, two_plummer, coincident or thin_disc");
  try {
    parse_initial_condition("two_plummers");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_EQ(message.rfind("--ic: ", 0), 0u) << message;
    EXPECT_NE(message.find(initial_condition_choices()), std::string::npos) << message;
  }
}

// Every generator at awkward sizes: N bodies of equal mass summing to 1, finite, at rest as a
// whole (the centre-of-mass frame).
TEST(InitialConditions, MassIsOneAtEverySize) {
  for (const InitialCondition ic : kAllInitialConditions) {
    for (const std::size_t n : {1, 2, 7, 31, 1000}) {
      SCOPED_TRACE(fmt::format("{} N={}", to_string(ic), n));
      const Snapshot s = make_initial_condition(ic, n, 3);
      ASSERT_EQ(s.bodies.size(), n);
      ASSERT_EQ(s.velocities.size(), n);
      double mass = 0, px = 0, py = 0, pz = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Body<double>& b = s.bodies[i];
        EXPECT_TRUE(std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.z));
        EXPECT_EQ(b.m, s.bodies[0].m);
        mass += b.m;
        px += b.m * s.velocities[i].x;
        py += b.m * s.velocities[i].y;
        pz += b.m * s.velocities[i].z;
      }
      EXPECT_NEAR(mass, 1.0, 1e-12);
      if (ic != InitialCondition::uniform_ball) {
        EXPECT_LT(std::hypot(px, py, pz), 1e-12);
      }
    }
  }
}

// Two Plummer spheres 20 scale radii apart: each half of the bodies is a clump around its own
// centre, the gap between them nearly empty, and the clumps close in on each other.
TEST(InitialConditions, TwoPlummerIsTwoSeparatedApproachingClumps) {
  const std::size_t n = 8193;
  const Snapshot s = make_two_plummer(n, 5);
  const double scale_radius = 3 * std::numbers::pi / 16;
  const double separation = 20 * scale_radius;
  const std::size_t first = n - n / 2;
  std::size_t in_gap = 0;
  double mean_x[2] = {0, 0}, mean_vx[2] = {0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    const int side = i < first ? 0 : 1;
    const double count = static_cast<double>(side == 0 ? first : n - first);
    mean_x[side] += s.bodies[i].x / count;
    mean_vx[side] += s.velocities[i].x / count;
    in_gap += std::abs(s.bodies[i].x) < separation / 4;
    // Every body within the truncation radius of its own sphere's centre.
    const double centre = side == 0 ? -separation / 2 : separation / 2;
    EXPECT_LT(std::hypot(s.bodies[i].x - centre, s.bodies[i].y, s.bodies[i].z),
              10.5 * scale_radius);
  }
  EXPECT_NEAR(mean_x[0], -separation / 2, 0.05 * separation);
  EXPECT_NEAR(mean_x[1], separation / 2, 0.05 * separation);
  // Fewer than 1% of the bodies more than 5 scale radii from both centres along x.
  EXPECT_LT(static_cast<double>(in_gap), 0.01 * static_cast<double>(n));
  // Approaching, slowly: a closing speed of half the parabolic one, 0.29.
  const double closing = mean_vx[0] - mean_vx[1];
  EXPECT_NEAR(closing, 0.5 * std::sqrt(2 / separation), 0.03);
}

// Clusters of 8 bodies on exactly one position, each with its own velocity; the positions are a
// Plummer sphere's (its half-mass radius, as in the test below).
TEST(InitialConditions, CoincidentBodiesShareExactPositionsInClustersOfEight) {
  for (const std::size_t n : {1, 2, 7, 8, 9, 4097}) {
    const Snapshot s = make_coincident(n, 7);
    std::vector<std::array<double, 3>> positions;
    for (std::size_t i = 0; i < n; ++i) {
      const Body<double>& b = s.bodies[i];
      const Body<double>& first = s.bodies[i - i % kCoincidentClusterSize];
      EXPECT_TRUE(b.x == first.x && b.y == first.y && b.z == first.z) << "N=" << n << " i=" << i;
      positions.push_back({b.x, b.y, b.z});
    }
    std::sort(positions.begin(), positions.end());
    const auto distinct = static_cast<std::size_t>(std::unique(positions.begin(), positions.end()) -
                                                   positions.begin());
    EXPECT_EQ(distinct, (n + kCoincidentClusterSize - 1) / kCoincidentClusterSize) << "N=" << n;
  }
  const std::size_t n = 8192;
  const Snapshot s = make_coincident(n, 11);
  std::size_t distinct_velocities = 0;
  std::vector<double> radii;
  for (std::size_t i = 0; i < n; ++i) {
    distinct_velocities += i % kCoincidentClusterSize == 0 ||
                           s.velocities[i].x != s.velocities[i - i % kCoincidentClusterSize].x;
    const Body<double>& b = s.bodies[i];
    radii.push_back(std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z));
  }
  EXPECT_EQ(distinct_velocities, n);
  std::nth_element(radii.begin(), radii.begin() + n / 2, radii.end());
  const double expected_half_mass = (3 * std::numbers::pi / 16) / std::sqrt(std::cbrt(4.0) - 1);
  EXPECT_NEAR(radii[n / 2], expected_half_mass, 0.08);
}

// An exponential disc: the half-mass radius 1.678 scale lengths (1 - (1 + x) exp(-x) = 1/2), the
// median |z| atanh(1/2) = 0.549 scale heights, so |z| is a hundred times thinner than R; the
// velocities nearly circular, at about the circular speed of the mass inside.
TEST(InitialConditions, ThinDiscIsFlatAndRotating) {
  const std::size_t n = 20000;
  const Snapshot s = make_thin_disc(n, 13);
  std::vector<double> radii, heights;
  double radial_speed_squared = 0, speed_squared = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Body<double>& b = s.bodies[i];
    const Vec3<double>& v = s.velocities[i];
    const double radius = std::hypot(b.x, b.y);
    radii.push_back(radius);
    heights.push_back(std::abs(b.z));
    EXPECT_LE(radius, 10 * kDiscScaleLength * 1.001);
    EXPECT_LE(std::abs(b.z), 10 * kDiscScaleHeight * 1.001);
    if (radius > 0) {
      const double radial = (v.x * b.x + v.y * b.y) / radius;
      radial_speed_squared += radial * radial;
    }
    speed_squared += v.x * v.x + v.y * v.y + v.z * v.z;
  }
  std::nth_element(radii.begin(), radii.begin() + n / 2, radii.end());
  std::nth_element(heights.begin(), heights.begin() + n / 2, heights.end());
  // The sampling noise of the median radius is 0.011 scale lengths at this N (this seed: -2.7 of
  // them); of the median height, 0.006 scale heights.
  EXPECT_NEAR(radii[n / 2], 1.678 * kDiscScaleLength, 0.05 * kDiscScaleLength);
  EXPECT_NEAR(heights[n / 2], 0.549 * kDiscScaleHeight, 0.03 * kDiscScaleHeight);
  EXPECT_LT(heights[n / 2] / radii[n / 2], 0.01);
  // Circular: the radial motion is the centre-of-mass shift's only (about 1% of the speed).
  EXPECT_LT(std::sqrt(radial_speed_squared / speed_squared), 0.03);
  // The circular speed at the half-mass radius, sqrt(0.5 / 0.84) = 0.77 for the spherical
  // approximation of the enclosed mass; the mean square speed over the disc is of that order.
  EXPECT_GT(std::sqrt(speed_squared / static_cast<double>(n)), 0.4);
  EXPECT_LT(std::sqrt(speed_squared / static_cast<double>(n)), 1.2);
}

TEST(InitialConditions, UniformBallFillsTheUnitBall) {
  const Snapshot s = make_uniform_ball(20000, 5);
  double max_r = 0, mean_r3 = 0, mass = 0;
  for (const Body<double>& b : s.bodies) {
    const double r = std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z);
    max_r = std::max(max_r, r);
    mean_r3 += r * r * r / static_cast<double>(s.bodies.size());
    mass += b.m;
  }
  EXPECT_LE(max_r, 1.0);
  EXPECT_NEAR(mean_r3, 0.5, 0.01);  // r^3 is uniform on [0, 1] for a uniform ball
  EXPECT_NEAR(mass, 1.0, 1e-12);
}

// Two bodies with closed-form energies and momenta: m1 = 3 at rest at the origin moving +y,
// m2 = 5 at (2, 0, 0) moving -y, so the momentum cancels and only m2 carries angular momentum.
TEST(Diagnostics, TwoBodiesMatchClosedForm) {
  const std::vector<Body<double>> bodies = {{0, 0, 0, 3}, {2, 0, 0, 5}};
  const std::vector<Vec3<double>> velocities = {{0, 1, 0}, {0, -0.6, 0}};
  const double softening = 0.1;
  const ConservedQuantities q = conserved_quantities(bodies, velocities, softening);
  EXPECT_DOUBLE_EQ(q.kinetic_energy, 0.5 * 3 * 1 + 0.5 * 5 * 0.36);
  EXPECT_DOUBLE_EQ(q.potential_energy, -15 / std::sqrt(4 + softening * softening));
  EXPECT_NEAR(q.momentum.y, 0, 1e-15);
  EXPECT_DOUBLE_EQ(q.angular_momentum.z, 5 * 2 * -0.6);
  EXPECT_EQ(q.angular_momentum.x, 0);
  EXPECT_DOUBLE_EQ(q.virial_ratio(), 2 * q.kinetic_energy / -q.potential_energy);
  ConservedQuantities later = q;
  later.kinetic_energy += 0.01 * std::abs(q.total_energy());
  EXPECT_NEAR(relative_energy_error(later, q), 0.01, 1e-15);
}

// The potential's rows are summed in order: one thread and many give the same bits.
TEST(Diagnostics, ResultDoesNotDependOnTheThreadCount) {
  const Snapshot s = make_plummer(4097, 5);
  const ConservedQuantities many = conserved_quantities(s.bodies, s.velocities, 0.01);
  tbb::task_arena one(1);
  ConservedQuantities single;
  one.execute([&] { single = conserved_quantities(s.bodies, s.velocities, 0.01); });
  EXPECT_EQ(many.potential_energy, single.potential_energy);
  EXPECT_EQ(many.kinetic_energy, single.kinetic_energy);
}

// Plummer sphere in Henon units: virial ratio T/|W| = 1/2, total energy -1/4, and half-mass radius
// a / sqrt(2^(2/3) - 1) with a = 3 pi / 16, i.e. about 0.769.
TEST(InitialConditions, PlummerSphereIsInVirialEquilibriumInHenonUnits) {
  const std::size_t n = 8192;
  const Snapshot s = make_plummer(n, 11);
  const ConservedQuantities q = conserved_quantities(s.bodies, s.velocities, 0.0);
  EXPECT_NEAR(q.virial_ratio(), 1.0, 0.06);  // 2T/|W|
  // The truncation at 10 scale radii re-draws 1.5% of the mass inside, binding the sphere a few
  // percent tighter than the untruncated model's -1/4; sampling noise adds about 1/sqrt(N).
  EXPECT_NEAR(q.total_energy(), -0.25, 0.03);
  // The centre-of-mass frame: no net momentum beyond rounding.
  EXPECT_LT(std::hypot(q.momentum.x, q.momentum.y, q.momentum.z), 1e-12);

  std::vector<double> radii;
  for (const Body<double>& b : s.bodies)
    radii.push_back(std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z));
  std::nth_element(radii.begin(), radii.begin() + n / 2, radii.end());
  const double expected_half_mass = (3 * std::numbers::pi / 16) / std::sqrt(std::cbrt(4.0) - 1);
  EXPECT_NEAR(radii[n / 2], expected_half_mass, 0.04);
}

}  // namespace
}  // namespace nbody
