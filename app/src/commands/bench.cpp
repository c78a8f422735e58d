// bench: formulations timed under Google Benchmark, its --benchmark_* flags passed through.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "command_line/command.hpp"
#include "command_line/options.hpp"
#include "nbody/app/bench_command.hpp"
#include "nbody/errors.hpp"

namespace nbody::commands {
namespace {

// What value each Google Benchmark flag takes (v1.7, as its Initialize reads them).
enum class FlagValue {
  boolean,
  text,
  seconds,
  repetitions,
  level,
  format,
  file,
  regex,
  color,
  time_unit,
  key_values
};

struct BenchmarkFlag {
  std::string_view name;
  FlagValue value;
};

constexpr std::array<BenchmarkFlag, 17> kBenchmarkFlags = {{
    {"benchmark_list_tests", FlagValue::boolean},
    {"benchmark_filter", FlagValue::regex},
    {"benchmark_min_time", FlagValue::seconds},
    {"benchmark_min_warmup_time", FlagValue::seconds},
    {"benchmark_repetitions", FlagValue::repetitions},
    {"benchmark_enable_random_interleaving", FlagValue::boolean},
    {"benchmark_report_aggregates_only", FlagValue::boolean},
    {"benchmark_display_aggregates_only", FlagValue::boolean},
    {"benchmark_format", FlagValue::format},
    {"benchmark_out", FlagValue::file},
    {"benchmark_out_format", FlagValue::format},
    {"benchmark_color", FlagValue::color},
    {"benchmark_counters_tabular", FlagValue::boolean},
    {"benchmark_perf_counters", FlagValue::text},
    {"benchmark_context", FlagValue::key_values},
    {"benchmark_time_unit", FlagValue::time_unit},
    {"v", FlagValue::level},
}};

std::optional<std::string> one_of(const std::string& value,
                                  std::initializer_list<std::string_view> words) {
  for (const std::string_view word : words) {
    if (value == word) return std::nullopt;
  }
  return fmt::format("'{}' is not one of {}", value, fmt::join(words, ", "));
}

// Whether Google Benchmark can write its --benchmark_out file, found out before anything runs
// (it would exit 1 from within the run) and leaving no trace: an existing file is opened to append
// nothing, a new one removed again.
std::optional<std::string> unwritable(const std::string& value) {
  const std::filesystem::path file = value;
  std::error_code ec;
  if (value.empty()) return "no file named";
  if (std::filesystem::is_directory(file, ec)) return "it is a folder";
  const bool existed = std::filesystem::exists(file, ec);
  const bool writable = static_cast<bool>(std::ofstream(file, std::ios::app));
  if (!existed) std::filesystem::remove(file, ec);
  if (!writable) return "it cannot be written (is its folder there, and writable?)";
  return std::nullopt;
}

std::optional<std::string> key_values_problem(const std::string& value) {
  for (const std::string& item : list_items("--benchmark_context", {value})) {
    if (item.find('=') == std::string::npos || item.starts_with('=')) {
      return fmt::format("'{}' is not KEY=VALUE", item);
    }
  }
  return std::nullopt;
}

// What is wrong with `value` (absent: the flag alone) for a flag that takes `kind`.
std::optional<std::string> value_problem(FlagValue kind, const std::optional<std::string>& value) {
  if (!value) {
    if (kind == FlagValue::boolean) return std::nullopt;
    return "give its value after '=' (--benchmark_NAME=VALUE)";
  }
  const std::string& v = *value;
  switch (kind) {
    case FlagValue::boolean:
      return one_of(v, {"true", "false", "yes", "no", "on", "off", "1", "0"});
    case FlagValue::color:
      return one_of(v, {"auto", "true", "false", "yes", "no", "on", "off", "1", "0"});
    case FlagValue::format:
      return one_of(v, {"console", "json", "csv"});
    case FlagValue::time_unit:
      return one_of(v, {"s", "ms", "us", "ns"});
    case FlagValue::seconds:
      if (auto problem = real_number_problem(v)) return problem;
      if (parse_real_number(v) < 0) return fmt::format("'{}' must be at least 0", v);
      return std::nullopt;
    case FlagValue::repetitions:
      return whole_number_problem(v, 1, std::numeric_limits<std::int32_t>::max());
    case FlagValue::level:
      return whole_number_problem(v, 0, std::numeric_limits<std::int32_t>::max());
    case FlagValue::file:
      return unwritable(v);
    case FlagValue::key_values:
      return key_values_problem(v);
    case FlagValue::regex:
    case FlagValue::text:
      return std::nullopt;  // the filter is compiled once the benchmarks are known
  }
  return std::nullopt;
}

// Google Benchmark's own flags, which CLI11 left over (bench allows extras), checked as Initialize
// would read them: one it cannot read it leaves for the command line, which calls it unexpected
// beside its own message; a format or time unit it does not know prints its usage and exits 0; a
// --benchmark_out it cannot open exits 1 from within the run. Here each is bad input: one line
// naming it, exit 2, before anything runs.
void check_benchmark_flags(const std::vector<std::string>& flags) {
  for (const std::string& flag : flags) {
    const std::size_t equals = flag.find('=');
    const std::string name = flag.substr(0, equals);
    const auto known =
        std::find_if(kBenchmarkFlags.begin(), kBenchmarkFlags.end(),
                     [&](const BenchmarkFlag& f) { return "--" + std::string(f.name) == name; });
    if (known == kBenchmarkFlags.end()) {
      throw UsageError(fmt::format(
          "bench: '{}' is neither an option of bench nor a Google Benchmark flag (bench --help "
          "lists both)",
          flag));
    }
    const std::optional<std::string> value =
        equals == std::string::npos ? std::nullopt : std::optional(flag.substr(equals + 1));
    if (const auto problem = value_problem(known->value, value)) {
      throw UsageError(fmt::format("{}: {}", flag, *problem));
    }
  }
}

class BenchCommand final : public Command {
 public:
  explicit BenchCommand(CLI::App& program)
      : Command(*program.add_subcommand(
            "bench",
            "Time formulations under Google Benchmark for kernel work: its --benchmark_* flags "
            "apply (listed below), and each benchmark warms up for 0.05 s unless "
            "--benchmark_min_warmup_time says otherwise")) {
    add_selection_options(cli(), selection_);
    // Google Benchmark's flags: check_benchmark_flags refuses anything else left over.
    cli().allow_extras();
    cli().add_flag("--variants", options_.variants,
                   "Also time the tuning variants whose names match --impl");
    cli()
        .add_option("--scope", scopes_, "kernel and/or end_to_end (GPU: copies included)")
        ->capture_default_str();
    cli()
        .add_option("--iterations", options_.iterations, "Timed evaluations (0: automatic)")
        ->capture_default_str()
        ->check(whole_number(0, kLargestInt));
    cli().add_flag("--accuracy", options_.accuracy,
                   "Report rel_l2, max_rel and net_force against the float64 reference");
    cli().add_option("--profile-metrics", profile_metrics_,
                     "Profile one evaluation of each GPU formulation with these CUPTI metrics, "
                     "e.g. dram__bytes_read.sum,dram__bytes_write.sum, instead of timing");
  }

