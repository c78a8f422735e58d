// report: the reports rendered again from a results.json, or from two runs' sides combined.
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "nbody/errors.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "nbody/reports/report_files.hpp"
#include "nbody/results.hpp"

namespace nbody::commands {
namespace {

class ReportCommand final : public Command {
 public:
  explicit ReportCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "report",
            "Re-render report.md, report.html and results.csv from a results.json, or from two "
            "runs of one problem on different hosts: the CPU side from one, the GPU side from "
            "the other")) {
    CLI::Option* in = cli().add_option("--in", in_, "results.json, or the run folder holding it");
    CLI::Option* cpu_from = cli().add_option(
        "--cpu-from", cpu_from_,
        "A run whose CPU formulations make the CPU side (results.json or its folder; with "
        "--gpu-from and --out)");
    CLI::Option* gpu_from = cli().add_option(
        "--gpu-from", gpu_from_,
        "A run of the same problem whose GPU formulations make the GPU side (with --cpu-from)");
    in->excludes(cpu_from)->excludes(gpu_from);
    cpu_from->needs(gpu_from);
    gpu_from->needs(cpu_from);
    cli().add_option("--out", out_,
                     "Output folder for report.md, report.html and results.csv (default: the "
                     "folder of --in; required with --cpu-from)");
    add_replace_option(cli(), replace_);
  }

  int execute(const Invocation&) override {
    if (in_.empty() && cpu_from_.empty()) {
      throw UsageError("report: --in, or --cpu-from with --gpu-from, is required");
    }
    if (!cpu_from_.empty() && out_.empty()) {
      throw UsageError("--out is required with --cpu-from and --gpu-from");
    }
    const std::filesystem::path results_file =
        in_.empty() ? std::filesystem::path() : results_file_of(in_);
    const ResultsDocument doc = in_.empty() ? combined() : load_results(results_file);
    std::filesystem::path folder = out_.empty() ? results_file.parent_path() : out_;
    if (folder.empty()) folder = ".";
    // The run's own folder takes its reports again; any other folder of documents is another's,
    // a side's folder too: the combined reports are neither side's.
    std::vector<std::filesystem::path> own_run;
    if (!in_.empty()) own_run.push_back(results_file);
    prepare_output_directory(folder, replace_, own_run);
    for (const std::filesystem::path& file : reports::write_report_files(doc, folder)) {
      fmt::print("wrote {}\n", file.string());
    }
    return 0;
  }

 private:
  ResultsDocument combined() const {
    return reports::combine_sides(
        {load_results(results_file_of(cpu_from_, "--cpu-from")), cpu_from_.string()},
        {load_results(results_file_of(gpu_from_, "--gpu-from")), gpu_from_.string()});
  }

  std::filesystem::path in_, out_, cpu_from_, gpu_from_;
  bool replace_ = false;
};

}  // namespace

std::unique_ptr<Command> add_report_command(CLI::App& program) {
  return std::make_unique<ReportCommand>(program);
}

}  // namespace nbody::commands
