// nbody-fair: list, validate, run, simulate, bench, report, compare, scaling, peaks. The command
// line only parses and dispatches; measurement lives in the runner and the benchmark harness,
// printing in reports/.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "nbody/app/bench_command.hpp"
#include "nbody/app/build_description.hpp"
#include "nbody/app/ceilings.hpp"
#include "nbody/app/extra_work.hpp"
#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/launcher.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/errors.hpp"
#include "nbody/io/snapshot.hpp"
#include "nbody/physics.hpp"
#include "nbody/registry.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "nbody/reports/comparison.hpp"
#include "nbody/reports/comparison_report.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "nbody/reports/report_files.hpp"
#include "nbody/reports/scaling.hpp"
#include "nbody/reports/scaling_report.hpp"
#include "nbody/sizes.hpp"
#if NBODY_HAVE_MPI
#include "nbody/distributed/decomposed.hpp"
#endif

namespace {

using nbody::UsageError;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// The first SIGINT/SIGTERM asks the suite to stop after the current measurement; results.json
// then says so. timeout(1) delivers its signal twice at once (to the process and to its group), so
// only a signal a second or more after the first ends the program at once, keeping the results
// of the last checkpoint. Function-local static: a handler can reach nothing else.
void on_signal(std::atomic<bool>& flag) {
  static std::atomic<std::int64_t> first_signal_ns{0};
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::int64_t now_ns = now.tv_sec * 1'000'000'000LL + now.tv_nsec;
  std::int64_t first_ns = 0;
  if (first_signal_ns.compare_exchange_strong(first_ns, now_ns)) {
    flag = true;
  } else if (now_ns - first_ns > 1'000'000'000LL) {
    _exit(kExitInterrupted);
  }
}

// A rank of a decomposed run stops only with the others: its handler sets this, and the ranks'
// next agreement sets the suite's interrupt_requested() on all of them at once.
std::atomic<bool>& signal_received() {
  static std::atomic<bool> received{false};
  return received;
}

void on_interrupt(int) {
  on_signal(nbody::interrupt_requested());
}
void on_interrupt_in_rank(int) {
  on_signal(signal_received());
}

void handle_interrupts(bool decomposed) {
  for (const int signal : {SIGINT, SIGTERM}) {
    std::signal(signal, decomposed ? on_interrupt_in_rank : on_interrupt);
  }
}

// This process's part in a suite decomposed over the ranks of mpirun, as run_main
// needs it; run_main gets none in one process. Built over nbody_distributed by main.
struct RankPart {
  int rank = 0;
  int ranks = 1;
  int rank_on_host = 0;  // this rank's place among its host's ranks
  // The first agreement of the ranks, once each has checked its command line: every rank the
  // same arguments; then each rank's host, in rank order.
  std::function<std::vector<std::string>()> start;
  // How GPU formulations' slices travel between the ranks, settled by every rank together
  // (nbody::settle_gpu_exchange): the request, this rank's GPU, whether GPU formulations run.
  std::function<nbody::RankGpuExchange(nbody::GpuExchangeRequest, int, bool)> gpu_exchange;
  // The registry whose runs and simulations are decomposed over the ranks; GPU formulations whose
  // slices travel through host memory say why not NCCL (the second argument, where there is one).
  std::function<nbody::Registry(const nbody::Registry&, const std::string&)> decompose;
  std::function<double(double)> max_over_ranks;
  std::function<double(double)> sum_on_host;
  // Runs `work` on rank 0 alone, then the ranks agree: its failure (an unwritable --out) becomes
  // every rank's.
  std::function<void(const std::function<void()>& work)> on_rank_zero;

  bool writes() const { return rank == 0; }  // rank 0 alone prints progress and writes results
};

// What a decomposed suite's ranks share beyond the registry: silence but on rank 0, no counters
// (each rank's would be of its own slice), the agreement the timings decide through, how GPU
// formulations' slices travel between the ranks (`request`; the result holds NCCL's
// communicator, where they travel by NCCL, and must outlive the suite), the record.
nbody::RankGpuExchange decompose_suite(const RankPart& part, const nbody::Registry& registry,
                                       nbody::GpuExchangeRequest request,
                                       nbody::SuiteOptions& suite,
                                       std::optional<nbody::ProcessDecomposition>& decomposition) {
  if (suite.execution.gpu_devices.size() > 1) {
    throw UsageError(
        "--gpus: under mpirun each rank drives one GPU (its host's next: --gpu sets "
        "the first); several GPUs in one process are for a run without mpirun");
  }
  suite.counters = false;
  // One GPU per rank: the ranks of a host take consecutive devices from --gpu, wrapping round the
  // host's devices (ranks beyond them share one).
  if (part.rank_on_host > 0) {
    if (const auto gpus = nbody::describe_gpus(); !gpus.empty()) {
      suite.execution.gpu_device =
          (suite.execution.gpu_device + part.rank_on_host) % static_cast<int>(gpus.size());
    }
  }
  suite.timing.max_over_processes = part.max_over_ranks;
  suite.timing.job_cpu_seconds_on_host = part.sum_on_host;
  std::vector<std::string> hosts = part.start();
  const auto selected = registry.select(suite.implementation_pattern);
  const bool gpu_formulations =
      std::any_of(selected.begin(), selected.end(), [](const nbody::Implementation* impl) {
        return impl->info.device == nbody::DeviceKind::gpu;
      });
  nbody::RankGpuExchange exchange =
      part.gpu_exchange(request, suite.execution.gpu_device, gpu_formulations);
  suite.execution.gpu_group = exchange.group;
  // Falling back where a GPU could have run (not where there is none): said once, and recorded
  // in each GPU formulation's details.
  if (part.writes() && request == nbody::GpuExchangeRequest::automatic &&
      !exchange.why_not_nccl.empty() && !nbody::describe_gpus().empty()) {
    fmt::print(stderr,
               "nbody-fair: GPU formulations' slices travel through host memory (MPI): {}\n",
               exchange.why_not_nccl);
  }
  decomposition = nbody::ProcessDecomposition{.ranks = part.ranks,
                                              .scheme = "target_range",
                                              .hosts = std::move(hosts),
                                              .gpu_exchange = exchange.name()};
  return exchange;
}

// Creates the output folder and proves it writable before anything is measured, so a bad --out
// fails at once and leaves nothing behind.
void prepare_output_directory(const std::filesystem::path& directory) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(directory, ec);
  std::filesystem::create_directories(directory, ec);
  if (ec || !std::filesystem::is_directory(directory)) {
    throw UsageError(fmt::format("--out: cannot create the folder '{}'{}", directory.string(),
                                 ec ? ": " + ec.message() : ""));
  }
  const std::filesystem::path probe = directory / ".nbody-fair-write-test";
  const bool writable = static_cast<bool>(std::ofstream(probe));
  std::filesystem::remove(probe, ec);
  if (!writable) {
    if (!existed) std::filesystem::remove(directory, ec);
    throw UsageError(fmt::format("--out: the folder '{}' is not writable", directory.string()));
  }
}

