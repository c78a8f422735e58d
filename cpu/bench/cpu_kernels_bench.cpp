// nbody-cpu-bench: the registered CPU formulations under Google Benchmark, for a user who wants the
// usual --benchmark_filter / --benchmark_format / --benchmark_repetitions flags, plus sweeps of the
// oneTBB grain (cpu.tbb) and tile (cpu.tbb.symmetric) that the registry does not expose.
//
//   nbody-cpu-bench --sizes 16384,65536 --benchmark_filter='cpu\.(simd|tbb)'
//
// Benchmark names are <implementation>[/grain:G|/tile:T]/n:N. Each time is the run's own steady
// clock (manual time), so multithreaded runs are rated by wall time, not the main thread's CPU
// time. items_per_second is interactions per second, N^2 per evaluation (FAIRNESS.md rule 4).
#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "nbody/accuracy.hpp"
#include "nbody/cpu/register.hpp"
#include "nbody/cpu/simd_runs.hpp"
#include "nbody/errors.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace {

using nbody::Body;
using nbody::ExecutionOptions;
using nbody::PreparedRun;

struct Settings {
  std::vector<std::size_t> sizes = {1024, 4096, 16384, 65536};
  std::vector<std::size_t> grains;  // empty: no cpu.tbb grain sweep
  std::vector<std::size_t> tiles;   // empty: no cpu.tbb.symmetric tile sweep
  std::string initial_condition = "uniform";
  std::uint64_t seed = 1;
  double softening = 0.01;
  bool accuracy = false;
  std::size_t accuracy_targets = 4096;
  ExecutionOptions options;
};

using Prepare = std::function<std::unique_ptr<PreparedRun>(std::span<const Body<double>>, double,
                                                           const ExecutionOptions&)>;

// Inputs and the prepared run of the benchmark in progress, kept between Google Benchmark's calls
// of one benchmark (it calls the function again to settle the iteration count).
class BenchContext {
 public:
  explicit BenchContext(Settings settings) : settings_(std::move(settings)) {}

  const Settings& settings() const { return settings_; }

  const std::vector<Body<double>>& bodies(std::size_t n) {
    auto it = inputs_.find(n);
    if (it == inputs_.end()) {
      const nbody::InitialCondition ic =
          nbody::parse_initial_condition(settings_.initial_condition);
      it = inputs_.emplace(n, nbody::make_initial_condition(ic, n, settings_.seed).bodies).first;
    }
    return it->second;
  }

  // The run for `key`, prepared (and warmed up once, untimed) on first use; the previous
  // benchmark's run is released.
  PreparedRun& run(const std::string& key, std::size_t n, const Prepare& prepare) {
    if (key != current_key_) {
      current_run_.reset();
      current_run_ = prepare(float32_rounded(n), settings_.softening, settings_.options);
      current_run_->evaluate(PreparedRun::Scope::kernel);
      current_key_ = key;
      current_accuracy_.reset();
      if (settings_.accuracy) current_accuracy_ = measure_accuracy(n);
    }
    return *current_run_;
  }

  const std::optional<nbody::AccuracyMetrics>& accuracy() const { return current_accuracy_; }

 private:
  // Inputs rounded to float32 and back, so the float64 reference sees what the kernels see.
  const std::vector<Body<double>>& float32_rounded(std::size_t n) {
    auto it = rounded_.find(n);
    if (it == rounded_.end()) {
      const auto as_float = nbody::convert_precision<float, double>(bodies(n));
      it = rounded_.emplace(n, nbody::convert_precision<double, float>(as_float)).first;
    }
    return it->second;
  }

  nbody::AccuracyMetrics measure_accuracy(std::size_t n) {
    const std::vector<Body<double>>& seen = float32_rounded(n);
    const std::vector<std::uint32_t> targets =
        nbody::validation_targets(n, settings_.accuracy_targets);
    const auto key = std::make_pair(n, targets.size());
    auto it = references_.find(key);
    if (it == references_.end()) {
      it = references_
               .emplace(key, nbody::reference_accelerations(seen, settings_.softening, targets))
               .first;
    }
    return nbody::compare_with_reference(current_run_->accelerations(), it->second, targets, seen);
  }

  Settings settings_;
  std::map<std::size_t, std::vector<Body<double>>> inputs_;
  std::map<std::size_t, std::vector<Body<double>>> rounded_;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<nbody::Vec3<double>>> references_;
  std::string current_key_;
  std::unique_ptr<PreparedRun> current_run_;
  std::optional<nbody::AccuracyMetrics> current_accuracy_;
};

