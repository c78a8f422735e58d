#pragma once
// Shared by the tests: run one registered implementation on a fresh input and compare it with the
// float64 reference, exactly as `nbody-fair validate` does.
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "nbody/accuracy.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace nbody::testing {

inline constexpr double kTestSoftening = 0.01;

struct ValidationOutcome {
  AccuracyMetrics metrics;
  bool accepted = false;
  std::string summary;  // for assertion messages
};

inline ValidationOutcome validate_implementation(const Implementation& impl, InitialCondition ic,
                                                 std::size_t n, std::uint64_t seed,
                                                 const ExecutionOptions& options = {}) {
  const Snapshot snapshot = make_initial_condition(ic, n, seed);
  // Validate what the kernel really saw: the inputs rounded to its precision.
  std::vector<Body<double>> seen = snapshot.bodies;
  if (impl.info.precision == Precision::f32) {
    const std::vector<Body<float>> rounded = convert_precision<float, double>(snapshot.bodies);
    seen = convert_precision<double, float>(rounded);
  }
  auto run = impl.prepare(seen, kTestSoftening, options);
  run->evaluate(PreparedRun::Scope::kernel);
  const std::vector<Vec3<double>> acc = run->accelerations();
  const std::vector<std::uint32_t> targets = validation_targets(n, 1u << 30);
  const std::vector<Vec3<double>> ref = reference_accelerations(seen, kTestSoftening, targets);
  ValidationOutcome outcome;
  outcome.metrics = compare_with_reference(acc, ref, targets, seen);
  outcome.accepted = impl.info.tolerance.accepts(outcome.metrics, n);
  outcome.summary = impl.info.name + " " + std::string(to_string(ic)) + " N=" + std::to_string(n) +
                    ": rel_l2=" + std::to_string(outcome.metrics.relative_l2) + " (bound " +
                    std::to_string(impl.info.tolerance.relative_l2_bound(n)) +
                    "), max=" + std::to_string(outcome.metrics.max_relative) + " (bound " +
                    std::to_string(impl.info.tolerance.max_relative_bound(n)) + ")";
  return outcome;
}

// Every test draws a fresh seed unless NBODY_TEST_SEED pins one; the seed is printed on failure.
inline std::uint64_t test_seed() {
  if (const char* pinned = std::getenv("NBODY_TEST_SEED"); pinned != nullptr) {
    return std::stoull(pinned);
  }
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) | device();
}

}  // namespace nbody::testing
