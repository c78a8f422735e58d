// validate: each implementation against the float64 reference, without timing.
#include <memory>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "command_line/reported_suite.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/wiring.hpp"

namespace nbody::commands {
namespace {

void print_validation(const ResultsDocument& doc) {
  fmt::print("{:<22} {:>9} {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {}\n", "implementation",
             "N", "status", "rel_L2", "L2 bound", "max_rel", "max bound", "p99_rel", "median_rel",
             "note");
  for (const ResultRecord& r : doc.results) {
    if (!r.accuracy) {
      fmt::print("{:<22} {:>9} {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {}\n",
                 r.implementation, r.n, to_string(r.status), "-", "-", "-", "-", "-", "-",
                 r.reason);
      continue;
    }
    const AccuracyRecord& a = *r.accuracy;
    fmt::print(
        "{:<22} {:>9} {:<8} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e}  {}\n",
        r.implementation, r.n, to_string(r.status), a.metrics.relative_l2, a.relative_l2_bound,
        a.metrics.max_relative, a.max_relative_bound, a.metrics.p99_relative,
        a.metrics.median_relative,
        a.sampled ? fmt::format("{} bodies sampled", a.metrics.bodies_compared) : "");
  }
}

class ValidateCommand final : public Command {
 public:
  explicit ValidateCommand(CLI::App& program)
      : Command(*program.add_subcommand("validate",
                                        "Compare each implementation with the float64 reference")) {
    add_selection_options(cli(), selection_);
  }

  bool decomposable() const override { return true; }

  int execute(const Invocation& invocation) override {
    Processes& processes = invocation.processes;
    finish_options(selection_, invocation.registry, invocation.argc, invocation.argv);
    const SuiteShare share =
        processes.share(invocation.registry, selection_.exchange, selection_.suite);
    const auto counter_sources = processes.counter_sources();
    const auto progress = processes.progress();
    const SuiteContext context{
        .registry = share.registry_or(invocation.registry),
        .counter_sources = counter_sources,
        .ceilings = std::nullopt,
        .ceilings_seconds = 0,
        .gpus = describe_gpus(),
        .gpu_observation = observe_gpu(selection_.suite.execution.gpu_device),
        .progress = *progress,
        .checkpoint = nullptr,
        .decomposition = share.decomposition,
        .announce = processes.announcer()};
    processes.handle_interrupts();
    const ResultsDocument doc = run_suite(context, selection_.suite, SuiteMode::validate);
    if (processes.writes()) {
      print_validation(doc);
      if (doc.interrupted) {
        fmt::print(stderr, "nbody-fair: interrupted; kept {} measurements\n", doc.results.size());
      }
    }
    return exit_code(doc);
  }

 private:
  SelectionOptions selection_;
};

}  // namespace

std::unique_ptr<Command> add_validate_command(CLI::App& program) {
  return std::make_unique<ValidateCommand>(program);
}

}  // namespace nbody::commands
