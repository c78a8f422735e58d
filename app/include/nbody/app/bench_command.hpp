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

// Each timed benchmark's warm-up before Google Benchmark measures, where the command line does not
// set --benchmark_min_warmup_time: as long as run's (the first evaluation alone read 20-30% slow
// on the CPU, clocks and caches still cold).
inline constexpr double kBenchWarmupSeconds = 0.05;

// Hands Google Benchmark its flags (--benchmark_..., checked by the caller), with the default
// warm-up (kBenchWarmupSeconds) where they set none; `program` is argv[0], which its reports name
// (it keeps the pointer). Throws UsageError for a flag it does not take.
void initialize_benchmark(char* program, const std::vector<std::string>& flags);

// Google Benchmark's own flags, as its --help lists them: the second half of `bench --help`.
void print_benchmark_flags();

// Runs the benchmarks (Google Benchmark's flags given to initialize_benchmark). Returns the exit
// code: 0, or 1 when a profile failed. Throws UsageError where nothing would run: a pattern or
// --benchmark_filter that matches nothing, formulations that cannot run here, --profile-metrics
// of a CPU formulation or in a build without CUDA.
int run_bench(const Registry& registry, const BenchOptions& options);

}  // namespace nbody
