#pragma once
// `nbody-fair bench`: the registered formulations (and, with --variants, their tuning variants)
// under Google Benchmark, for kernel work: its --benchmark_* flags (filter, repetitions, format,
// out, ...) apply, and --profile-metrics reads chosen CUPTI metrics of one evaluation instead.
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/initial_conditions.hpp"
#include "nbody/registry.hpp"

namespace nbody {

struct BenchOptions {
  std::string implementation_pattern = ".";
  bool variants = false;
  std::vector<std::size_t> sizes = {16384, 65536};
  std::vector<PreparedRun::Scope> scopes = {PreparedRun::Scope::kernel};
  InitialCondition initial_condition = InitialCondition::uniform_ball;
  std::uint64_t seed = 20261121;
  double softening = 0.01;
  ExecutionOptions execution;
  int iterations = 0;  // 0: Google Benchmark chooses
  // Error metrics against the float64 reference (of up to this many bodies) as counters.
  bool accuracy = false;
  std::size_t accuracy_bodies = 4096;
  // CUPTI metrics: profile one kernel-scope evaluation of each instead of timing.
  std::vector<std::string> profile_metrics;
};

// Runs the benchmarks (Google Benchmark's flags were taken by benchmark::Initialize). Returns the
// exit code: 0, or 1 when a profile failed. Throws UsageError for a pattern that matches nothing.
int run_bench(const Registry& registry, const BenchOptions& options);

}  // namespace nbody
