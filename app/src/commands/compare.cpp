// compare: two runs (or two sets of runs) set against each other, a gate for CI.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/exit_codes.hpp"
#include "command_line/options.hpp"
#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/reports/comparison.hpp"
#include "nbody/reports/comparison_report.hpp"
#include "nbody/results.hpp"

namespace nbody::commands {
namespace {

// One side: a results.json, a run folder, or a folder of run folders (several runs of one build,
// in name order).
std::vector<ResultsDocument> load_side(const std::filesystem::path& in, const std::string& side) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A folder that cannot be listed, or a run folder that cannot be looked into, is refused as
  // such: it may hold the runs, and is no folder without them.
  const auto refuse_unreadable = [&side](const fs::path& folder) {
    if (const auto why = why_not_an_input_folder(folder)) {
      throw UsageError(
          fmt::format("{} {}: cannot read the folder: {}", side, folder.string(), *why));
    }
  };
  if (!fs::is_directory(in, ec)) return {load_results(results_file_of(in, side))};
  refuse_unreadable(in);
  if (fs::exists(fs::symlink_status(in / "results.json", ec))) {
    return {load_results(results_file_of(in, side))};
  }
  std::vector<fs::path> runs;
  for (const auto& entry : fs::directory_iterator(in, ec)) {
    if (!entry.is_directory(ec)) continue;
    refuse_unreadable(entry.path());
    // results_file_of refuses a results.json that is no regular file (a FIFO would block).
    if (fs::exists(fs::symlink_status(entry.path() / "results.json", ec))) {
      runs.push_back(results_file_of(entry.path(), side));
    }
  }
  std::sort(runs.begin(), runs.end());
  if (runs.empty()) {
    throw UsageError(fmt::format(
        "{} {}: the folder has no results.json, nor run folders that hold one", side, in.string()));
  }
  std::vector<ResultsDocument> docs;
  for (const auto& file : runs) docs.push_back(load_results(file));
  return docs;
}

class CompareCommand final : public Command {
 public:
  explicit CompareCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "compare", "Compare two runs: time ratios, a significance test, accuracy changes")) {
    cli()
        .add_option("BASE", base_,
                    "results.json, the run folder holding it, or a folder of run folders "
                    "(several runs of one build, compared by their fastest)")
        ->required();
    cli()
        .add_option("NEW", new_,
                    "results.json, the run folder holding it, or a folder of run folders")
        ->required();
    cli()
        .add_option("--threshold", settings_.threshold,
                    "A time ratio above 1 + this is slower, below 1 / (1 + this) faster")
        ->capture_default_str()
        ->check(at_least(0, false));
    cli()
        .add_option("--alpha", settings_.alpha, "Significance level of the U test, below 1")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
              double value = 0;
              if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
              return value > 0 && value < 1 ? "" : "must be between 0 and 1";
            },
            "in (0, 1)"));
    cli().add_flag(
        "--no-shift-correction", [this](std::int64_t) { settings_.correct_machine_shift = false; },
        "Judge each ratio as measured, without removing the common shift of its device's "
        "measurements (how far the machine itself moved between the runs)");
    cli().add_option("--impl", settings_.implementation_pattern,
                     "Compare only the implementations this regular expression finds (e.g. "
                     "'^gpu\\.' on a GPU host whose shared CPU is too noisy to gate)");
    for (auto [option, drift, device] : {std::tuple{"--cpu-drift", &settings_.cpu_drift, "CPU"},
                                         std::tuple{"--gpu-drift", &settings_.gpu_drift, "GPU"}}) {
      cli()
          .add_option(option, *drift,
                      fmt::format("The most the whole {} moves between unchanged runs of this "
                                  "machine, as a fraction: a larger shift of every measurement "
                                  "is a change of the machine or build, and fails where slower",
                                  device))
          ->capture_default_str()
          ->check(at_least(0, true));
    }
    cli().add_option("--out", out_, "Also write compare.md and compare.html here");
    add_replace_option(cli(), replace_);
  }

  int execute(const Invocation&) override {
    // Both sides are read before the output folder is touched: bad input leaves nothing.
    const std::vector<ResultsDocument> base_runs = load_side(base_, "BASE");
    const std::vector<ResultsDocument> new_runs = load_side(new_, "NEW");
    const reports::Comparison comparison = reports::compare_results(base_runs, new_runs, settings_);
    const auto source = [](const std::filesystem::path& in, std::size_t runs) {
      return runs == 1 ? results_file_of(in).string()
                       : fmt::format("{} ({} runs)", in.string(), runs);
    };
    const reports::ComparedSources sources{source(base_, base_runs.size()),
                                           source(new_, new_runs.size())};
    // An --out that cannot be made is bad input, said before anything is printed.
    if (!out_.empty()) {
      prepare_output_directory(out_, replace_, std::vector<std::filesystem::path>{base_, new_});
    }
    fmt::print("{}", reports::render_comparison_markdown(comparison, sources));
    if (!out_.empty()) {
      for (const auto& file : reports::write_comparison_files(comparison, sources, out_)) {
        fmt::print("wrote {}\n", file.string());
      }
    }
    return comparison.regressed() ? kExitFailed : 0;
  }

 private:
  std::filesystem::path base_, new_, out_;
  bool replace_ = false;
  reports::ComparisonSettings settings_;
};

}  // namespace

std::unique_ptr<Command> add_compare_command(CLI::App& program) {
  return std::make_unique<CompareCommand>(program);
}

}  // namespace nbody::commands