void run_benchmark(benchmark::State& state, BenchContext& context, const std::string& key,
                   std::size_t n, const Prepare& prepare) {
  PreparedRun* run = nullptr;
  try {
    run = &context.run(key, n, prepare);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) state.SetIterationTime(run->evaluate(PreparedRun::Scope::kernel));
  const double interactions = static_cast<double>(n) * static_cast<double>(n);
  state.SetItemsProcessed(static_cast<std::int64_t>(interactions) * state.iterations());
  state.counters["GFLOP/s@20"] =
      benchmark::Counter(nbody::kConventionalFlopsPerInteraction * interactions * 1e-9 *
                             static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  if (const auto& accuracy = context.accuracy()) {
    state.counters["rel_l2"] = accuracy->relative_l2;
    state.counters["max_rel"] = accuracy->max_relative;
    state.counters["net_force"] = accuracy->net_force_residual;
  }
  std::string label;
  for (const auto& [name, value] : run->details()) {
    if (name == "isa" || name == "threads" || name == "grain_bodies" || name == "tile_bodies" ||
        name == "pair_evaluations_per_n_squared") {
      label += fmt::format("{}{}={}", label.empty() ? "" : " ", name, value);
    }
  }
  state.SetLabel(label);
}

void register_benchmarks(BenchContext& context, const nbody::Registry& registry) {
  const Settings& settings = context.settings();
  const auto add = [&](const std::string& name, std::size_t n, Prepare prepare) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [&context, name, n, prepare](benchmark::State& state) {
                                   run_benchmark(state, context, name, n, prepare);
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  for (const std::size_t n : settings.sizes) {
    for (const nbody::Implementation& impl : registry.all()) {
      if (impl.info.device != nbody::DeviceKind::cpu || impl.unavailable_reason()) continue;
      add(fmt::format("{}/n:{}", impl.info.name, n), n, impl.prepare);
    }
    for (const std::size_t grain : settings.grains) {
      add(fmt::format("cpu.tbb/grain:{}/n:{}", grain, n), n,
          [grain](std::span<const Body<double>> bodies, double softening,
                  const ExecutionOptions& options) {
            return nbody::cpu::simd::prepare_tbb_all_pairs(bodies, softening, options, grain);
          });
    }
    for (const std::size_t tile : settings.tiles) {
      add(fmt::format("cpu.tbb.symmetric/tile:{}/n:{}", tile, n), n,
          [tile](std::span<const Body<double>> bodies, double softening,
                 const ExecutionOptions& options) {
            return nbody::cpu::simd::prepare_tbb_symmetric(bodies, softening, options, tile);
          });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags out of argv

  Settings settings;
  CLI::App app{"nbody-fair CPU kernels under Google Benchmark (--benchmark_* flags also apply)"};
  app.add_option("--sizes", settings.sizes, "body counts")->delimiter(',');
  app.add_option("--isa", settings.options.isa, "force an ISA: sse4.2, avx2 or avx512f");
  app.add_option("--threads", settings.options.threads, "oneTBB threads, 0 = all");
  app.add_option("--grains", settings.grains, "cpu.tbb grains (bodies) to sweep")->delimiter(',');
  app.add_option("--tiles", settings.tiles, "cpu.tbb.symmetric tiles (bodies) to sweep")
      ->delimiter(',');
  app.add_option("--ic", settings.initial_condition, "uniform or plummer");
  app.add_option("--seed", settings.seed, "initial-condition seed");
  app.add_option("--softening", settings.softening, "softening length");
  app.add_flag("--accuracy", settings.accuracy,
               "report rel_l2, max_rel and net_force against the float64 reference");
  app.add_option("--accuracy-targets", settings.accuracy_targets,
                 "bodies compared with the reference (evenly spread)");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::optional<nbody::cpu::simd::Isa> widest = nbody::cpu::simd::widest_isa();
    std::cerr << fmt::format("nbody-cpu-bench: widest ISA here {}, forced '{}'\n",
                             widest ? nbody::cpu::simd::isa_name(*widest) : "none",
                             settings.options.isa);
    nbody::Registry registry;
    nbody::register_cpu_implementations(registry);
    BenchContext context(std::move(settings));
    register_benchmarks(context, registry);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const nbody::UsageError& e) {
    std::cerr << "nbody-cpu-bench: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
