#pragma once
// What several commands parse alike: the selection of formulations and problem (validate, run,
// simulate, bench), checked numbers, GPU lists, and the paths of results and output folders.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/registry.hpp"

namespace nbody::commands {

// A finite number at least (or above) `minimum`. CLI11's PositiveNumber and NonNegativeNumber
// print the whole double range in their messages, and let infinity through.
CLI::Validator at_least(double minimum, bool inclusive);

// CLI11 reads "-1" into an unsigned option as 2^64 - 1 and a number past 2^64 as the largest:
// an unsigned option takes whole numbers that fit, and nothing else.
CLI::Validator whole_number();

// A list of sizes given to `option`, or bad input naming it.
std::vector<std::size_t> sizes_option(const char* option, const std::vector<std::string>& items);

// --gpus: "all" (every GPU of this machine) or ordinals; throws UsageError for anything else.
std::vector<int> parse_gpu_list(const std::vector<std::string>& items);

// The formulations, problem and machine a suite runs on, as given and then as SuiteOptions.
struct SelectionOptions {
  std::vector<std::string> sizes;
  std::string impl = ".";
  std::string ic = "uniform";
  std::vector<std::string> gpus;  // --gpus: ordinals, or "all"
  std::optional<std::string> gpu_exchange;
  GpuExchangeRequest exchange = GpuExchangeRequest::automatic;
  SuiteOptions suite;
};

void add_selection_options(CLI::App& command, SelectionOptions& options);

// Turns the parsed strings into SuiteOptions, and binds the registry's tree formulations to the
// opening angles of --theta; throws UsageError for bad values. An unknown pattern or option is an
// error before anything runs.
void finish_options(SelectionOptions& options, Registry& registry, int argc, char** argv,
                    bool include_variants = false);

// Creates the output folder and proves it writable before anything is measured, so a bad --out
// fails at once and leaves nothing behind.
void prepare_output_directory(const std::filesystem::path& directory);

// A results.json, or the run folder holding one; `option` names the argument in messages.
std::filesystem::path results_file_of(const std::filesystem::path& in,
                                      const std::string& option = "--in");

}  // namespace nbody::commands