  void print_more_help() const override { print_benchmark_flags(); }

  int execute(const Invocation& invocation) override {
    const std::vector<std::string> flags = cli().remaining();
    check_benchmark_flags(flags);
    finish_options(selection_, invocation.registry, invocation.argc, invocation.argv,
                   options_.variants);
    finish_bench_options();
    initialize_benchmark(invocation.argv[0], flags);
    invocation.processes.handle_interrupts();
    return run_bench(invocation.registry, options_);
  }

 private:
  void finish_bench_options() {
    const SuiteOptions& suite = selection_.suite;
    options_.implementation_pattern = selection_.impl;
    if (!selection_.sizes.empty()) options_.sizes = suite.sizes;
    options_.initial_condition = suite.initial_condition;
    options_.seed = suite.seed;
    options_.softening = suite.softening;
    options_.execution = suite.execution;
    options_.accuracy_bodies = suite.validation_bodies;
    options_.scopes =
        parse_list<PreparedRun::Scope>("--scope", scopes_, [](const std::string& scope) {
          if (scope == "kernel") return PreparedRun::Scope::kernel;
          if (scope == "end_to_end") return PreparedRun::Scope::end_to_end;
          throw UsageError(fmt::format("'{}' is not kernel or end_to_end", scope));
        });
    if (!profile_metrics_.empty()) {
      options_.profile_metrics = parse_list<std::string>(
          "--profile-metrics", profile_metrics_, [](const std::string& metric) { return metric; });
    }
  }

  SelectionOptions selection_;
  BenchOptions options_;
  std::vector<std::string> scopes_ = {"kernel"};
  std::vector<std::string> profile_metrics_;
};

}  // namespace

std::unique_ptr<Command> add_bench_command(CLI::App& program) {
  return std::make_unique<BenchCommand>(program);
}

}  // namespace nbody::commands
