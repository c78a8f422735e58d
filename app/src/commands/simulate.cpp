// simulate: each implementation as the force engine of a leapfrog integration.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "command_line/reported_suite.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/simulate.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/errors.hpp"
#include "nbody/io/snapshot.hpp"

namespace nbody::commands {
namespace {

class SimulateCommand final : public Command {
 public:
  explicit SimulateCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "simulate",
            "Integrate with each implementation as the force engine (kick-drift-kick leapfrog): "
            "conservation, divergence from float64, time per step by phase")) {
    add_selection_options(cli(), selection_);
    add_integration_options();
    add_limit_options();
  }

  bool decomposable() const override { return true; }

  int execute(const Invocation& invocation) override {
    Processes& processes = invocation.processes;
    finish_options(selection_, invocation.registry, invocation.argc, invocation.argv);
    finish_simulation_options(processes);
    const auto selected = invocation.registry.select(options_.suite.implementation_pattern);
    for (const std::size_t n : options_.suite.sizes) check_memory(selected, n);
    const SuiteShare share = processes.share(invocation.registry, selection_.exchange, suite());
    ReportedSuite reported(processes, out_, replace_);
    options_.snapshot_dir = out_ / "snapshots";
    // Several GPUs of this process: the all-gather between them, the scaling model's.
    const SuiteCeilings ceilings = processes.ceilings(suite().execution, false);
    const EnergyMeters energy =
        energy_ ? processes.energy_meters(suite().execution, selects_usable_gpu(selected))
                : energy_not_read("not read: --no-energy");
    const auto progress = processes.progress();
    const SuiteContext context{.registry = share.registry_or(invocation.registry),
                               .counter_sources = {},
                               .ceilings = ceilings.ceilings,
                               .ceilings_seconds = ceilings.seconds,
                               .gpus = describe_gpus(),
                               .gpu_observation = {},
                               .progress = *progress,
                               .checkpoint = reported.checkpoint(),
                               .decomposition = share.decomposition,
                               .energy = &energy};
    processes.handle_interrupts();
    return reported.finish(run_simulations(context, options_));
  }

 private:
  SuiteOptions& suite() { return options_.suite; }

  // A simulation's steps and the intervals between its checks and snapshots.
  static constexpr std::uint64_t kMostSteps = std::uint64_t{1} << 40;

  void add_integration_options() {
    cli()
        .add_option("--dt", options_.dt, "Time step (Henon units)")
        ->capture_default_str()
        ->check(at_least(0, false));
    CLI::Option* steps = cli()
                             .add_option("--steps", options_.steps, "Steps to take")
                             ->capture_default_str()
                             ->check(whole_number(1, kMostSteps));
    cli()
        .add_option("--t-end", t_end_, "Integrate to this time instead of --steps")
        ->check(at_least(0, false))
        ->excludes(steps);
    cli()
        .add_option("--diag-every", options_.diag_every,
                    "Check conservation every K steps (0: first and last step only)")
        ->capture_default_str()
        ->check(whole_number(0, kMostSteps));
    cli()
        .add_option("--snapshot-every", options_.snapshot_every,
                    "Write an HDF5 snapshot every K steps into OUT/snapshots (0: none)")
        ->capture_default_str()
        ->check(whole_number(0, kMostSteps));
    cli().add_option("--ic-file", options_.ic_file,
                     "Initial condition from an HDF5 snapshot (docs/snapshot-format.md)");
    cli()
        .add_option("--phase-steps", options_.phase_steps,
                    "The first steps are timed phase by phase (force, integration)")
        ->capture_default_str()
        ->check(whole_number(0, kMostSteps));
    cli()
        .add_option("--divergence-up-to", options_.divergence_up_to,
                    "Follow the float64 trajectory for N up to this, to measure divergence")
        ->capture_default_str()
        ->check(whole_number());
  }

  void add_limit_options() {
    cli()
        .add_option("--budget", budget_,
                    "Seconds all the simulations may take: one estimated from its smaller N's "
                    "step not to fit what is left is left out, saying so (default with the "
                    "default sizes 100; 0: none)")
        ->check(at_least(0, true));
    cli()
        .add_option("--max-seconds", options_.max_seconds,
                    "Skip an (implementation, N) whose steps are predicted to take longer: from "
                    "its step at the last smaller N before anything is prepared, else from its "
                    "first step")
        ->capture_default_str()
        ->check(at_least(0, false));
    cli()
        .add_option("--out", out_,
                    "Output folder: results.json, report.md, report.html, results.csv, and "
                    "snapshots/ with --snapshot-every")
        ->capture_default_str();
    add_replace_option(cli(), replace_);
    cli().add_flag(
        "--no-energy", [this](std::int64_t) { energy_ = false; },
        "Do not read the CPU's and GPU's energy counters (RAPL, NVML) around each simulation");
  }

  // The steps from --t-end, the initial state from --ic-file; throws UsageError for bad input.
  void finish_simulation_options(const Processes& processes) {
    options_.suite = selection_.suite;
    options_.budget_s = budget_;
    if (!std::isfinite(options_.dt)) throw UsageError("--dt must be a finite time step");
    if (t_end_) {
      if (!std::isfinite(*t_end_)) throw UsageError("--t-end must be finite");
      const double steps = std::ceil(*t_end_ / options_.dt - 1e-9);
      if (steps < 1 || steps > 1e12) {
        throw UsageError(
            fmt::format("--t-end {} with --dt {} gives {} steps", *t_end_, options_.dt, steps));
      }
      options_.steps = static_cast<std::int64_t>(steps);
    }
    if (!options_.ic_file.empty()) {
      // The file is the initial condition: what would generate one has nothing to do. Said
      // before whether this build reads snapshots: the command line contradicts itself anywhere.
      for (const char* generated : {"--sizes", "--ic", "--seed"}) {
        if (cli().count(generated) > 0) {
          throw UsageError(
              fmt::format("--ic-file is the initial condition, N included: give it or {}, not both",
                          generated));
        }
      }
    }
    if (options_.snapshot_every > 0 || !options_.ic_file.empty()) {
      if (const auto reason = snapshot_io_unavailable_reason()) {
        throw UsageError(fmt::format(
            "{}: {}", options_.ic_file.empty() ? "--snapshot-every" : "--ic-file", *reason));
      }
    }
    if (!options_.ic_file.empty()) options_.initial_state = read_snapshot(options_.ic_file).state;
    if (processes.decomposed() && options_.snapshot_every > 0) {
      throw UsageError("--snapshot-every: not under mpirun yet (run it in one process)");
    }
  }

  // A simulation starts from a Plummer sphere in virial equilibrium: the cold uniform ball
  // collapses, and a run that went wrong by design is no default.
  SelectionOptions selection_{.ic = "plummer"};
  SimulateOptions options_;
  std::optional<double> t_end_;
  std::optional<double> budget_;
  std::filesystem::path out_ = "simulation";
  bool replace_ = false;
  bool energy_ = true;
};

}  // namespace

std::unique_ptr<Command> add_simulate_command(CLI::App& program) {
  return std::make_unique<SimulateCommand>(program);
}

}  // namespace nbody::commands
