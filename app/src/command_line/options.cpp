#include "command_line/options.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "nbody/app/wiring.hpp"
#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/isas.hpp"
#include "nbody/physics.hpp"
#include "nbody/sizes.hpp"

namespace nbody::commands {

namespace {

// CLI11's validator from a check that says what is wrong, or nothing.
template <class Check>
CLI::Validator validator(Check check, std::string description) {
  return CLI::Validator(
      [check](std::string& text) -> std::string { return check(text).value_or(""); },
      std::move(description));
}

// What a whole number out of [minimum, maximum] must be; `too_large` where it is past maximum.
std::string range_words(std::uint64_t minimum, std::uint64_t maximum, bool too_large) {
  if (maximum != std::numeric_limits<std::uint64_t>::max()) {
    return fmt::format("must be from {} to {}", minimum, maximum);
  }
  return too_large ? fmt::format("must be at most {}", maximum)
                   : fmt::format("must be at least {}", minimum);
}

}  // namespace

std::optional<std::string> whole_number_problem(const std::string& text, std::uint64_t minimum,
                                                std::uint64_t maximum) {
  const bool negative = text.starts_with('-');
  const std::string_view digits = std::string_view(text).substr(negative || text.starts_with('+'));
  const bool whole = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
  if (!whole) return fmt::format("'{}' is not a whole number", text);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool zero = error == std::errc() && value == 0;
  const bool too_large = !negative && (error != std::errc() || value > maximum);
  if ((negative && !zero) || too_large || value < minimum) {
    return range_words(minimum, maximum, too_large);
  }
  return std::nullopt;
}

std::optional<std::string> real_number_problem(const std::string& text) {
  const std::string_view number = std::string_view(text).substr(text.starts_with('+'));
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || end != number.data() + number.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range)) {
    return fmt::format("'{}' is not a number", text);
  }
  if (!std::isfinite(value) || error == std::errc::result_out_of_range) {
    return fmt::format("'{}' is not a finite number", text);
  }
  return std::nullopt;
}

