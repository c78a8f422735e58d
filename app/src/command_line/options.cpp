#include "command_line/options.hpp"

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
#include "nbody/physics.hpp"
#include "nbody/sizes.hpp"

namespace nbody::commands {

CLI::Validator at_least(double minimum, bool inclusive) {
  return CLI::Validator(
      [minimum, inclusive](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        if (inclusive ? value >= minimum : value > minimum) return {};
        return fmt::format("must be {} {}", inclusive ? "at least" : "greater than", minimum);
      },
      inclusive ? fmt::format(">= {}", minimum) : fmt::format("> {}", minimum));
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end) {
          return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
        }
        return {};
      },
      "UINT");
}

std::vector<std::size_t> sizes_option(const char* option, const std::vector<std::string>& items) {
  try {
    return parse_sizes(items);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", option, e.what()));
  }
}

std::vector<int> parse_gpu_list(const std::vector<std::string>& items) {
  if (items.size() == 1 && items.front() == "all") {
    const std::size_t count = describe_gpus().size();
    if (count == 0) throw UsageError("--gpus all: this machine has no GPU nbody-fair can use");
    std::vector<int> all(count);
    for (std::size_t d = 0; d < count; ++d) all[d] = static_cast<int>(d);
    return all;
  }
  std::vector<int> devices;
  for (const std::string& item : items) {
    std::size_t used = 0;
    int ordinal = -1;
    try {
      ordinal = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || ordinal < 0) {
      throw UsageError(
          fmt::format("--gpus: '{}' is not a device ordinal (use e.g. 0,1 or all)", item));
    }
    devices.push_back(ordinal);
  }
  return devices;
}

void add_selection_options(CLI::App& command, SelectionOptions& o) {
  command.add_option("--sizes", o.sizes,
                     "Body counts, e.g. 1000,4096 or 1K,64K,1M (default: from the hardware)");
  command.add_option("--impl", o.impl, "Regular expression selecting implementations by name")
      ->capture_default_str();
  command.add_option("--ic", o.ic, "Initial condition: " + initial_condition_choices())
      ->capture_default_str();
  command.add_option("--seed", o.suite.seed, "Seed of the initial condition")
      ->capture_default_str()
      ->check(whole_number());
  command.add_option("--softening", o.suite.softening, "Softening length eps")
      ->capture_default_str()
      ->check(at_least(kSmallestSoftening, true));
  command.add_option("--threads", o.suite.execution.threads, "CPU threads (0 = all)")
      ->capture_default_str()
      ->check(at_least(0, true));
  command.add_option("--isa", o.suite.execution.isa,
                     "Force a CPU SIMD ISA: sse4.2, avx2 or avx512f");
  command.add_option("--gpu", o.suite.execution.gpu_device, "CUDA device ordinal")
      ->capture_default_str()
      ->check(at_least(0, true));
  command
      .add_option("--gpus", o.gpus,
                  "Several GPUs driven by this process, e.g. 0,1 or all: each computes a slice of "
                  "the bodies, NCCL all-gathers (GPU formulations; replaces --gpu)")
      ->delimiter(',')
      ->excludes("--gpu");
  command.add_option("--gpu-exchange", o.gpu_exchange,
                     "Under mpirun, how GPU formulations' slices travel between the ranks: nccl "
                     "(between their GPUs, one GPU per rank) or mpi (through host memory). "
                     "Default: nccl where every rank can, else mpi");
  command
      .add_option("--validate-bodies", o.suite.validation_bodies,
                  "Validate every body up to this N, an even sample of this many above")
      ->capture_default_str()
      ->check(whole_number())
      ->check(at_least(0, false));
  command
      .add_option("--theta", o.suite.thetas,
                  "Opening angles the tree formulations run at, each its own measurement, e.g. "
                  "0.3,0.5,0.7 (in [0, 1]; 0 opens every cell: the all-pairs sum)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
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
  registry.bind_opening_angles(o.suite.thetas);
  (void)registry.select(o.impl, include_variants);
  registry.check_options(o.suite.execution);
  o.suite.command_line.assign(argv, argv + argc);
}

void prepare_output_directory(const std::filesystem::path& directory) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(directory, ec);
  std::filesystem::create_directories(directory, ec);
  if (ec || !std::filesystem::is_directory(directory)) {
    throw UsageError(fmt::format("--out: cannot create the folder '{}'{}", directory.string(),
                                 ec ? ": " + ec.message() : ""));
  }
  const std::filesystem::path probe = directory / ".nbody-fair-write-test";
  const bool writable = static_cast<bool>(std::ofstream(probe));
  std::filesystem::remove(probe, ec);
  if (!writable) {
    if (!existed) std::filesystem::remove(directory, ec);
    throw UsageError(fmt::format("--out: the folder '{}' is not writable", directory.string()));
  }
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
