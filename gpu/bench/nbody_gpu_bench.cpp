// nbody-gpu-bench: the GPU side's tuning tool. Each benchmark prepares one formulation on one
// input (outside timing), discards one warm-up evaluation, then reports the device-event time of
// each evaluation as Google Benchmark manual time, and interactions per second (N^2 per
// evaluation, also for symmetric kernels: FAIRNESS rule 4).
//
//   nbody-gpu-bench --impl '^gpu' --sizes 16384,65536,1048576 [--variants] [--iterations 1]
//                   [--benchmark_repetitions=5 --benchmark_out=bench.json ...]
//   nbody-gpu-bench --impl '^gpu\.tuned$' --sizes 4194304 --profile-metrics dram__bytes_read.sum
//     instead of timing, profiles one kernel-scope evaluation of each (CUPTI range profiler,
//     kernel replay) and prints the metrics beside the input and output sizes: the counters can be
//     checked by hand on any formulation and size with only the passes the chosen metrics need.
#include <cstdint>
#include <map>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "nbody/app/wiring.hpp"
#include "nbody/gpu/formulations.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/profiler/cupti.hpp"
#include "nbody/registry.hpp"

namespace {

constexpr double kSoftening = 0.01;

struct Options {
  std::string impl_pattern = "^gpu";
  std::vector<std::size_t> sizes = {16384, 65536, 1048576};
  std::vector<std::string> scopes = {"kernel", "end_to_end"};
  std::string initial_condition = "plummer";
  std::uint64_t seed = 42;
  int gpu_device = 0;
  int iterations = 0;  // 0: let Google Benchmark choose
  bool variants = false;
  std::vector<std::string> profile_metrics;
};

// Inputs shared by every benchmark of one size.
class InputCache {
 public:
  InputCache(nbody::InitialCondition ic, std::uint64_t seed) : ic_(ic), seed_(seed) {}
  const std::vector<nbody::Body<double>>& bodies(std::size_t n) {
    auto [it, inserted] = inputs_.try_emplace(n);
    if (inserted) it->second = nbody::make_initial_condition(ic_, n, seed_).bodies;
    return it->second;
  }