// report --in takes a results.json or the run folder holding one (as does compare BASE NEW);
// `option` names the argument in messages.
std::filesystem::path results_file_of(const std::filesystem::path& in,
                                      const std::string& option = "--in") {
  std::error_code ec;
  if (!std::filesystem::exists(in, ec)) {
    throw UsageError(fmt::format("{} {}: no such file or folder", option, in.string()));
  }
  if (!std::filesystem::is_directory(in, ec)) return in;
  const std::filesystem::path file = in / "results.json";
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw UsageError(fmt::format("{} {}: the folder has no results.json", option, in.string()));
  }
  return file;
}

// One side of `compare`: a results.json, a run folder, or a folder of run folders (several runs of
// one build, in name order).
std::vector<nbody::ResultsDocument> load_side(const std::filesystem::path& in,
                                              const std::string& side) {
  std::error_code ec;
  if (std::filesystem::is_directory(in, ec) && !std::filesystem::exists(in / "results.json", ec)) {
    std::vector<std::filesystem::path> runs;
    for (const auto& entry : std::filesystem::directory_iterator(in, ec)) {
      if (std::filesystem::is_regular_file(entry.path() / "results.json", ec)) {
        runs.push_back(entry.path() / "results.json");
      }
    }
    std::sort(runs.begin(), runs.end());
    if (runs.empty()) {
      throw UsageError(
          fmt::format("{} {}: the folder has no results.json, nor run folders that hold one", side,
                      in.string()));
    }
    std::vector<nbody::ResultsDocument> docs;
    for (const auto& file : runs) docs.push_back(nbody::load_results(file));
    return docs;
  }
  return {nbody::load_results(results_file_of(in, side))};
}

// CLI11's PositiveNumber and NonNegativeNumber print the whole double range in their messages,
// and let infinity through (--min-time inf never ended).
CLI::Validator at_least(double minimum, bool inclusive) {
  return CLI::Validator(
      [minimum, inclusive](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        if (inclusive ? value >= minimum : value > minimum) return {};
        return fmt::format("must be {} {}", inclusive ? "at least" : "greater than", minimum);
      },
      inclusive ? fmt::format(">= {}", minimum) : fmt::format("> {}", minimum));
}

// CLI11 reads "-1" into an unsigned option as 2^64 - 1 and a number past 2^64 as the largest:
// an unsigned option takes whole numbers that fit, and nothing else.
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end) {
          return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
        }
        return {};
      },
      "UINT");
}

// A list of sizes given to `option`, or bad input naming it.
std::vector<std::size_t> sizes_option(const char* option, const std::vector<std::string>& items) {
  try {
    return nbody::parse_sizes(items);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", option, e.what()));
  }
}

struct CommonOptions {
  std::vector<std::string> sizes;
  std::string impl = ".";
  std::string ic = "uniform";
  std::vector<std::string> gpus;  // --gpus: ordinals, or "all"
  std::optional<std::string> gpu_exchange;
  nbody::GpuExchangeRequest exchange = nbody::GpuExchangeRequest::automatic;
  nbody::SuiteOptions suite;
};

// --gpus: "all" (every GPU of this machine) or ordinals; throws UsageError for anything else.
std::vector<int> parse_gpu_list(const std::vector<std::string>& items) {
  if (items.size() == 1 && items.front() == "all") {
    const std::size_t count = nbody::describe_gpus().size();
    if (count == 0) throw UsageError("--gpus all: this machine has no GPU nbody-fair can use");
    std::vector<int> all(count);
    for (std::size_t d = 0; d < count; ++d) all[d] = static_cast<int>(d);
    return all;
  }
  std::vector<int> devices;
  for (const std::string& item : items) {
    std::size_t used = 0;
    int ordinal = -1;
    try {
      ordinal = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || ordinal < 0) {
      throw UsageError(
          fmt::format("--gpus: '{}' is not a device ordinal (use e.g. 0,1 or all)", item));
    }
    devices.push_back(ordinal);
  }
  return devices;
}

