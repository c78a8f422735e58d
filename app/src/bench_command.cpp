#include "nbody/app/bench_command.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "nbody/app/benchmark_harness.hpp"
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
  if (impl.info.device != DeviceKind::gpu) {
    fmt::print("{} N={}: --profile-metrics reads CUPTI counters of GPU formulations only\n",
               impl.info.name, n);
    return 1;
  }
  PreparedRun* run = nullptr;
  try {
    run = &inputs.run(impl, n);
  } catch (const std::exception& e) {
    fmt::print("{} N={}: unavailable: {}\n", impl.info.name, n, e.what());
    return 1;
  }
  const profiler::KernelProfile profile = profiler::profile_kernels(
      options.execution.gpu_device, [&] { run->evaluate(PreparedRun::Scope::kernel); },
      options.profile_metrics);
  if (!profile.unavailable_reason.empty()) {
    fmt::print("{} N={}: counters unavailable: {}\n", impl.info.name, n,
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
  (void)inputs;
  (void)options;
  fmt::print("{} N={}: this build has no CUDA, so no CUPTI counters\n", impl.info.name, n);
  return 1;
#endif
}

}  // namespace

BenchArguments::BenchArguments(int argc, char** argv)
    : warmup_(fmt::format("--benchmark_min_warmup_time={}", kBenchWarmupSeconds)) {
  std::vector<char*> help;
  bool warmup_given = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (i > 1 && (argument == "--help" || argument == "-h")) {
      help.push_back(argv[i]);
      continue;
    }
    warmup_given |= argument.starts_with("--benchmark_min_warmup_time");
    pointers_.push_back(argv[i]);
  }
  if (!warmup_given) pointers_.push_back(warmup_.data());
  argc_ = static_cast<int>(pointers_.size());
  benchmark::Initialize(&argc_, pointers_.data());
  // Initialize compacted what it left; the help flags follow it, then argv's closing null.
  pointers_.resize(static_cast<std::size_t>(argc_));
  pointers_.insert(pointers_.end(), help.begin(), help.end());
  argc_ = static_cast<int>(pointers_.size());
  pointers_.push_back(nullptr);
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
    int failures = 0;
    for (const Implementation* impl : selected) {
      for (const std::size_t n : options.sizes) failures += profile_one(*impl, n, inputs, options);
    }
    return failures == 0 ? 0 : 1;
  }
  for (const Implementation* impl : selected) {
    for (const std::size_t n : options.sizes) {
      for (const PreparedRun::Scope scope : options.scopes) {
        // The CPU has no end-to-end scope of its own (nothing moves): timed once, as kernel.
        if (scope == PreparedRun::Scope::end_to_end && impl->info.device == DeviceKind::cpu) {
          continue;
        }
        auto* bench = register_evaluation(
            {.name = fmt::format("{}/{}/n:{}", impl->info.name,
                                 scope == PreparedRun::Scope::kernel ? "kernel" : "end_to_end", n),
             .run = [impl, n, &inputs]() -> PreparedRun& { return inputs.run(*impl, n); },
             .scope = scope,
             .n = n,
             .algorithm = impl->info.algorithm,
             .annotate =
                 [impl, n, &inputs, accuracy = options.accuracy](benchmark::State& state,
                                                                 PreparedRun& run) {
                   annotate(state, run, *impl, n, inputs, accuracy);
                 }});
        bench->Unit(benchmark::kMillisecond);
        if (options.iterations > 0) bench->Iterations(options.iterations);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::ClearRegisteredBenchmarks();
  return 0;
}

}  // namespace nbody
