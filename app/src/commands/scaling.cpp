// scaling: runs at several scales (ranks, GPUs) side by side.
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "nbody/errors.hpp"
#include "nbody/reports/scaling.hpp"
#include "nbody/reports/scaling_report.hpp"
#include "nbody/results.hpp"

namespace nbody::commands {
namespace {

class ScalingCommand final : public Command {
 public:
  explicit ScalingCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "scaling",
            "Set runs at several scales side by side: speedup, efficiency, communication")) {
    cli()
        .add_option("RESULTS", in_,
                    "results.json files, or run folders holding one: one per rank count or GPUs")
        ->required();
    cli()
        .add_option("--out", out_, "Write scaling.md, scaling.html and scaling.csv here")
        ->required();
    add_replace_option(cli(), replace_);
  }

  int execute(const Invocation&) override {
    // Every document is read and the study made before the output folder is touched: bad input
    // leaves nothing.
    const reports::ScalingStudy study = reports::analyze_scaling(read_inputs());
    prepare_output_directory(out_, replace_, in_);
    fmt::print("Fairness audit: {}\n", study.verdict);
    for (const auto& file : reports::write_scaling_files(study, out_)) {
      fmt::print("wrote {}\n", file.string());
    }
    return 0;
  }

 private:
  std::vector<reports::ScalingInput> read_inputs() const {
    std::vector<reports::ScalingInput> inputs;
    std::map<std::filesystem::path, std::filesystem::path> given;  // each document, once
    for (const std::filesystem::path& in : in_) {
      const std::filesystem::path file = results_file_of(in, "RESULTS");
      // The same measurement twice would read as a repetition of it (and be flagged as one).
      if (const auto [it, fresh] = given.try_emplace(std::filesystem::weakly_canonical(file), in);
          !fresh) {
        throw UsageError(fmt::format("RESULTS {} and {}: the same document given twice",
                                     it->second.string(), in.string()));
      }
      inputs.push_back({file.string(), load_results(file)});
    }
    return inputs;
  }

  std::vector<std::filesystem::path> in_;
  std::filesystem::path out_;
  bool replace_ = false;
};

}  // namespace

std::unique_ptr<Command> add_scaling_command(CLI::App& program) {
  return std::make_unique<ScalingCommand>(program);
}

}  // namespace nbody::commands