void add_selection_options(CLI::App& command, CommonOptions& o) {
  command.add_option("--sizes", o.sizes,
                     "Body counts, e.g. 1000,4096 or 1K,64K,1M (default: from the hardware)");
  command.add_option("--impl", o.impl, "Regular expression selecting implementations by name")
      ->capture_default_str();
  command.add_option("--ic", o.ic, "Initial condition: uniform or plummer")->capture_default_str();
  command.add_option("--seed", o.suite.seed, "Seed of the initial condition")
      ->capture_default_str()
      ->check(whole_number());
  command.add_option("--softening", o.suite.softening, "Softening length eps")
      ->capture_default_str()
      ->check(at_least(nbody::kSmallestSoftening, true));
  command.add_option("--threads", o.suite.execution.threads, "CPU threads (0 = all)")
      ->capture_default_str()
      ->check(at_least(0, true));
  command.add_option("--isa", o.suite.execution.isa,
                     "Force a CPU SIMD ISA: sse4.2, avx2 or avx512f");
  command.add_option("--gpu", o.suite.execution.gpu_device, "CUDA device ordinal")
      ->capture_default_str()
      ->check(at_least(0, true));
  command
      .add_option("--gpus", o.gpus,
                  "Several GPUs driven by this process, e.g. 0,1 or all: each computes a slice of "
                  "the bodies, NCCL all-gathers (GPU formulations; replaces --gpu)")
      ->delimiter(',')
      ->excludes("--gpu");
  command.add_option("--gpu-exchange", o.gpu_exchange,
                     "Under mpirun, how GPU formulations' slices travel between the ranks: nccl "
                     "(between their GPUs, one GPU per rank) or mpi (through host memory). "
                     "Default: nccl where every rank can, else mpi");
  command
      .add_option("--validate-bodies", o.suite.validation_bodies,
                  "Validate every body up to this N, an even sample of this many above")
      ->capture_default_str()
      ->check(whole_number())
      ->check(at_least(0, false));
  command.add_flag(
      "--no-reference-cache", [&o](std::int64_t) { o.suite.reference_cache = false; },
      "Recompute the float64 reference instead of reading the on-disk cache");
}

// Turns the parsed strings into SuiteOptions; throws UsageError for bad values.
void finish_options(CommonOptions& o, const nbody::Registry& registry, int argc, char** argv,
                    bool include_variants = false) {
  o.suite.initial_condition = nbody::parse_initial_condition(o.ic);
  o.suite.implementation_pattern = o.impl;
  if (!o.sizes.empty()) o.suite.sizes = sizes_option("--sizes", o.sizes);
  if (o.gpu_exchange) o.exchange = nbody::parse_gpu_exchange(*o.gpu_exchange);
  if (!o.gpus.empty()) {
    o.suite.execution.gpu_devices = parse_gpu_list(o.gpus);
    // One listed is --gpu: monitors, ceilings and records name that device.
    o.suite.execution.gpu_device = o.suite.execution.gpu_devices.front();
    if (o.suite.execution.gpu_devices.size() == 1) o.suite.execution.gpu_devices.clear();
  }
  // An unknown pattern or option is an error before anything runs.
  (void)registry.select(o.impl, include_variants);
  registry.check_options(o.suite.execution);
  o.suite.command_line.assign(argv, argv + argc);
}

void print_list(const nbody::Registry& registry, const nbody::ExecutionOptions& execution,
                bool variants) {
  const std::vector<const nbody::Implementation*> listed = registry.select(".", variants);
  std::size_t width = 14;
  for (const nbody::Implementation* impl : listed) width = std::max(width, impl->info.name.size());
  fmt::print("{:<{}} {:<4} {:<4} {:<4} {:<12} {:<10} {:<15} {:>7}  {}\n", "implementation", width,
             "dev", "lay", "prec", "accuracy", "pairs", "role", "threads", "status");
  for (const nbody::Implementation* impl : listed) {
    const auto reason = impl->unavailable_reason();
    fmt::print("{:<{}} {:<4} {:<4} {:<4} {:<12} {:<10} {:<15} {:>7}  {}\n", impl->info.name, width,
               nbody::to_string(impl->info.device), nbody::to_string(impl->info.layout),
               nbody::to_string(impl->info.precision), nbody::to_string(impl->info.accuracy_class),
               nbody::to_string(impl->info.pairs), nbody::to_string(impl->info.role),
               impl->threads_used(execution), reason ? "unavailable: " + *reason : "available");
  }
}

void print_validation(const nbody::ResultsDocument& doc) {
  fmt::print("{:<22} {:>9} {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {}\n", "implementation",
             "N", "status", "rel_L2", "L2 bound", "max_rel", "max bound", "p99_rel", "median_rel",
             "note");
  for (const nbody::ResultRecord& r : doc.results) {
    if (!r.accuracy) {
      fmt::print("{:<22} {:>9} {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {}\n",
                 r.implementation, r.n, nbody::to_string(r.status), "-", "-", "-", "-", "-", "-",
                 r.reason);
      continue;
    }
    const nbody::AccuracyRecord& a = *r.accuracy;
    fmt::print(
        "{:<22} {:>9} {:<8} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e}  {}\n",
        r.implementation, r.n, nbody::to_string(r.status), a.metrics.relative_l2,
        a.relative_l2_bound, a.metrics.max_relative, a.max_relative_bound, a.metrics.p99_relative,
        a.metrics.median_relative,
        a.sampled ? fmt::format("{} bodies sampled", a.metrics.bodies_compared) : "");
  }
}

int exit_code(const nbody::ResultsDocument& doc) {
  if (doc.interrupted) return kExitInterrupted;
  for (const nbody::ResultRecord& r : doc.results) {
    if (r.status == nbody::Status::failed) return kExitFailed;
  }
  return 0;
}

