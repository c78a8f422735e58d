#include "nbody/app/bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/errors.hpp"
#include "nbody/reference.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/profiler/cupti.hpp"
#endif

namespace nbody {
namespace {

// Inputs per size, the run of the benchmark in progress (one at a time: the previous one's memory
// is released), and references for --accuracy. Google Benchmark calls a benchmark's function
// several times; the run is prepared and warmed up once.
class BenchInputs {
 public:
  explicit BenchInputs(const BenchOptions& options) : options_(options) {}

  PreparedRun& run(const Implementation& impl, std::size_t n) {
    const std::string key = fmt::format("{}/{}", impl.info.name, n);
    if (key != current_key_) {
      current_run_.reset();
      current_key_.clear();
      if (const auto reason = impl.unavailable_reason()) throw std::runtime_error(*reason);
      if (impl.size_limit_reason) {
        if (const auto reason = impl.size_limit_reason(n, options_.execution)) {
          throw std::runtime_error(*reason);
        }
      }
      current_run_ =
          impl.prepare(seen_by(impl.info.precision, n), options_.softening, options_.execution);
      current_run_->evaluate(PreparedRun::Scope::kernel);  // warm-up: first touch, clocks
      current_key_ = key;
    }
    return *current_run_;
  }

  // Error metrics of the last evaluation of `run` against the float64 reference.
  AccuracyMetrics accuracy(PreparedRun& run, Precision precision, std::size_t n) {
    const std::vector<Body<double>>& bodies = seen_by(precision, n);
    const std::vector<std::uint32_t> targets = validation_targets(n, options_.accuracy_bodies);
    auto [it, inserted] = references_.try_emplace({precision, n});
    if (inserted) it->second = reference_accelerations(bodies, options_.softening, targets);
    return compare_with_reference(run.accelerations(), it->second, targets, bodies);
  }

  // The inputs as a formulation of `precision` sees them, promoted back to double.
  const std::vector<Body<double>>& seen_by(Precision precision, std::size_t n) {
    auto [it, inserted] = inputs_.try_emplace({precision, n});
    if (inserted) {
      it->second = make_initial_condition(options_.initial_condition, n, options_.seed).bodies;
      if (precision == Precision::f32) {
        it->second = convert_precision<double, float>(convert_precision<float, double>(it->second));
      }
    }
    return it->second;
  }

