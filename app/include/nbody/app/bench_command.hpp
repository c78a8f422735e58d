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

// The command line `bench` hands Google Benchmark: the arguments, with its default warm-up added
// and --help / -h held back (Google Benchmark would print only its own flags, and exit), then put
// back for nbody-fair's help. Owns the strings it adds; `argv` points into it and the original.
class BenchArguments {
 public:
  BenchArguments(int argc, char** argv);
  BenchArguments(const BenchArguments&) = delete;
  BenchArguments& operator=(const BenchArguments&) = delete;
  int& argc() { return argc_; }
  char** argv() { return pointers_.data(); }

 private:
  std::string warmup_;
  std::vector<char*> pointers_;
  int argc_ = 0;
};

// Google Benchmark's own flags, as its --help lists them: the second half of `bench --help`.
void print_benchmark_flags();

// Runs the benchmarks (Google Benchmark's flags were taken by benchmark::Initialize). Returns the
// exit code: 0, or 1 when a profile failed. Throws UsageError for a pattern that matches nothing.
int run_bench(const Registry& registry, const BenchOptions& options);

}  // namespace nbody