std::uint64_t parse_whole_number(const std::string& text, std::uint64_t minimum,
                                 std::uint64_t maximum) {
  if (const auto problem = whole_number_problem(text, minimum, maximum)) {
    // An item of a list is named with its range: "'-1' must be at least 0".
    throw UsageError(problem->starts_with('\'') ? *problem
                                                : fmt::format("'{}' {}", text, *problem));
  }
  std::uint64_t value = 0;
  const std::string_view digits = std::string_view(text).substr(text.starts_with('+'));
  if (!text.starts_with('-')) std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

double parse_real_number(const std::string& text) {
  if (const auto problem = real_number_problem(text)) throw UsageError(*problem);
  const std::string_view number = std::string_view(text).substr(text.starts_with('+'));
  double value = 0;
  std::from_chars(number.data(), number.data() + number.size(), value);
  return value;
}

CLI::Validator at_least(double minimum, bool inclusive) {
  return validator(
      [minimum, inclusive](const std::string& text) -> std::optional<std::string> {
        if (auto problem = real_number_problem(text)) return problem;
        const double value = parse_real_number(text);
        if (inclusive ? value >= minimum : value > minimum) return std::nullopt;
        return fmt::format("must be {} {}", inclusive ? "at least" : "greater than", minimum);
      },
      inclusive ? fmt::format(">= {}", minimum) : fmt::format("> {}", minimum));
}

CLI::Validator whole_number(std::uint64_t minimum, std::uint64_t maximum) {
  return validator(
      [minimum, maximum](const std::string& text) {
        return whole_number_problem(text, minimum, maximum);
      },
      "UINT");
}

CLI::Validator softening_length() {
  return validator(
      [](const std::string& text) -> std::optional<std::string> {
        if (auto problem = real_number_problem(text)) return problem;
        const double eps = parse_real_number(text);
        if (eps < kSmallestSoftening) {
          return fmt::format(
              "{} is below {:g}: float32 kernels overflow for bodies at one point, (1/eps)^3 past "
              "the largest float32 (docs/tolerances.md)",
              text, kSmallestSoftening);
        }
        if (eps > kLargestSoftening) {
          return fmt::format(
              "{} is above {:g}: float32 accelerations m/eps^3 fall below float32's normal range "
              "and fail validation (docs/tolerances.md)",
              text, kLargestSoftening);
        }
        return std::nullopt;
      },
      fmt::format("in [{:g}, {:g}]", kSmallestSoftening, kLargestSoftening));
}

std::vector<std::string> list_items(std::string_view option,
                                    const std::vector<std::string>& given) {
  std::vector<std::string> items;
  for (const std::string& argument : given) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = argument.find(',', start);
      std::string item = argument.substr(start, comma - start);
      const std::size_t first = item.find_first_not_of(" \t");
      if (first == std::string::npos) {
        throw UsageError(fmt::format("{}: an empty item in '{}'", option, argument));
      }
      item = item.substr(first, item.find_last_not_of(" \t") + 1 - first);
      items.push_back(std::move(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (items.empty()) throw UsageError(fmt::format("{}: no value given", option));
  return items;
}

UsageError with_option(std::string_view option, const UsageError& error) {
  return UsageError(fmt::format("{}: {}", option, error.what()));
}

UsageError repeated_item(std::string_view option, const std::string& earlier,
                         const std::string& item) {
  if (earlier == item) return UsageError(fmt::format("{}: '{}' given twice", option, item));
  return UsageError(
      fmt::format("{}: '{}' and '{}' are the same, given twice", option, earlier, item));
}

std::vector<std::size_t> sizes_option(const char* option, const std::vector<std::string>& items) {
  return parse_list<std::size_t>(option, items, [](const std::string& item) {
    return parse_sizes(item).front();  // one item: no comma is left in it
  });
}

std::vector<int> parse_gpu_list(const std::vector<std::string>& items) {
  if (list_items("--gpus", items) == std::vector<std::string>{"all"}) {
    const std::size_t count = describe_gpus().size();
    if (count == 0) throw UsageError("--gpus all: this machine has no GPU nbody-fair can use");
    std::vector<int> all(count);
    for (std::size_t d = 0; d < count; ++d) all[d] = static_cast<int>(d);
    return all;
  }
  return parse_list<int>("--gpus", items, [](const std::string& item) {
    if (whole_number_problem(item, 0, kLargestInt)) {
      throw UsageError(
          fmt::format("'{}' is not a device ordinal (give ordinals, e.g. 0,1, or all)", item));
    }
    return static_cast<int>(parse_whole_number(item, 0, kLargestInt));
  });
}

void add_selection_options(CLI::App& command, SelectionOptions& o) {
  command.add_option("--sizes", o.sizes,
                     "Body counts, e.g. 1000,4096 or 1K,64K,1M (default: from the hardware)");
  command
      .add_option("--impl", o.impl,
                  "Regular expression selecting implementations by name; a tree formulation at "
                  "each angle of --theta (cpu.tree[theta=0.5]) also by its own name (cpu.tree)")
      ->capture_default_str();
  command.add_option("--ic", o.ic, "Initial condition: " + initial_condition_choices())
      ->capture_default_str();
  command.add_option("--seed", o.suite.seed, "Seed of the initial condition")
      ->capture_default_str()
      ->check(whole_number());
  command
      .add_option(
          "--softening", o.suite.softening,
          fmt::format("Softening length eps, from {:g} to {:g} (what float32 kernels survive)",
                      kSmallestSoftening, kLargestSoftening))
      ->capture_default_str()
      ->check(softening_length());
  command.add_option("--threads", o.suite.execution.threads, "CPU threads (0 = all)")
      ->capture_default_str()
      ->check(whole_number(0, kLargestInt));
  command.add_option("--isa", o.suite.execution.isa,
                     "Force a CPU SIMD ISA, one of this build's: " + compiled_isa_names());
  command.add_option("--gpu", o.suite.execution.gpu_device, "CUDA device ordinal")
      ->capture_default_str()
      ->check(whole_number(0, kLargestInt));
  command
      .add_option("--gpus", o.gpus,
                  "Several GPUs driven by this process, e.g. 0,1 or all: each computes a slice of "
                  "the bodies, NCCL all-gathers (GPU formulations; replaces --gpu)")
      ->excludes("--gpu");
  command.add_option("--gpu-exchange", o.gpu_exchange,
                     "Under mpirun, how GPU formulations' slices travel between the ranks: nccl "
                     "(between their GPUs, one GPU per rank) or mpi (through host memory). "
                     "Default: nccl where every rank can, else mpi");
  command
      .add_option("--validate-bodies", o.suite.validation_bodies,
                  "Validate every body up to this N, an even sample of this many above")
      ->capture_default_str()
      ->check(whole_number(1));
  command.add_option(
      "--theta", o.thetas,
      fmt::format("Opening angles the tree formulations run at, each its own measurement (in [0, "
                  "1]; 0 opens every cell: the all-pairs sum) [{}]",
                  fmt::join(o.suite.thetas, ",")));
  command.add_flag(
      "--no-reference-cache", [&o](std::int64_t) { o.suite.reference_cache = false; },
      "Recompute the float64 reference instead of reading the on-disk cache");
}

void finish_options(SelectionOptions& o, Registry& registry, int argc, char** argv,
                    bool include_variants) {
  o.suite.initial_condition = parse_initial_condition(o.ic);
  o.suite.implementation_pattern = o.impl;
  if (!o.sizes.empty()) o.suite.sizes = sizes_option("--sizes", o.sizes);
  if (o.gpu_exchange) o.exchange = parse_gpu_exchange(*o.gpu_exchange);
  if (!o.gpus.empty()) {
    o.suite.execution.gpu_devices = parse_gpu_list(o.gpus);
    // One listed is --gpu: monitors, ceilings and records name that device.
    o.suite.execution.gpu_device = o.suite.execution.gpu_devices.front();
    if (o.suite.execution.gpu_devices.size() == 1) o.suite.execution.gpu_devices.clear();
  }
  if (!o.thetas.empty()) {
    o.suite.thetas = parse_list<double>("--theta", o.thetas, [](const std::string& item) {
      const double theta = parse_real_number(item);
      if (theta < 0 || theta > 1) throw UsageError(fmt::format("'{}' is not in [0, 1]", item));
      return theta;
    });
  }
  registry.bind_opening_angles(o.suite.thetas);
  (void)registry.select(o.impl, include_variants);
  registry.check_options(o.suite.execution);
  o.suite.command_line.assign(argv, argv + argc);
}

namespace {

namespace fs = std::filesystem;

// The documents any command writes into its output folder; simulate's snapshots go below it.
constexpr std::array<std::string_view, 9> kOutputDocuments = {
    "results.json", "report.md",  "report.html",  "results.csv", "compare.md",
    "compare.html", "scaling.md", "scaling.html", "scaling.csv"};
constexpr std::string_view kSnapshotFolder = "snapshots";

// The temporary an interrupted write of one of kOutputDocuments leaves (write_file_atomically:
// ".NAME.tmpPID").
bool is_temporary_of_a_document(const std::string& name) {
  return std::any_of(kOutputDocuments.begin(), kOutputDocuments.end(), [&](std::string_view doc) {
    const std::string temporary = fmt::format(".{}.tmp", doc);
    return name.starts_with(temporary) && name.size() > temporary.size() &&
           std::all_of(name.begin() + static_cast<std::ptrdiff_t>(temporary.size()), name.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  });
}

// simulate's snapshots: snapshots/IMPLEMENTATION-NN/snapshot_NNN.hdf5.
bool is_snapshot(const fs::path& file) {
  const std::string name = file.filename().string();
  const std::string folder = file.parent_path().filename().string();
  const auto digits = [](std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  const std::size_t n = folder.rfind("-N");
  return name.starts_with("snapshot_") && name.ends_with(".hdf5") &&
         digits(std::string_view(name).substr(9, name.size() - 14)) && n != std::string::npos &&
         n > 0 && digits(std::string_view(folder).substr(n + 2));
}

// Whether `directory` holds one of `inputs` (a results file, or a run folder): then it is that
// run's folder, and what is rendered from the run belongs there.
bool holds_an_input(const fs::path& directory, std::span<const fs::path> inputs) {
  std::error_code ec;
  return std::any_of(inputs.begin(), inputs.end(), [&](const fs::path& input) {
    const fs::path folder = fs::is_directory(input, ec) ? input : input.parent_path();
    return fs::equivalent(folder.empty() ? fs::path(".") : folder, directory, ec);
  });
}

// Removes `documents` (output_documents_in), then the snapshot folders they leave empty; a folder
// still holding a file of the user's stays.
void remove_documents(const fs::path& directory, const std::vector<fs::path>& documents) {
  std::error_code ec;
  std::vector<fs::path> snapshot_folders;
  for (const fs::path& document : documents) {
    if (!fs::remove(document, ec) && ec) {
      throw UsageError(fmt::format("--out {}: cannot remove {} to replace it: {}",
                                   directory.string(), document.string(), ec.message()));
    }
    if (is_snapshot(document)) snapshot_folders.push_back(document.parent_path());
  }
  snapshot_folders.push_back(directory / kSnapshotFolder);  // after the folders within it
  for (const fs::path& folder : snapshot_folders) {
    if (fs::is_directory(folder, ec) && fs::is_empty(folder, ec)) fs::remove(folder, ec);
  }
}

}  // namespace

std::vector<std::filesystem::path> output_documents_in(const std::filesystem::path& directory) {
  std::vector<fs::path> documents;
  std::error_code ec;
  for (const std::string_view name : kOutputDocuments) {
    const fs::path document = directory / name;
    if (fs::exists(fs::symlink_status(document, ec)) && !fs::is_directory(document, ec)) {
      documents.push_back(document);
    }
  }
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (is_temporary_of_a_document(entry.path().filename().string())) {
      documents.push_back(entry.path());
    }
  }
  const fs::path snapshots = directory / kSnapshotFolder;
  if (fs::is_directory(snapshots, ec)) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::recursive_directory_iterator(snapshots, ec)) {
      if (entry.is_regular_file(ec) && is_snapshot(entry.path())) found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    documents.insert(documents.end(), found.begin(), found.end());
  }
  return documents;
}

void add_replace_option(CLI::App& command, bool& replace) {
  command.add_flag("--replace", replace,
                   "Replace the documents of another run in --out (results.json, report.*, "
                   "results.csv, compare.*, scaling.*, snapshots/): they are removed before "
                   "anything is written; without it such a folder is refused. Other files stay");
}

void prepare_output_directory(const std::filesystem::path& directory, bool replace,
                              std::span<const std::filesystem::path> inputs) {
  std::error_code ec;
  const bool existed = fs::exists(directory, ec);
  std::vector<fs::path> documents;
  if (existed && fs::is_directory(directory, ec) && !holds_an_input(directory, inputs)) {
    documents = output_documents_in(directory);
  }
  if (!documents.empty() && !replace) {
    throw UsageError(fmt::format(
        "--out {}: the folder holds another run's {}{}; give --replace to replace them, or "
        "another folder",
        directory.string(), fs::relative(documents.front(), directory, ec).string(),
        documents.size() > 1 ? fmt::format(" and {} more", documents.size() - 1) : ""));
  }
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory)) {
    throw UsageError(fmt::format("--out: cannot create the folder '{}'{}", directory.string(),
                                 ec ? ": " + ec.message() : ""));
  }
  const fs::path probe = directory / ".nbody-fair-write-test";
  const bool writable = static_cast<bool>(std::ofstream(probe));
  fs::remove(probe, ec);
  if (!writable) {
    if (!existed) fs::remove(directory, ec);
    throw UsageError(fmt::format("--out: the folder '{}' is not writable", directory.string()));
  }
  if (!documents.empty()) remove_documents(directory, documents);
}

std::filesystem::path results_file_of(const std::filesystem::path& in, const std::string& option) {
  // Only a regular file the user may read is opened: a FIFO or a device would block the read.
  std::error_code ec;
  if (!std::filesystem::is_directory(in, ec)) {
    const std::optional<std::string> why = why_not_an_input_file(in);
    if (why == "no such file") {
      throw UsageError(fmt::format("{} {}: no such file or folder", option, in.string()));
    }
    if (why) throw UsageError(fmt::format("{} {}: cannot read it: {}", option, in.string(), *why));
    return in;
  }
  if (const auto why = why_not_an_input_folder(in)) {
    throw UsageError(fmt::format("{} {}: cannot read the folder: {}", option, in.string(), *why));
  }
  const std::filesystem::path file = in / "results.json";
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    throw UsageError(fmt::format("{} {}: the folder has no results.json", option, in.string()));
  }
  if (const auto why = why_not_an_input_file(file)) {
    throw UsageError(
        fmt::format("{} {}: cannot read its results.json: {}", option, in.string(), *why));
  }
  return file;
}

}  // namespace nbody::commands