 private:
  nbody::InitialCondition ic_;
  std::uint64_t seed_;
  std::map<std::size_t, std::vector<nbody::Body<double>>> inputs_;
};

void run_benchmark(benchmark::State& state, const nbody::Implementation& impl,
                   nbody::PreparedRun::Scope scope, std::size_t n, InputCache& inputs,
                   const nbody::ExecutionOptions& options) {
  if (const auto reason = impl.unavailable_reason()) {
    state.SkipWithError(reason->c_str());
    return;
  }
  if (impl.size_limit_reason) {
    if (const auto reason = impl.size_limit_reason(n, options)) {
      state.SkipWithError(reason->c_str());
      return;
    }
  }
  const std::unique_ptr<nbody::PreparedRun> run =
      impl.prepare(inputs.bodies(n), kSoftening, options);
  run->evaluate(scope);  // warm-up: module load, first-touch, clocks
  double seconds = 0;
  for (auto _ : state) {
    const double elapsed = run->evaluate(scope);
    state.SetIterationTime(elapsed);
    seconds += elapsed;
  }
  const double interactions = static_cast<double>(n) * static_cast<double>(n);
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["Ginteractions_per_s"] = interactions * iterations / seconds * 1e-9;
  state.counters["N"] = static_cast<double>(n);
  const auto details = run->details();
  std::string label;
  for (const char* key : {"grid", "block", "bodies_per_thread", "j_splits", "blocks_per_sm"}) {
    if (const auto it = details.find(key); it != details.end()) {
      label += fmt::format("{}{}={}", label.empty() ? "" : " ", key, it->second);
    }
  }
  state.SetLabel(label);
}

// Prints the chosen counters of one kernel-scope evaluation, with the bytes a kernel must at least
// move (padded input bodies and accelerations) for comparison with dram__bytes_*.
int profile_one(const nbody::Implementation& impl, std::size_t n, InputCache& inputs,
                const nbody::ExecutionOptions& options, const std::vector<std::string>& metrics) {
  if (const auto reason = impl.unavailable_reason()) {
    fmt::print("{} N={}: unavailable: {}\n", impl.info.name, n, *reason);
    return 1;
  }
  const std::unique_ptr<nbody::PreparedRun> run =
      impl.prepare(inputs.bodies(n), kSoftening, options);
  run->evaluate(nbody::PreparedRun::Scope::kernel);  // module load, first touch
  const nbody::profiler::KernelProfile profile = nbody::profiler::profile_kernels(
      options.gpu_device, [&] { run->evaluate(nbody::PreparedRun::Scope::kernel); }, metrics);
  if (!profile.unavailable_reason.empty()) {
    fmt::print("{} N={}: counters unavailable: {}\n", impl.info.name, n,
               profile.unavailable_reason);
    return 1;
  }
  const auto details = run->details();
  const double padded =
      details.contains("padded_bodies") ? std::stod(details.at("padded_bodies")) : double(n);
  const bool f32 = impl.info.precision == nbody::Precision::f32;
  const double input_bytes =
      padded * double(f32 ? sizeof(nbody::Body<float>) : sizeof(nbody::Body<double>));
  const double output_bytes =
      padded * double(f32 ? sizeof(nbody::Vec3<float>) : sizeof(nbody::Vec3<double>));
  fmt::print("{} N={}: {} passes, {} kernel launch(es); input {:.4g} B, output {:.4g} B\n",
             impl.info.name, n, profile.passes, profile.ranges.size(), input_bytes, output_bytes);
  for (const nbody::profiler::RangeValues& range : profile.ranges) {
    for (const auto& [name, value] : range.values) {
      fmt::print("  range {:<4} {:<55} {:.6g}\n", range.name, name, value);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags out of argv
  Options options;
  CLI::App app{"Times the GPU formulations with device events (Google Benchmark manual time)"};
  app.add_option("--impl", options.impl_pattern, "regex over implementation names");
  app.add_option("--sizes", options.sizes, "body counts")->delimiter(',');
  app.add_option("--scope", options.scopes, "kernel and/or end_to_end")
      ->delimiter(',')
      ->check(CLI::IsMember({"kernel", "end_to_end"}));
  app.add_option("--ic", options.initial_condition, "uniform or plummer");
  app.add_option("--seed", options.seed, "initial-condition seed");
  app.add_option("--gpu-device", options.gpu_device, "CUDA device ordinal");
  app.add_option("--iterations", options.iterations, "timed evaluations (0: automatic)");
  app.add_flag("--variants", options.variants,
               "also time the shapes of gpu.tuned whose names match --impl");
  app.add_option("--profile-metrics", options.profile_metrics,
                 "profile one evaluation with these CUPTI metrics instead of timing")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  try {
    const nbody::Registry registry = nbody::make_default_registry();
    std::vector<nbody::Implementation> implementations;
    for (const nbody::Implementation* impl :
         registry.select(options.impl_pattern, options.variants)) {
      implementations.push_back(*impl);
    }
    InputCache inputs(nbody::parse_initial_condition(options.initial_condition), options.seed);
    const nbody::ExecutionOptions execution{.gpu_device = options.gpu_device};
    if (!options.profile_metrics.empty()) {
      int failures = 0;
      for (const nbody::Implementation& impl : implementations) {
        for (const std::size_t n : options.sizes) {
          failures += profile_one(impl, n, inputs, execution, options.profile_metrics);
        }
      }
      return failures == 0 ? 0 : 1;
    }
    for (const nbody::Implementation& impl : implementations) {
      for (const std::size_t n : options.sizes) {
        for (const std::string& scope_name : options.scopes) {
          const auto scope = scope_name == "kernel" ? nbody::PreparedRun::Scope::kernel
                                                    : nbody::PreparedRun::Scope::end_to_end;
          auto* bench = benchmark::RegisterBenchmark(
              fmt::format("{}/{}/N={}", impl.info.name, scope_name, n).c_str(),
              [&impl, scope, n, &inputs, execution](benchmark::State& state) {
                run_benchmark(state, impl, scope, n, inputs, execution);
              });
          bench->UseManualTime()->Unit(benchmark::kMillisecond);
          if (options.iterations > 0) bench->Iterations(options.iterations);
        }
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-gpu-bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