// `part`: this process's part in a suite decomposed over ranks (mpirun), null in one process.
int run_main(int argc, char** argv, const RankPart* part) {
  CLI::App app{"nbody-fair: a fair CPU-versus-GPU all-pairs N-body benchmark"};
  app.require_subcommand(1);
  app.set_version_flag("--version", nbody::describe_version,
                       "Print the version and this build's features (CUDA, CUPTI, SIMD ISAs)");
  nbody::Registry registry = nbody::make_default_registry();

  nbody::ExecutionOptions list_execution;
  CLI::App* list =
      app.add_subcommand("list", "List the implementations and whether they can run here");
  list->add_option("--threads", list_execution.threads, "CPU threads (0 = all)");
  list->add_option("--gpu", list_execution.gpu_device, "CUDA device ordinal");
  bool list_variants = false;
  list->add_flag("--variants", list_variants,
                 "Also list the tuning variants (other shapes of the optimized kernels)");

  CommonOptions validate_options;
  CLI::App* validate =
      app.add_subcommand("validate", "Compare each implementation with the float64 reference");
  add_selection_options(*validate, validate_options);

  CommonOptions run_options;
  std::filesystem::path out_dir = "results";
  CLI::App* run = app.add_subcommand(
      "run",
      "Validate and time each implementation; write results.json, report.md, report.html and "
      "results.csv, and cache the float64 reference and the ceilings (see peaks)");
  add_selection_options(*run, run_options);
  run->add_option("--reps", run_options.suite.timing.repetitions,
                  "Timed repetitions (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  run->add_option("--min-time", run_options.suite.timing.min_time_s,
                  "Minimum seconds per repetition")
      ->capture_default_str()
      ->check(at_least(0, false));
  run->add_option("--budget", run_options.suite.budget_s,
                  "Seconds the measurements may take: planned from probes before the first, "
                  "what does not fit left out and listed (default with the default sizes: 150 "
                  "where a GPU is usable, 75 otherwise; with --sizes none; 0: none)")
      ->check(at_least(0, true));
  run->add_option("--max-eval-seconds", run_options.suite.max_eval_seconds,
                  "Skip an (implementation, N) whose one evaluation is predicted to take longer")
      ->capture_default_str()
      ->check(at_least(0, false));
  run->add_option("--max-attempts", run_options.suite.timing.max_attempts,
                  "Time a measurement again while other processes take over 10% of the CPUs, up "
                  "to this many attempts in all (the least disturbed is kept, flagged)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  run->add_option("--out", out_dir,
                  "Output folder: results.json, report.md, report.html, results.csv")
      ->capture_default_str();
  std::vector<std::string> counters_at;
  run->add_option("--counters-at", counters_at,
                  "Sizes whose measurements read hardware counters, or 'all' (default: the "
                  "largest size up to 64K)");
  run->add_flag(
      "--no-counters", [&run_options](std::int64_t) { run_options.suite.counters = false; },
      "Do not read hardware counters");
  std::string extra_work;
  run->add_option("--extra-work", extra_work,
                  "NAME=FRACTION: NAME also evaluates the first FRACTION of its targets again in "
                  "every evaluation (e.g. cpu.simd=10%), a real slowdown to test a compare gate; "
                  "recorded in its details");

  // A simulation starts from a Plummer sphere in virial equilibrium: the cold uniform ball
  // collapses, and a run that went wrong by design is no default.
  CommonOptions simulate_selection{.ic = "plummer"};
  nbody::SimulateOptions simulate_options;
  std::optional<double> t_end;
  std::filesystem::path simulate_out = "simulation";
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Integrate with each implementation as the force engine (kick-drift-kick leapfrog): "
      "conservation, divergence from float64, time per step by phase");
  add_selection_options(*simulate, simulate_selection);
  simulate->add_option("--dt", simulate_options.dt, "Time step (Henon units)")
      ->capture_default_str()
      ->check(at_least(0, false));
  CLI::Option* steps_option =
      simulate->add_option("--steps", simulate_options.steps, "Steps to take")
          ->capture_default_str()
          ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  simulate->add_option("--t-end", t_end, "Integrate to this time instead of --steps")
      ->check(at_least(0, false))
      ->excludes(steps_option);
  simulate
      ->add_option("--diag-every", simulate_options.diag_every,
                   "Check conservation every K steps (0: first and last step only)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  simulate
      ->add_option("--snapshot-every", simulate_options.snapshot_every,
                   "Write an HDF5 snapshot every K steps into OUT/snapshots (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  simulate->add_option("--ic-file", simulate_options.ic_file,
                       "Initial condition from an HDF5 snapshot (docs/snapshot-format.md)");
  simulate
      ->add_option("--phase-steps", simulate_options.phase_steps,
                   "The first steps are timed phase by phase (force, integration)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  simulate
      ->add_option("--divergence-up-to", simulate_options.divergence_up_to,
                   "Follow the float64 trajectory for N up to this, to measure divergence")
      ->capture_default_str()
      ->check(whole_number());
  std::optional<double> simulate_budget;
  simulate
      ->add_option("--budget", simulate_budget,
                   "Seconds all the simulations may take: one estimated from its smaller N's step "
                   "not to fit what is left is left out, saying so (default with the default "
                   "sizes 100; 0: none)")
      ->check(at_least(0, true));
  simulate
      ->add_option("--max-seconds", simulate_options.max_seconds,
                   "Skip an (implementation, N) whose steps are predicted to take longer: from "
                   "its step at the last smaller N before anything is prepared, else from its "
                   "first step")
      ->capture_default_str()
      ->check(at_least(0, false));
  simulate
      ->add_option("--out", simulate_out,
                   "Output folder: results.json, report.md, report.html, results.csv, and "
                   "snapshots/ with --snapshot-every")
      ->capture_default_str();

  CommonOptions bench_selection;
  nbody::BenchOptions bench_options;
  std::vector<std::string> bench_scopes = {"kernel"};
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Time formulations under Google Benchmark for kernel work: its --benchmark_* flags apply "
      "(listed below), and each benchmark warms up for 0.05 s unless "
      "--benchmark_min_warmup_time says otherwise");
  add_selection_options(*bench, bench_selection);
  bench->add_flag("--variants", bench_options.variants,
                  "Also time the tuning variants whose names match --impl");
  bench->add_option("--scope", bench_scopes, "kernel and/or end_to_end (GPU: copies included)")
      ->delimiter(',')
      ->check(CLI::IsMember({"kernel", "end_to_end"}))
      ->capture_default_str();
  bench->add_option("--iterations", bench_options.iterations, "Timed evaluations (0: automatic)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  bench->add_flag("--accuracy", bench_options.accuracy,
                  "Report rel_l2, max_rel and net_force against the float64 reference");
  bench
      ->add_option("--profile-metrics", bench_options.profile_metrics,
                   "Profile one evaluation with these CUPTI metrics instead of timing")
      ->delimiter(',');

  std::filesystem::path report_in, report_out, report_cpu_from, report_gpu_from;
  CLI::App* report = app.add_subcommand(
      "report",
      "Re-render report.md, report.html and results.csv from a results.json, or from two runs of "
      "one problem on different hosts: the CPU side from one, the GPU side from the other");
  CLI::Option* report_in_option =
      report->add_option("--in", report_in, "results.json, or the run folder holding it");
  CLI::Option* cpu_from_option = report->add_option(
      "--cpu-from", report_cpu_from,
      "A run whose CPU formulations make the CPU side (results.json or its folder; with "
      "--gpu-from and --out)");
  CLI::Option* gpu_from_option = report->add_option(
      "--gpu-from", report_gpu_from,
      "A run of the same problem whose GPU formulations make the GPU side (with --cpu-from)");
  report_in_option->excludes(cpu_from_option)->excludes(gpu_from_option);
  cpu_from_option->needs(gpu_from_option);
  gpu_from_option->needs(cpu_from_option);
  report->add_option("--out", report_out,
                     "Output folder for report.md, report.html and results.csv (default: the "
                     "folder of --in; required with --cpu-from)");

  std::filesystem::path compare_base, compare_new, compare_out;
  nbody::reports::ComparisonSettings compare_settings;
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare two runs: time ratios, a significance test, accuracy changes");
  compare
      ->add_option("BASE", compare_base,
                   "results.json, the run folder holding it, or a folder of run folders "
                   "(several runs of one build, compared by their fastest)")
      ->required();
  compare
      ->add_option("NEW", compare_new,
                   "results.json, the run folder holding it, or a folder of run folders")
      ->required();
  compare
      ->add_option("--threshold", compare_settings.threshold,
                   "A time ratio above 1 + this is slower, below 1 / (1 + this) faster")
      ->capture_default_str()
      ->check(at_least(0, false));
  compare
      ->add_option("--alpha", compare_settings.alpha, "Significance level of the U test, below 1")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
            return value > 0 && value < 1 ? "" : "must be between 0 and 1";
          },
          "in (0, 1)"));
  compare->add_flag(
      "--no-shift-correction",
      [&compare_settings](std::int64_t) { compare_settings.correct_machine_shift = false; },
      "Judge each ratio as measured, without removing the common shift of its device's "
      "measurements (how far the machine itself moved between the runs)");
  compare->add_option("--out", compare_out, "Also write compare.md and compare.html here");

  std::vector<std::filesystem::path> scaling_in;
  std::filesystem::path scaling_out;
  CLI::App* scaling = app.add_subcommand(
      "scaling", "Set runs at several scales side by side: speedup, efficiency, communication");
  scaling
      ->add_option("RESULTS", scaling_in,
                   "results.json files, or run folders holding one: one per rank count or GPUs")
      ->required();
  scaling->add_option("--out", scaling_out, "Write scaling.md, scaling.html and scaling.csv here")
      ->required();

  bool remeasure = false;
  CLI::App* peaks =
      app.add_subcommand("peaks",
                         "Measure (or show the cached) ceilings of this machine; the cache is "
                         "$NBODY_FAIR_CACHE_DIR, else $XDG_CACHE_HOME/nbody-fair, else "
                         "~/.cache/nbody-fair");
  peaks->add_flag("--remeasure", remeasure, "Ignore the cached ceilings");
  std::vector<std::string> peaks_gpus;
  peaks
      ->add_option("--gpus", peaks_gpus,
                   "Also NCCL's all-gather between these GPUs, e.g. 0,1 or all: its latency and "
                   "bus bandwidth (measured each time, never cached)")
      ->delimiter(',');

  // CLI11 would answer a mistyped command with "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> command_names;
    for (const CLI::App* command : std::as_const(app).get_subcommands({})) {
      command_names.push_back(command->get_name());
    }
    if (std::find(command_names.begin(), command_names.end(), argv[1]) == command_names.end()) {
      throw UsageError(fmt::format("unknown command '{}' (commands: {})", argv[1],
                                   fmt::join(command_names, ", ")));
    }
  }
  // --version beside any command prints the version, as before one.
  for (CLI::App* command : app.get_subcommands({})) {
    command->set_version_flag("--version", nbody::describe_version,
                              "Print the version and this build's features (as nbody-fair "
                              "--version)");
  }
  // Help and the version are printed once under mpirun: by rank 0.
  const auto print_once = [&](const CLI::Error& e) {
    return part != nullptr && part->rank != 0 ? e.get_exit_code() : app.exit(e);
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    const int code = print_once(e);
    if (*bench && (part == nullptr || part->rank == 0)) nbody::print_benchmark_flags();
    return code;
  } catch (const CLI::CallForAllHelp& e) {
    return print_once(e);
  } catch (const CLI::CallForVersion& e) {
    return print_once(e);
  } catch (const CLI::ParseError& e) {
    if (part != nullptr) throw UsageError(e.what());  // the ranks agree on it (main)
    fmt::print(stderr, "nbody-fair: {}\n", e.what());
    return kExitUsage;
  }
  if (part != nullptr && !*run && !*validate && !*simulate) {
    throw UsageError(fmt::format(
        "{} runs in one process: under mpirun only run, validate and simulate are decomposed",
        app.get_subcommands().front()->get_name()));
  }

  if (*list) {
    registry.check_options(list_execution);  // --gpu 5 on a machine without it: bad input
    print_list(registry, list_execution, list_variants);
    return 0;
  }
  if (*bench) {
    finish_options(bench_selection, registry, argc, argv, bench_options.variants);
    bench_options.implementation_pattern = bench_selection.impl;
    if (!bench_selection.sizes.empty()) bench_options.sizes = bench_selection.suite.sizes;
    bench_options.initial_condition = bench_selection.suite.initial_condition;
    bench_options.seed = bench_selection.suite.seed;
    bench_options.softening = bench_selection.suite.softening;
    bench_options.execution = bench_selection.suite.execution;
    bench_options.accuracy_bodies = bench_selection.suite.validation_bodies;
    bench_options.scopes.clear();
    for (const std::string& scope : bench_scopes) {
      bench_options.scopes.push_back(scope == "kernel" ? nbody::PreparedRun::Scope::kernel
                                                       : nbody::PreparedRun::Scope::end_to_end);
    }
    handle_interrupts(false);
    return nbody::run_bench(registry, bench_options);
  }
  if (*report) {
    if (report_in.empty() && report_cpu_from.empty()) {
      throw UsageError("report: --in, or --cpu-from with --gpu-from, is required");
    }
    if (!report_cpu_from.empty() && report_out.empty()) {
      throw UsageError("--out is required with --cpu-from and --gpu-from");
    }
    const std::filesystem::path results_file =
        report_in.empty() ? std::filesystem::path() : results_file_of(report_in);
    const nbody::ResultsDocument doc =
        report_in.empty()
            ? nbody::reports::combine_sides(
                  {nbody::load_results(results_file_of(report_cpu_from, "--cpu-from")),
                   report_cpu_from.string()},
                  {nbody::load_results(results_file_of(report_gpu_from, "--gpu-from")),
                   report_gpu_from.string()})
            : nbody::load_results(results_file);
    const std::filesystem::path dir = report_out.empty() ? results_file.parent_path() : report_out;
    prepare_output_directory(dir.empty() ? "." : dir);
    const auto written = nbody::reports::write_report_files(doc, dir.empty() ? "." : dir);
    for (const std::filesystem::path& file : written) fmt::print("wrote {}\n", file.string());
    return 0;
  }
  if (*compare) {
    // Both files are read before the output folder is touched: bad input leaves nothing.
    const std::vector<nbody::ResultsDocument> base_runs = load_side(compare_base, "BASE");
    const std::vector<nbody::ResultsDocument> new_runs = load_side(compare_new, "NEW");
    const nbody::reports::Comparison comparison =
        nbody::reports::compare_results(base_runs, new_runs, compare_settings);
    const auto source = [](const std::filesystem::path& in, std::size_t runs) {
      return runs == 1 ? results_file_of(in).string()
                       : fmt::format("{} ({} runs)", in.string(), runs);
    };
    const nbody::reports::ComparedSources sources{source(compare_base, base_runs.size()),
                                                  source(compare_new, new_runs.size())};
    // An --out that cannot be made is bad input, said before anything is printed.
    if (!compare_out.empty()) prepare_output_directory(compare_out);
    fmt::print("{}", nbody::reports::render_comparison_markdown(comparison, sources));
    if (!compare_out.empty()) {
      for (const auto& file :
           nbody::reports::write_comparison_files(comparison, sources, compare_out)) {
        fmt::print("wrote {}\n", file.string());
      }
    }
    return comparison.regressed() ? kExitFailed : 0;
  }
  if (*scaling) {
    // Every document is read and the study made before the output folder is touched: bad input
    // leaves nothing.
    std::vector<nbody::reports::ScalingInput> inputs;
    std::map<std::filesystem::path, std::filesystem::path> given;  // each document, once
    for (const std::filesystem::path& in : scaling_in) {
      const std::filesystem::path file = results_file_of(in, "RESULTS");
      // The same measurement twice would read as a repetition of it (and be flagged as one).
      if (const auto [it, fresh] = given.try_emplace(std::filesystem::weakly_canonical(file), in);
          !fresh) {
        throw UsageError(fmt::format("RESULTS {} and {}: the same document given twice",
                                     it->second.string(), in.string()));
      }
      inputs.push_back({file.string(), nbody::load_results(file)});
    }
    const nbody::reports::ScalingStudy study = nbody::reports::analyze_scaling(inputs);
    prepare_output_directory(scaling_out);
    fmt::print("Fairness audit: {}\n", study.verdict);
    for (const auto& file : nbody::reports::write_scaling_files(study, scaling_out)) {
      fmt::print("wrote {}\n", file.string());
    }
    return 0;
  }
  if (*simulate) {
    finish_options(simulate_selection, registry, argc, argv);
    simulate_options.suite = simulate_selection.suite;
    simulate_options.budget_s = simulate_budget;
    if (!std::isfinite(simulate_options.dt)) throw UsageError("--dt must be a finite time step");
    if (t_end) {
      if (!std::isfinite(*t_end)) throw UsageError("--t-end must be finite");
      const double steps = std::ceil(*t_end / simulate_options.dt - 1e-9);
      if (steps < 1 || steps > 1e12) {
        throw UsageError(fmt::format("--t-end {} with --dt {} gives {} steps", *t_end,
                                     simulate_options.dt, steps));
      }
      simulate_options.steps = static_cast<std::int64_t>(steps);
    }
    if (simulate_options.snapshot_every > 0 || !simulate_options.ic_file.empty()) {
      if (const auto reason = nbody::snapshot_io_unavailable_reason()) {
        throw UsageError(fmt::format(
            "{}: {}", simulate_options.ic_file.empty() ? "--snapshot-every" : "--ic-file",
            *reason));
      }
    }
    if (!simulate_options.ic_file.empty()) {
      if (!simulate_selection.sizes.empty()) {
        throw UsageError("--ic-file sets N: give it or --sizes, not both");
      }
      nbody::SnapshotData data = nbody::read_snapshot(simulate_options.ic_file);
      simulate_options.initial_state = std::move(data.state);
    }
    if (part != nullptr && simulate_options.snapshot_every > 0) {
      throw UsageError("--snapshot-every: not under mpirun yet (run it in one process)");
    }
    const auto selected = registry.select(simulate_options.suite.implementation_pattern);
    for (const std::size_t n : simulate_options.suite.sizes) nbody::check_memory(selected, n);
    std::optional<nbody::ProcessDecomposition> decomposition;
    std::optional<nbody::Registry> decomposed;
    nbody::RankGpuExchange exchange;  // NCCL's communicator, where there is one, for the suite
    if (part == nullptr) {
      prepare_output_directory(simulate_out);
    } else {  // every rank's input was good before rank 0 touches the output folder
      exchange = decompose_suite(*part, registry, simulate_selection.exchange,
                                 simulate_options.suite, decomposition);
      part->on_rank_zero([&] { prepare_output_directory(simulate_out); });
      decomposed = part->decompose(registry, exchange.why_not_nccl);
    }
    simulate_options.snapshot_dir = simulate_out / "snapshots";
    const bool writes = part == nullptr || part->writes();
    const auto progress = writes ? nbody::make_stderr_progress() : nbody::make_silent_progress();
    std::vector<std::filesystem::path> reports_written;
    std::function<void(const nbody::ResultsDocument&)> checkpoint;
    if (writes) {
      checkpoint = [&](const nbody::ResultsDocument& doc) {
        nbody::save_results(doc, simulate_out / "results.json");
        reports_written = nbody::reports::write_report_files(doc, simulate_out);
      };
    }
    // Several GPUs of this process: the all-gather between them, the scaling model's.
    const auto exchange_started = std::chrono::steady_clock::now();
    const std::optional<nbody::Ceilings> exchange_ceilings =
        part == nullptr
            ? nbody::measure_exchange_ceilings(simulate_options.suite.execution.gpu_devices)
            : std::nullopt;
    const nbody::SuiteContext context{
        .registry = decomposed ? *decomposed : registry,
        .counter_sources = {},
        .ceilings = exchange_ceilings,
        .ceilings_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - exchange_started)
                .count(),
        .gpus = nbody::describe_gpus(),
        .gpu_observation = {},
        .progress = *progress,
        .checkpoint = checkpoint,
        .decomposition = decomposition};
    handle_interrupts(part != nullptr);
    const nbody::ResultsDocument doc = nbody::run_simulations(context, simulate_options);
    if (writes) {
      context.checkpoint(doc);
      fmt::print("{}", nbody::reports::render_summary(doc));
      fmt::print("\nwrote {}", (simulate_out / "results.json").string());
      for (const std::filesystem::path& file : reports_written) fmt::print(", {}", file.string());
      fmt::print("\n");
    }
    if (doc.interrupted) return kExitInterrupted;
    for (const nbody::SimulationRecord& r : doc.simulations) {
      if (r.status == nbody::Status::failed) return kExitFailed;
    }
    return 0;
  }
  if (*peaks) {
    nbody::CeilingOptions ceiling_options;
    ceiling_options.remeasure = remeasure;
    if (!peaks_gpus.empty()) {
      ceiling_options.gpu_devices = parse_gpu_list(peaks_gpus);
      // As run's --gpus: a GPU listed twice, or one the machine lacks, is bad input.
      nbody::ExecutionOptions listed;
      listed.gpu_devices = ceiling_options.gpu_devices;
      registry.check_options(listed);
    }
    const std::optional<nbody::Ceilings> ceilings = nbody::measure_ceilings(ceiling_options);
    fmt::print("{}", nbody::reports::render_ceilings_table(ceilings));
    return 0;
  }

  const bool is_run = static_cast<bool>(*run);
  if (is_run && !extra_work.empty()) {
    nbody::add_extra_work(registry, nbody::parse_extra_work(extra_work));
  }
  CommonOptions& options = is_run ? run_options : validate_options;
  finish_options(options, registry, argc, argv);
  if (counters_at.size() == 1 && counters_at.front() == "all") {
    options.suite.counters_at_every_size = true;
  } else if (!counters_at.empty()) {
    options.suite.counter_sizes = sizes_option("--counters-at", counters_at);
    for (const std::size_t n : options.suite.counter_sizes) {
      if (!options.suite.sizes.empty() &&
          std::find(options.suite.sizes.begin(), options.suite.sizes.end(), n) ==
              options.suite.sizes.end()) {
        throw UsageError(fmt::format("--counters-at {}: not one of --sizes", n));
      }
    }
  }
  const bool writes = part == nullptr || part->writes();
  std::optional<nbody::Ceilings> ceilings;
  double ceilings_seconds = 0;
  std::function<void(const nbody::ResultsDocument&)> checkpoint;
  std::vector<std::filesystem::path> reports_written;
  if (is_run) {
    // Every check that can fail on bad input runs before the output folder is touched.
    const auto selected = registry.select(options.suite.implementation_pattern);
    for (const std::size_t n : options.suite.sizes) nbody::check_memory(selected, n);
  }
  // Decomposed, every rank's input was good before rank 0 touches the output folder.
  std::optional<nbody::ProcessDecomposition> decomposition;
  nbody::RankGpuExchange exchange;  // NCCL's communicator, where there is one, for the suite
  if (part != nullptr) {
    exchange = decompose_suite(*part, registry, options.exchange, options.suite, decomposition);
  }
  if (is_run) {
    const auto prepare_output = [&out_dir] { prepare_output_directory(out_dir); };
    if (part == nullptr) {
      prepare_output();
    } else {
      part->on_rank_zero(prepare_output);
    }
    if (part == nullptr) {
      const auto started = std::chrono::steady_clock::now();
      if (options.suite.counters) {
        nbody::CeilingOptions ceiling_options;
        ceiling_options.gpu_devices = options.suite.execution.gpu_devices;  // their all-gather
        ceilings = nbody::measure_ceilings(ceiling_options);
      } else {
        // Without counters, several GPUs still measure the all-gather between them (the model's).
        ceilings = nbody::measure_exchange_ceilings(options.suite.execution.gpu_devices);
      }
      ceilings_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    if (writes) {
      checkpoint = [&out_dir, &reports_written](const nbody::ResultsDocument& doc) {
        nbody::save_results(doc, out_dir / "results.json");
        reports_written = nbody::reports::write_report_files(doc, out_dir);
      };
    }
  }
  std::optional<nbody::Registry> decomposed;
  if (part != nullptr) decomposed = part->decompose(registry, exchange.why_not_nccl);
  const auto counter_sources = part == nullptr
                                   ? nbody::make_counter_sources()
                                   : std::vector<std::unique_ptr<nbody::CounterSource>>{};
  const auto progress = writes ? nbody::make_stderr_progress() : nbody::make_silent_progress();
  const nbody::SuiteContext context{
      .registry = decomposed ? *decomposed : registry,
      .counter_sources = counter_sources,
      .ceilings = ceilings,
      .ceilings_seconds = ceilings_seconds,
      .gpus = nbody::describe_gpus(),
      .gpu_observation = nbody::observe_gpu(options.suite.execution.gpu_device),
      .progress = *progress,
      .checkpoint = checkpoint,
      .decomposition = decomposition,
      .announce = [writes](const std::string& line) {
        if (writes) fmt::print(stderr, "{}\n", line);
      }};
  handle_interrupts(part != nullptr);
  const nbody::ResultsDocument doc = nbody::run_suite(
      context, options.suite, is_run ? nbody::SuiteMode::run : nbody::SuiteMode::validate);
  if (!writes) return exit_code(doc);
  if (is_run) {
    fmt::print("{}", nbody::reports::render_summary(doc));

    fmt::print("\nwrote {}", (out_dir / "results.json").string());
    for (const std::filesystem::path& file : reports_written) fmt::print(", {}", file.string());
    fmt::print("\n");
  } else {
    print_validation(doc);
  }
  if (doc.interrupted)
    fmt::print(stderr, "nbody-fair: interrupted; kept {} measurements\n", doc.results.size());
  return exit_code(doc);
}

