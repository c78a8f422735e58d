// bench: formulations timed under Google Benchmark, its --benchmark_* flags passed through.
#include <memory>
#include <string>
#include <vector>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "nbody/app/bench_command.hpp"

namespace nbody::commands {
namespace {

class BenchCommand final : public Command {
 public:
  explicit BenchCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "bench",
            "Time formulations under Google Benchmark for kernel work: its --benchmark_* flags "
            "apply (listed below), and each benchmark warms up for 0.05 s unless "
            "--benchmark_min_warmup_time says otherwise")) {
    add_selection_options(cli(), selection_);
    cli().add_flag("--variants", options_.variants,
                   "Also time the tuning variants whose names match --impl");
    cli()
        .add_option("--scope", scopes_, "kernel and/or end_to_end (GPU: copies included)")
        ->delimiter(',')
        ->check(CLI::IsMember({"kernel", "end_to_end"}))
        ->capture_default_str();
    cli()
        .add_option("--iterations", options_.iterations, "Timed evaluations (0: automatic)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cli().add_flag("--accuracy", options_.accuracy,
                   "Report rel_l2, max_rel and net_force against the float64 reference");
    cli()
        .add_option("--profile-metrics", options_.profile_metrics,
                    "Profile one evaluation with these CUPTI metrics instead of timing")
        ->delimiter(',');
  }

  void print_more_help() const override { print_benchmark_flags(); }

  int execute(const Invocation& invocation) override {
    finish_options(selection_, invocation.registry, invocation.argc, invocation.argv,
                   options_.variants);
    const SuiteOptions& suite = selection_.suite;
    options_.implementation_pattern = selection_.impl;
    if (!selection_.sizes.empty()) options_.sizes = suite.sizes;
    options_.initial_condition = suite.initial_condition;
    options_.seed = suite.seed;
    options_.softening = suite.softening;
    options_.execution = suite.execution;
    options_.accuracy_bodies = suite.validation_bodies;
    options_.scopes.clear();
    for (const std::string& scope : scopes_) {
      options_.scopes.push_back(scope == "kernel" ? PreparedRun::Scope::kernel
                                                  : PreparedRun::Scope::end_to_end);
    }
    invocation.processes.handle_interrupts();
    return run_bench(invocation.registry, options_);
  }

 private:
  SelectionOptions selection_;
  BenchOptions options_;
  std::vector<std::string> scopes_ = {"kernel"};
};

}  // namespace

std::unique_ptr<Command> add_bench_command(CLI::App& program) {
  return std::make_unique<BenchCommand>(program);
}

}  // namespace nbody::commands
