// run: validate and time each implementation; results.json, the reports and the CSV.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "command_line/reported_suite.hpp"
#include "nbody/app/extra_work.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/errors.hpp"

namespace nbody::commands {
namespace {

class RunCommand final : public Command {
 public:
  explicit RunCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "run",
            "Validate and time each implementation; write results.json, report.md, report.html "
            "and results.csv, and cache the float64 reference and the ceilings (see peaks)")) {
    add_selection_options(cli(), selection_);
    add_timing_options();
    add_output_options();
  }

  bool decomposable() const override { return true; }

  int execute(const Invocation& invocation) override {
    Processes& processes = invocation.processes;
    std::optional<ExtraWork> extra;
    if (!extra_work_.empty()) extra = parse_extra_work(extra_work_);
    if (extra) add_extra_work(invocation.registry, *extra);
    finish_options(selection_, invocation.registry, invocation.argc, invocation.argv);
    SuiteOptions& suite = selection_.suite;
    finish_counter_sizes(suite);
    // Every check that can fail on bad input runs before the output folder is touched.
    const auto selected = invocation.registry.select(suite.implementation_pattern);
    if (extra) require_selected(selected, *extra);
    for (const std::size_t n : suite.sizes) check_memory(selected, n);
    const SuiteShare share = processes.share(invocation.registry, selection_.exchange, suite);
    ReportedSuite reported(processes, out_, replace_);
    const SuiteCeilings ceilings = processes.ceilings(suite.execution, suite.counters);
    const auto counter_sources = processes.counter_sources();
    const EnergyMeters energy =
        energy_ ? processes.energy_meters(suite.execution, selects_usable_gpu(selected))
                : energy_not_read("not read: --no-energy");
    for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
      if (const double span = energy_span_s(energy, device); span > 0) {
        suite.energy_span_s[device] = span;
      }
    }
    const auto progress = processes.progress();
    const SuiteContext context{.registry = share.registry_or(invocation.registry),
                               .counter_sources = counter_sources,
                               .ceilings = ceilings.ceilings,
                               .ceilings_seconds = ceilings.seconds,
                               .gpus = describe_gpus(),
                               .gpu_observation = observe_gpu(suite.execution.gpu_device),
                               .progress = *progress,
                               .checkpoint = reported.checkpoint(),
                               .decomposition = share.decomposition,
                               .announce = processes.announcer(),
                               .energy = &energy};
    processes.handle_interrupts();
    return reported.finish(run_suite(context, suite, SuiteMode::run));
  }

 private:
  void add_timing_options() {
    SuiteOptions& suite = selection_.suite;
    cli()
        .add_option("--reps", suite.timing.repetitions, "Timed repetitions (median reported)")
        ->capture_default_str()
        ->check(whole_number(1, 1000));
    cli()
        .add_option("--min-time", suite.timing.min_time_s, "Minimum seconds per repetition")
        ->capture_default_str()
        ->check(at_least(0, false));
    cli()
        .add_option("--budget", suite.budget_s,
                    "Seconds the measurements may take: planned from probes before the first, "
                    "what does not fit left out and listed (default with the default sizes: 150 "
                    "where a GPU is usable, 75 otherwise; with --sizes none; 0: none)")
        ->check(at_least(0, true));
    cli()
        .add_option("--max-eval-seconds", suite.max_eval_seconds,
                    "Skip an (implementation, N) whose one evaluation is predicted to take longer")
        ->capture_default_str()
        ->check(at_least(0, false));
    cli()
        .add_option("--max-attempts", suite.timing.max_attempts,
                    "Time a measurement again while other processes take over 10% of the CPUs, "
                    "up to this many attempts in all (the least disturbed is kept, flagged)")
        ->capture_default_str()
        ->check(whole_number(1, 20));
  }

  void add_output_options() {
    cli()
        .add_option("--out", out_,
                    "Output folder: results.json, report.md, report.html, results.csv")
        ->capture_default_str();
    add_replace_option(cli(), replace_);
    CLI::Option* counters_at =
        cli().add_option("--counters-at", counters_at_,
                         "Sizes whose measurements read hardware counters, or 'all' (default: "
                         "the largest size up to 64K)");
    cli()
        .add_flag(
            "--no-counters", [this](std::int64_t) { selection_.suite.counters = false; },
            "Do not read hardware counters")
        ->excludes(counters_at);
    cli().add_flag(
        "--no-energy", [this](std::int64_t) { energy_ = false; },
        "Do not read the CPU's and GPU's energy counters (RAPL, NVML): no idle power is measured "
        "at the start, and GPU timings keep --min-time where five counter updates would take "
        "longer");
    cli().add_option("--extra-work", extra_work_,
                     "NAME=FRACTION: NAME also evaluates the first FRACTION of its targets again "
                     "in every evaluation (e.g. cpu.simd=10%), a real slowdown to test a compare "
                     "gate; recorded in its details");
  }

  // An --extra-work on a formulation --impl leaves out would slow nothing, in silence.
  void require_selected(const std::vector<const Implementation*>& selected,
                        const ExtraWork& extra) const {
    if (std::none_of(selected.begin(), selected.end(), [&](const Implementation* impl) {
          return impl->info.name == extra.implementation ||
                 impl->info.name.starts_with(extra.implementation + "[theta=");
        })) {
      throw UsageError(fmt::format("--extra-work {}: --impl '{}' does not select {}", extra_work_,
                                   selection_.impl, extra.implementation));
    }
  }

  // --counters-at: 'all', or sizes among --sizes (where given).
  void finish_counter_sizes(SuiteOptions& suite) const {
    if (counters_at_.empty()) return;
    if (list_items("--counters-at", counters_at_) == std::vector<std::string>{"all"}) {
      suite.counters_at_every_size = true;
      return;
    }
    suite.counter_sizes = sizes_option("--counters-at", counters_at_);
    for (const std::size_t n : suite.counter_sizes) {
      if (!suite.sizes.empty() &&
          std::find(suite.sizes.begin(), suite.sizes.end(), n) == suite.sizes.end()) {
        throw UsageError(fmt::format("--counters-at {}: not one of --sizes", n));
      }
    }
  }

  SelectionOptions selection_;
  std::filesystem::path out_ = "results";
  bool replace_ = false;
  std::vector<std::string> counters_at_;
  std::string extra_work_;
  bool energy_ = true;
};

}  // namespace

std::unique_ptr<Command> add_run_command(CLI::App& program) {
  return std::make_unique<RunCommand>(program);
}

}  // namespace nbody::commands
