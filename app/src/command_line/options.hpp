#pragma once
// What several commands parse alike: the selection of formulations and problem (validate, run,
// simulate, bench), checked numbers, comma lists, GPU lists, and the paths of results and output
// folders.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "nbody/app/gpu_exchange.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"

namespace nbody::commands {

// What is wrong with `text` as a number of the option's kind, or nothing: its type first ("'2.5'
// is not a whole number", "'abc' is not a number", "'inf' is not a finite number"), then its
// range. CLI11's own checks test the range first, on a cast that fails for any other type ("Value
// 2.5 not in range 1 to 1000"), print the whole double range, and let infinity through.
std::optional<std::string> whole_number_problem(const std::string& text, std::uint64_t minimum,
                                                std::uint64_t maximum);
std::optional<std::string> real_number_problem(const std::string& text);

// The same as parsers of one item of a list: the value, or UsageError saying what is wrong.
std::uint64_t parse_whole_number(const std::string& text, std::uint64_t minimum,
                                 std::uint64_t maximum);
double parse_real_number(const std::string& text);

// A finite number at least (or above) `minimum`.
CLI::Validator at_least(double minimum, bool inclusive);

// A whole number from `minimum` to `maximum`: for unsigned options, whose CLI11 cast reads "-1"
// as 2^64 - 1, and for int ones, whose cast fails past INT_MAX with no word of the range.
CLI::Validator whole_number(std::uint64_t minimum = 0,
                            std::uint64_t maximum = std::numeric_limits<std::uint64_t>::max());
inline constexpr std::uint64_t kLargestInt = std::numeric_limits<int>::max();

// --softening: a finite length within what the kernels of both precisions survive
// (kSmallestSoftening to kLargestSoftening, nbody/physics.hpp), saying why where it is not.
CLI::Validator softening_length();

// The items of a comma list option as given (CLI11 collects one string per argument; none of
// these options lets CLI11 split at commas, which made `--theta ,` take the next option as its
// value): each argument split at its commas, each item trimmed of spaces. Throws UsageError
// naming `option` for an empty item (a doubled, leading or trailing comma) or no item at all.
std::vector<std::string> list_items(std::string_view option, const std::vector<std::string>& given);

// Every comma list of the command line, parsed alike: list_items, then each item by `parse_item`
// (which throws UsageError saying what is wrong with it), and an item that repeats an earlier
// one's value (1K and 1024 are one size) refused: it would be measured twice under one name. Every
// message names `option`.
template <class T, class ParseItem>
std::vector<T> parse_list(std::string_view option, const std::vector<std::string>& given,
                          ParseItem parse_item);

// A list of sizes given to `option`, or bad input naming it.
std::vector<std::size_t> sizes_option(const char* option, const std::vector<std::string>& items);

// --gpus: "all" (every GPU of this machine) or ordinals; throws UsageError for anything else.
std::vector<int> parse_gpu_list(const std::vector<std::string>& items);

// The formulations, problem and machine a suite runs on, as given and then as SuiteOptions.
struct SelectionOptions {
  std::vector<std::string> sizes;
  std::string impl = ".";
  std::string ic = "uniform";
  std::vector<std::string> gpus;    // --gpus: ordinals, or "all"
  std::vector<std::string> thetas;  // --theta; empty: SuiteOptions' own
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

// --replace, on every command that writes documents into an --out folder: without it a folder
// holding another run's documents is refused (prepare_output_directory).
void add_replace_option(CLI::App& command, bool& replace);

// Creates the output folder and proves it writable before anything is measured, so a bad --out
// fails at once and leaves nothing behind. A folder that holds documents nbody-fair writes
// (output_documents_in) is another run's: refused, naming --replace, unless `replace` (--replace);
// then they are removed first, so that no document of that run stays beside the new one's.
// `inputs`: the results files or run folders the command reads; a folder holding one of them is
// that run's own, and the documents rendered from it go there without --replace (report --in RUN).
void prepare_output_directory(const std::filesystem::path& directory, bool replace,
                              std::span<const std::filesystem::path> inputs = {});

// What nbody-fair has written into `directory`, any command: results.json, report.md,
// report.html, results.csv, compare.md, compare.html, scaling.md, scaling.html, scaling.csv, the
// temporaries an interrupted write leaves (.NAME.tmpPID), and simulate's snapshots
// (snapshots/IMPLEMENTATION-NN/snapshot_NNN.hdf5). Known by those names, nothing else: a user's
// own files are never counted, nor removed.
std::vector<std::filesystem::path> output_documents_in(const std::filesystem::path& directory);

// A results.json, or the run folder holding one; `option` names the argument in messages.
std::filesystem::path results_file_of(const std::filesystem::path& in,
                                      const std::string& option = "--in");

// "OPTION: REASON", rethrown where `parse` throws UsageError.
UsageError with_option(std::string_view option, const UsageError& error);
// An item of `option` whose value repeats an earlier item's.
UsageError repeated_item(std::string_view option, const std::string& earlier,
                         const std::string& item);

template <class T, class ParseItem>
std::vector<T> parse_list(std::string_view option, const std::vector<std::string>& given,
                          ParseItem parse_item) {
  const std::vector<std::string> items = list_items(option, given);
  std::vector<T> values;
  for (const std::string& item : items) {
    try {
      values.push_back(parse_item(item));
    } catch (const UsageError& e) {
      throw with_option(option, e);
    }
    const auto earlier = std::find(values.begin(), values.end() - 1, values.back());
    if (earlier != values.end() - 1) {
      throw repeated_item(option, items[static_cast<std::size_t>(earlier - values.begin())], item);
    }
  }
  return values;
}

}  // namespace nbody::commands
