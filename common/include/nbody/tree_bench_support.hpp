#pragma once
// What the tree cores' benchmarks (cpu/bench/tree_bench, gpu/bench/gpu_tree_bench) share: the
// sampled float64 reference their accuracy is measured against, the median of their repetitions,
// and the checks of the options both take.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "nbody/bodies.hpp"
#include "nbody/errors.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"

namespace nbody {

// The sampled targets and their float64 reference, for one N: shared by every theta.
struct ReferenceSample {
  std::vector<Body<double>> seen;  // the input as the tree sees it, exactly, in float64
  std::vector<std::uint32_t> targets;
  std::vector<Vec3<double>> accelerations;
};

// The reference is computed on the input rounded to the tree's precision T: the error measured is
// then the tree's own, not the rounding of its input (as the suite's validation does). No targets
// where `check_bodies` is 0.
template <class T>
ReferenceSample make_reference_sample(const std::vector<Body<double>>& bodies,
                                      std::size_t check_bodies, double softening) {
  ReferenceSample sample;
  sample.seen = convert_precision<double, T>(convert_precision<T, double>(bodies));
  if (check_bodies == 0) return sample;
  sample.targets = validation_targets(sample.seen.size(), check_bodies);
  sample.accelerations = reference_accelerations(sample.seen, softening, sample.targets);
  return sample;
}

// The median of a few values; the mean of the middle two for an even count.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return 0.5 * (values[middle - 1] + values[middle]);
}

// Checks what CLI11 cannot of the options both benchmarks take, naming the option: throws
// UsageError.
inline void check_tree_bench_options(const std::vector<double>& thetas, int reps, double softening,
                                     std::size_t leaf_capacity, std::size_t group_capacity) {
  for (const double theta : thetas) {
    if (!(theta >= 0 && theta <= 1)) {
      throw UsageError(fmt::format("--theta: {} is outside [0, 1]", theta));
    }
  }
  if (reps < 1) throw UsageError("--reps: at least 1 timed repetition");
  if (leaf_capacity < 1) throw UsageError("--leaf-capacity: at least 1 body");
  if (group_capacity < 1) throw UsageError("--group-capacity: at least 1 target");
  if (!(softening >= kSmallestSoftening)) {
    throw UsageError(
        fmt::format("--softening: at least {} (kSmallestSoftening)", kSmallestSoftening));
  }
}

}  // namespace nbody
