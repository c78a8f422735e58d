// peaks: this machine's ceilings, measured or read from the cache.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "nbody/app/ceilings.hpp"
#include "nbody/reports/ceilings_table.hpp"

namespace nbody::commands {
namespace {

class PeaksCommand final : public Command {
 public:
  explicit PeaksCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "peaks",
            "Measure (or show the cached) ceilings of this machine; the cache is "
            "$NBODY_FAIR_CACHE_DIR, else $XDG_CACHE_HOME/nbody-fair, else ~/.cache/nbody-fair")) {
    cli().add_flag("--remeasure", options_.remeasure, "Ignore the cached ceilings");
    cli().add_option("--gpus", gpus_,
                     "Also NCCL's all-gather between these GPUs, e.g. 0,1 or all: its latency "
                     "and bus bandwidth (measured each time, never cached)");
  }

  int execute(const Invocation& invocation) override {
    if (!gpus_.empty()) {
      options_.gpu_devices = parse_gpu_list(gpus_);
      // As run's --gpus: a GPU listed twice, or one the machine lacks, is bad input.
      ExecutionOptions listed;
      listed.gpu_devices = options_.gpu_devices;
      invocation.registry.check_options(listed);
    }
    const std::optional<Ceilings> ceilings = measure_ceilings(options_);
    fmt::print("{}", reports::render_ceilings_table(ceilings));
    return 0;
  }

 private:
  CeilingOptions options_;
  std::vector<std::string> gpus_;
};

}  // namespace

std::unique_ptr<Command> add_peaks_command(CLI::App& program) {
  return std::make_unique<PeaksCommand>(program);
}

}  // namespace nbody::commands
