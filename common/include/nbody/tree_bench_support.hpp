#pragma once
// What the tree cores' benchmarks (cpu/bench/tree_bench, gpu/bench/gpu_tree_bench) share: the
// sampled float64 reference their accuracy is measured against, the median of their repetitions,
// and the options both take. Include only from them: it declares options on a CLI11 app.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "nbody/bodies.hpp"
#include "nbody/errors.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"
#include "nbody/sizes.hpp"
#include "nbody/tree_groups.hpp"

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

// The options both benchmarks take; each bench's own options derive from these.
struct TreeBenchOptions {
  InitialCondition ic = InitialCondition::plummer;
  std::vector<std::size_t> sizes;
  std::vector<double> thetas = {0.3, 0.5, 0.7};
  std::string precision = "f32";
  int reps = 5;
  std::size_t check_bodies = 4096;
  std::uint64_t seed = 1;
  double softening = 0.01;
  std::size_t leaf_capacity = kDefaultLeafCapacity;
  std::size_t group_capacity = kDefaultGroupCapacity;
  std::string json_path;  // empty: no JSON
};

// The spellings of --ic and --sizes, read by CLI11 and parsed by finish_tree_bench_options.
struct TreeBenchSpellings {
  std::string ic = "plummer";
  std::string sizes = "64K,256K,1M";
};

// Declares the options both benchmarks take on `app`.
inline void add_tree_bench_options(CLI::App& app, TreeBenchOptions& options,
                                   TreeBenchSpellings& spellings) {
  app.add_option("--ic", spellings.ic, "initial condition: " + initial_condition_choices());
  app.add_option("--sizes", spellings.sizes, "body counts, e.g. 64K,256K,1M");
  app.add_option("--theta", options.thetas, "opening parameters in [0, 1]")->delimiter(',');
  app.add_option("--precision", options.precision, "the bodies' precision: f32 or f64")
      ->check(CLI::IsMember({"f32", "f64"}));
  app.add_option("--reps", options.reps, "timed evaluations after one warm-up");
  app.add_option("--check-bodies", options.check_bodies,
                 "targets compared with the float64 reference, evenly spread (0: none)");
  app.add_option("--seed", options.seed, "seed of the initial condition");
  app.add_option("--softening", options.softening, "softening length");
  app.add_option("--leaf-capacity", options.leaf_capacity, "bodies a leaf holds at most");
  app.add_option("--group-capacity", options.group_capacity,
                 "targets that share a walk, at most (larger leaves excepted)");
  app.add_option("--json", options.json_path, "also write the rows to this JSON file");
}

// Parses --ic and --sizes and checks what CLI11 cannot; throws UsageError naming the option.
inline void finish_tree_bench_options(const TreeBenchSpellings& spellings,
                                      TreeBenchOptions& options) {
  options.ic = parse_initial_condition(spellings.ic);  // its message names --ic
  try {
    options.sizes = parse_sizes(spellings.sizes);
  } catch (const UsageError& e) {
    const std::string message = e.what();
    // parse_sizes does not know which option it parses.
    if (message.rfind("--", 0) == 0) throw;
    throw UsageError("--sizes: " + message);
  }
  for (const double theta : options.thetas) {
    if (!(theta >= 0 && theta <= 1)) {
      throw UsageError(fmt::format("--theta: {} is outside [0, 1]", theta));
    }
  }
  if (options.reps < 1) throw UsageError("--reps: at least 1 timed repetition");
  if (options.leaf_capacity < 1) throw UsageError("--leaf-capacity: at least 1 body");
  if (options.group_capacity < 1) throw UsageError("--group-capacity: at least 1 target");
  if (!(options.softening >= kSmallestSoftening)) {
    throw UsageError(
        fmt::format("--softening: at least {} (kSmallestSoftening)", kSmallestSoftening));
  }
}

}  // namespace nbody