// run_main in one process: bad input is one line and exit 2, any other error exit 1.
int run_in_one_process(int argc, char** argv) {
  try {
    return run_main(argc, argv, nullptr);
  } catch (const UsageError& e) {
    fmt::print(stderr, "nbody-fair: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-fair: error: {}\n", e.what());
    return kExitFailed;
  }
}

#if NBODY_HAVE_MPI
namespace distributed = nbody::distributed;

// An error every rank raised together: rank 0 says it, in one line; every rank exits alike.
int agreed_exit(const std::exception& e, int rank) {
  const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
  if (rank == 0) fmt::print(stderr, "nbody-fair: {}{}\n", usage ? "" : "error: ", e.what());
  return usage ? kExitUsage : kExitFailed;
}

// run_main on every rank of mpirun, decomposed. A failure before the ranks' first agreement (bad
// input on any rank, even on one alone) is brought to that agreement, so that every rank exits 2
// (or 1) with its message printed once. A failure after it that no agreement caught (one rank's
// alone) ends the job, since the other ranks cannot be met again: the rank says why and aborts.
int run_decomposed(int argc, char** argv) {
  std::optional<distributed::MpiSession> session;
  try {
    session.emplace(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbody-fair: error: {}\n", e.what());
    return kExitFailed;
  }
  distributed::Communicator& world = session->world();
  if (world.size() == 1) return run_in_one_process(argc, argv);
  distributed::Decomposition decomposition(world, signal_received(), nbody::interrupt_requested());
  const std::uint64_t arguments = distributed::arguments_hash(argc, argv);
  const RankPart part{
      .rank = world.rank(),
      .ranks = world.size(),
      .rank_on_host = decomposition.rank_on_host(),
      .start =
          [&] {
            decomposition.agree_on_start(nullptr, arguments);
            char host[256] = {};
            if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
            return world.all_strings(host);
          },
      .gpu_exchange =
          [&](nbody::GpuExchangeRequest request, int gpu_device, bool gpu_formulations) {
            return nbody::settle_gpu_exchange(decomposition, request, gpu_device, gpu_formulations);
          },
      .decompose =
          [&](const nbody::Registry& local, const std::string& why_not_nccl) {
            return distributed::decomposed_registry(local, decomposition, why_not_nccl);
          },
      .max_over_ranks = [&](double value) { return decomposition.max_over_ranks(value); },
      .sum_on_host = [&](double value) { return decomposition.sum_on_host(value); },
      .on_rank_zero =
          [&](const std::function<void()>& work) {
            std::exception_ptr failure;
            if (world.rank() == 0) {
              try {
                work();
              } catch (...) {
                failure = std::current_exception();
              }
            }
            decomposition.agree(distributed::AgreementPoint::decision, failure);
          }};
  try {
    const int code = run_main(argc, argv, &part);
    // A rank that finished without meeting the others (--help) meets them now.
    if (!decomposition.started()) decomposition.agree_on_start(nullptr, arguments);
    return code;
  } catch (const distributed::AgreedUsageError& e) {
    return agreed_exit(e, world.rank());
  } catch (const distributed::AgreedError& e) {
    return agreed_exit(e, world.rank());
  } catch (const std::exception& e) {
    if (!decomposition.started()) {
      try {
        decomposition.agree_on_start(std::current_exception(), arguments);
      } catch (const distributed::AgreedUsageError& agreed) {
        return agreed_exit(agreed, world.rank());
      } catch (const distributed::AgreedError& agreed) {
        return agreed_exit(agreed, world.rank());
      }
    }
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    fmt::print(stderr, "nbody-fair: rank {}: {}{}\n", world.rank(),
               usage ? "" : "error: ", e.what());
    std::fflush(stderr);
    world.abort(usage ? kExitUsage : kExitFailed);
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // `bench` passes Google Benchmark's own flags through: Initialize takes them out of argv.
  std::optional<nbody::BenchArguments> bench;
  if (argc > 1 && std::string_view(argv[1]) == "bench") {
    bench.emplace(argc, argv);
    argc = bench->argc();
    argv = bench->argv();
  }
  // MPI only under a launcher, and only for more than one rank: otherwise a plain process.
  const std::optional<nbody::LauncherWorld> launched = nbody::mpi_launcher_world();
  if (!launched || launched->size == 1) return run_in_one_process(argc, argv);
#if NBODY_HAVE_MPI
  return run_decomposed(argc, argv);
#else
  if (launched->rank == 0) {
    fmt::print(stderr, "nbody-fair: started by an MPI launcher on {} ranks, but {}\n",
               launched->size > 0 ? std::to_string(launched->size) : "several",
               nbody::mpi_unavailable_reason());
  }
  return kExitUsage;
#endif
}