 private:
  const BenchOptions& options_;
  std::map<std::pair<Precision, std::size_t>, std::vector<Body<double>>> inputs_;
  std::map<std::pair<Precision, std::size_t>, std::vector<Vec3<double>>> references_;
  std::string current_key_;
  std::unique_ptr<PreparedRun> current_run_;
};

// What a reader of a benchmark line wants of the run's details.
constexpr const char* kLabelledDetails[] = {
    "isa",   "threads",           "grain_bodies", "tile_bodies",  "grid",
    "block", "bodies_per_thread", "j_splits",     "blocks_per_sm"};

void annotate(benchmark::State& state, PreparedRun& run, const Implementation& impl, std::size_t n,
              BenchInputs& inputs, bool accuracy) {
  const auto details = run.details();
  std::string label;
  for (const char* key : kLabelledDetails) {
    if (const auto it = details.find(key); it != details.end()) {
      label += fmt::format("{}{}={}", label.empty() ? "" : " ", key, it->second);
    }
  }
  state.SetLabel(label);
  if (accuracy) {
    const AccuracyMetrics metrics = inputs.accuracy(run, impl.info.precision, n);
    state.counters["rel_l2"] = metrics.relative_l2;
    state.counters["max_rel"] = metrics.max_relative;
    state.counters["net_force"] = metrics.net_force_residual;
  }
}

// Prints the chosen counters of one kernel-scope evaluation, with the bytes a kernel must at least
// move (padded input bodies and accelerations) for comparison with dram__bytes_*.
int profile_one(const Implementation& impl, std::size_t n, BenchInputs& inputs,
                const BenchOptions& options) {
#if defined(NBODY_HAVE_CUDA)
  PreparedRun* run = nullptr;
  try {
    run = &inputs.run(impl, n);
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-fair: {} N={}: unavailable: {}\n", impl.info.name, n, e.what());
    return 1;
  }
  const profiler::KernelProfile profile = profiler::profile_kernels(
      options.execution.gpu_device, [&] { run->evaluate(PreparedRun::Scope::kernel); },
      options.profile_metrics);
  if (!profile.unavailable_reason.empty()) {
    fmt::print(stderr, "nbody-fair: {} N={}: counters unavailable: {}\n", impl.info.name, n,
               profile.unavailable_reason);
    return 1;
  }
  const auto details = run->details();
  const double padded = details.contains("padded_bodies") ? std::stod(details.at("padded_bodies"))
                                                          : static_cast<double>(n);
  const bool f32 = impl.info.precision == Precision::f32;
  const double input_bytes =
      padded * static_cast<double>(f32 ? sizeof(Body<float>) : sizeof(Body<double>));
  const double output_bytes =
      padded * static_cast<double>(f32 ? sizeof(Vec3<float>) : sizeof(Vec3<double>));
  fmt::print("{} N={}: {} passes, {} kernel launch(es); input {:.4g} B, output {:.4g} B\n",
             impl.info.name, n, profile.passes, profile.ranges.size(), input_bytes, output_bytes);
  for (const profiler::RangeValues& range : profile.ranges) {
    for (const auto& [name, value] : range.values) {
      fmt::print("  range {:<4} {:<55} {:.6g}\n", range.name, name, value);
    }
  }
  return 0;
#else
  (void)impl;
  (void)n;
  (void)inputs;
  (void)options;
  return 1;  // refused before: check_profiled
#endif
}

// --profile-metrics reads CUPTI counters of GPU formulations: anything else is bad input, said
// before anything runs.
void check_profiled(const std::vector<const Implementation*>& selected) {
#if !defined(NBODY_HAVE_CUDA)
  (void)selected;
  throw UsageError("--profile-metrics: this build has no CUDA, so no CUPTI counters");
#else
  for (const Implementation* impl : selected) {
    if (impl->info.device != DeviceKind::gpu) {
      throw UsageError(
          fmt::format("--profile-metrics: {} is a CPU formulation; CUPTI counters are read of GPU "
                      "formulations only (choose them with --impl)",
                      impl->info.name));
    }
  }
#endif
}

// One benchmark bench registers: a formulation at one size and scope.
struct PlannedBenchmark {
  const Implementation* impl;
  std::size_t n;
  PreparedRun::Scope scope;
  std::string name;  // as registered
};

std::vector<PlannedBenchmark> plan_benchmarks(const std::vector<const Implementation*>& selected,
                                              const BenchOptions& options) {
  std::vector<PlannedBenchmark> planned;
  for (const Implementation* impl : selected) {
    for (const std::size_t n : options.sizes) {
      for (const PreparedRun::Scope scope : options.scopes) {
        // The CPU has no end-to-end scope of its own (nothing moves): timed once, as kernel.
        if (scope == PreparedRun::Scope::end_to_end && impl->info.device == DeviceKind::cpu) {
          continue;
        }
        const bool kernel = scope == PreparedRun::Scope::kernel;
        planned.push_back(
            {impl, n, scope,
             fmt::format("{}/{}/n:{}", impl->info.name, kernel ? "kernel" : "end_to_end", n)});
      }
    }
  }
  if (planned.empty()) {
    throw UsageError(
        "--scope end_to_end: the formulations selected run on the CPU, where nothing moves and "
        "end-to-end is the kernel: nothing to run");
  }
  return planned;
}

// Whether Google Benchmark's --benchmark_filter keeps the benchmark registered as `name`: its
// regular expression (POSIX extended, searched), negated by a leading '-', matched against the
// name Google Benchmark gives the benchmark (the registered name and its settings: iterations,
// manual time). Google Benchmark itself says nothing matched on stderr, and exits 0.
class BenchmarkFilter {
 public:
  explicit BenchmarkFilter(std::string spec) : spec_(std::move(spec)) {
    std::string pattern = spec_.empty() || spec_ == "all" ? "." : spec_;
    negative_ = pattern.starts_with('-');
    if (negative_) pattern.erase(0, 1);
    try {
      regex_ = std::regex(pattern, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw UsageError(
          fmt::format("--benchmark_filter={}: not a regular expression: {}", spec_, e.what()));
    }
  }

  bool keeps(const std::string& name, int iterations) const {
    const std::string full_name =
        name + (iterations > 0 ? fmt::format("/iterations:{}", iterations) : "") + "/manual_time";
    return std::regex_search(full_name, regex_) != negative_;
  }

  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
  bool negative_ = false;
  std::regex regex_;
};

// A run that would time nothing is bad input: the filter keeps no benchmark, or none of those it
// keeps can run here (each says why).
void require_something_runs(const std::vector<PlannedBenchmark>& planned,
                            const BenchOptions& options) {
  const BenchmarkFilter filter(benchmark::GetBenchmarkFilter());
  std::vector<const PlannedBenchmark*> kept;
  for (const PlannedBenchmark& b : planned) {
    if (filter.keeps(b.name, options.iterations)) kept.push_back(&b);
  }
  if (kept.empty()) {
    throw UsageError(fmt::format(
        "--benchmark_filter={}: matches none of the {} benchmarks of --impl and --sizes ({}, ...)",
        filter.spec(), planned.size(), planned.front().name));
  }
  std::vector<std::string> reasons;
  for (const PlannedBenchmark* b : kept) {
    const auto reason = b->impl->cannot_run(b->n, options.execution);
    if (!reason) return;
    reasons.push_back(fmt::format("{} N={}: {}", b->impl->info.name, b->n, *reason));
  }
  throw UsageError(fmt::format("nothing selected can run here: {}", reasons.front()));
}

}  // namespace

void initialize_benchmark(char* program, const std::vector<std::string>& flags) {
  std::vector<std::string> arguments = flags;
  const bool warmup_given = std::any_of(flags.begin(), flags.end(), [](const std::string& flag) {
    return flag.starts_with("--benchmark_min_warmup_time");
  });
  if (!warmup_given) {
    arguments.push_back(fmt::format("--benchmark_min_warmup_time={}", kBenchWarmupSeconds));
  }
  // Google Benchmark keeps the program's name (its reports print it): argv[0] itself, which lives
  // as long as the program. The flags' values it copies.
  std::vector<char*> pointers = {program};
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  int argc = static_cast<int>(pointers.size()) - 1;
  benchmark::Initialize(&argc, pointers.data());
  // What Initialize did not take, it left after the program's name.
  if (argc > 1) throw UsageError(fmt::format("{}: Google Benchmark did not take it", pointers[1]));
}

void print_benchmark_flags() {
  fmt::print("\nGoogle Benchmark's flags, passed through (default warm-up here {} s):\n",
             kBenchWarmupSeconds);
  std::fflush(stdout);
  benchmark::PrintDefaultHelp();
}

int run_bench(const Registry& registry, const BenchOptions& options) {
  const std::vector<const Implementation*> selected =
      registry.select(options.implementation_pattern, options.variants);
  BenchInputs inputs(options);
  if (!options.profile_metrics.empty()) {
    check_profiled(selected);
    int failures = 0;
    for (const Implementation* impl : selected) {
      for (const std::size_t n : options.sizes) failures += profile_one(*impl, n, inputs, options);
    }
    return failures == 0 ? 0 : 1;
  }
  const std::vector<PlannedBenchmark> planned = plan_benchmarks(selected, options);
  require_something_runs(planned, options);
  for (const PlannedBenchmark& b : planned) {
    auto* bench = register_evaluation(
        {.name = b.name,
         .run = [impl = b.impl, n = b.n, &inputs]() -> PreparedRun& {
           return inputs.run(*impl, n);
         },
         .scope = b.scope,
         .n = b.n,
         .algorithm = b.impl->info.algorithm,
         .annotate = [impl = b.impl, n = b.n, &inputs, accuracy = options.accuracy](
                         benchmark::State& state,
                         PreparedRun& run) { annotate(state, run, *impl, n, inputs, accuracy); }});
    bench->Unit(benchmark::kMillisecond);
    if (options.iterations > 0) bench->Iterations(options.iterations);
  }
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::ClearRegisteredBenchmarks();
  // require_something_runs reads the filter as Google Benchmark does; should they ever differ,
  // running nothing is still no success.
  if (ran == 0) throw UsageError("bench: Google Benchmark ran no benchmark");
  return 0;
}

}  // namespace nbody
