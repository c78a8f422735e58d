#include "nbody/results.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/results_schema.hpp"
#include "nbody/results_validation.hpp"

namespace nbody {

// Missing keys keep their defaults, so older files with fewer fields still load.
namespace {

// A failed kernel's errors can be NaN or infinite, which JSON writes as null: read null back as
// NaN.
double number_or_nan(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

// Version 1 had no roles: its reports named the naive baselines, cpu.aos and gpu.aos, by name.
void upgrade_from_version_1(nlohmann::json& j) {
  if (j.contains("implementations") && j["implementations"].is_array()) {
    for (nlohmann::json& impl : j["implementations"]) {
      if (!impl.is_object() || impl.contains("role")) continue;
      const std::string name = impl.value("name", std::string{});
      impl["role"] =
          name == "cpu.aos" || name == "gpu.aos" ? Role::naive_baseline : Role::optimized;
    }
  }
  j["schema_version"] = 2;
}

}  // namespace

void to_json(nlohmann::json& j, const AccuracyMetrics& v) {
  j = {{"relative_l2", v.relative_l2},
       {"max_relative", v.max_relative},
       {"p99_relative", v.p99_relative},
       {"median_relative", v.median_relative},
       {"net_force_residual", v.net_force_residual},
       {"bodies_compared", v.bodies_compared}};
}

void from_json(const nlohmann::json& j, AccuracyMetrics& v) {
  v.relative_l2 = number_or_nan(j, "relative_l2");
  v.max_relative = number_or_nan(j, "max_relative");
  v.p99_relative = number_or_nan(j, "p99_relative");
  v.median_relative = number_or_nan(j, "median_relative");
  v.net_force_residual = number_or_nan(j, "net_force_residual");
  v.bodies_compared = j.value("bodies_compared", std::size_t{0});
}

// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, defined out of line: results.hpp declares
// these for every library (the library macro's inline definitions would be this file's alone).
#define NBODY_JSON_WITH_DEFAULT(Type, ...)                                                  \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {              \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                \
  }                                                                                         \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {            \
    const Type nlohmann_json_default_obj{};                                                 \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__)) \
  }

NBODY_JSON_WITH_DEFAULT(GpuSample, sm_clock_mhz, max_sm_clock_mhz, temperature_c, clock_limits)
NBODY_JSON_WITH_DEFAULT(MeasurementConditions, wall_seconds, online_cpus, other_processes_cpu_share,
                        steal_cpu_share, cpu_clock_mhz_before, cpu_clock_mhz_after, attempts,
                        disturbances, gpu_before, gpu_after, gpu_unavailable_reason)
NBODY_JSON_WITH_DEFAULT(EnergyStatistics, joules, domain_joules, seconds, evaluations,
                        per_evaluation_j, ci_low_j, ci_high_j, mean_watts, periods_spanned,
                        resolved)
NBODY_JSON_WITH_DEFAULT(EnergyMeterRecord, device, available, unavailable_reason, source, domains,
                        unit_j, update_period_s, idle_watts, idle_seconds, limit_watts,
                        idle_accounting)
NBODY_JSON_WITH_DEFAULT(TimingStatistics, repetitions, iterations_per_repetition, samples_s,
                        median_s, mean_s, min_s, max_s, stddev_s, ci_low_s, ci_high_s,
                        ci_confidence, cv, noisy, conditions, energy)
NBODY_JSON_WITH_DEFAULT(AccuracyRecord, metrics, relative_l2_bound, max_relative_bound, sampled,
                        passed)
NBODY_JSON_WITH_DEFAULT(RateFigures, interactions_per_second, interactions_per_second_min,
                        interactions_per_second_max, gflops_at_20)
NBODY_JSON_WITH_DEFAULT(TreeCostModel, walk_ceiling, walk_figure, walk_scale, body_body_cost,
                        body_cell_cost, cost_unit, cost_basis, build_ceiling, build_bytes,
                        build_basis)
NBODY_JSON_WITH_DEFAULT(TreeWork, body_body, body_cell, build, costs)
NBODY_JSON_WITH_DEFAULT(ResultRecord, implementation, initial_condition, n, status, reason,
                        input_hash, pairs_evaluated, interactions_credited, threads, details,
                        accuracy, kernel, end_to_end, communication, kernel_rate, end_to_end_rate,
                        counters, tree_work, phase_seconds)
// By hand where the macros cannot reach: the tolerance's coefficients sit at the record's level.
void to_json(nlohmann::json& j, const ImplementationRecord& v) {
  j = {{"name", v.name},
       {"description", v.description},
       {"device", v.device},
       {"layout", v.layout},
       {"precision", v.precision},
       {"accuracy_class", v.accuracy_class},
       {"pairs", v.pairs},
       {"algorithm", v.algorithm},
       {"theta", v.theta},
       {"role", v.role},
       {"multithreaded", v.multithreaded},
       {"optimizations", v.optimizations},
       {"unit_roundoff", v.tolerance.unit_roundoff},
       {"relative_l2_coefficient", v.tolerance.relative_l2_coefficient},
       {"max_relative_coefficient", v.tolerance.max_relative_coefficient},
       {"relative_l2_truncation", v.tolerance.relative_l2_truncation},
       {"max_relative_truncation", v.tolerance.max_relative_truncation},
       {"available", v.available},
       {"unavailable_reason", v.unavailable_reason},
       {"threads", v.threads}};
}

void from_json(const nlohmann::json& j, ImplementationRecord& v) {
  const ImplementationRecord d;
  v.name = j.value("name", d.name);
  v.description = j.value("description", d.description);
  v.device = j.value("device", d.device);
  v.layout = j.value("layout", d.layout);
  v.precision = j.value("precision", d.precision);
  v.accuracy_class = j.value("accuracy_class", d.accuracy_class);
  v.pairs = j.value("pairs", d.pairs);
  v.algorithm = j.value("algorithm", d.algorithm);
  v.theta = j.value("theta", d.theta);
  v.role = j.value("role", d.role);
  v.multithreaded = j.value("multithreaded", d.multithreaded);
  v.optimizations = j.value("optimizations", d.optimizations);
  v.tolerance.unit_roundoff = j.value("unit_roundoff", d.tolerance.unit_roundoff);
  v.tolerance.relative_l2_coefficient =
      j.value("relative_l2_coefficient", d.tolerance.relative_l2_coefficient);
  v.tolerance.max_relative_coefficient =
      j.value("max_relative_coefficient", d.tolerance.max_relative_coefficient);
  v.tolerance.relative_l2_truncation =
      j.value("relative_l2_truncation", d.tolerance.relative_l2_truncation);
  v.tolerance.max_relative_truncation =
      j.value("max_relative_truncation", d.tolerance.max_relative_truncation);
  v.available = j.value("available", d.available);
  v.unavailable_reason = j.value("unavailable_reason", d.unavailable_reason);
  v.threads = j.value("threads", d.threads);
}
NBODY_JSON_WITH_DEFAULT(GpuDescription, ordinal, name, compute_capability, sm_count, sm_clock_khz,
                        memory_clock_khz, memory_bus_width_bits, memory_bytes, l2_cache_bytes,
                        driver_version, runtime_version)
NBODY_JSON_WITH_DEFAULT(MachineRecord, hostname, os, cpu_model, logical_cpus, physical_cores,
                        isa_features, memory_bytes, gpus)
NBODY_JSON_WITH_DEFAULT(BuildRecord, tool_version, build_type, cxx_compiler, cxx_flags,
                        cuda_compiler, cuda_flags, cuda_architectures, libraries)
NBODY_JSON_WITH_DEFAULT(RunSettings, command, initial_condition, seed, softening, sizes,
                        implementation_pattern, repetitions, min_time_s, warmup_s,
                        separate_kernel_timing_below_s, max_eval_seconds, validation_bodies,
                        counters, counter_sizes, threads, isa, gpu_device, dt, steps, diag_every,
                        snapshot_every, phase_steps, divergence_up_to, ic_file, ranks,
                        decomposition, rank_hosts, gpu_devices, gpu_exchange, budget_s, thetas)
NBODY_JSON_WITH_DEFAULT(ConservationSample, step, time, kinetic_energy, potential_energy,
                        relative_energy_error, momentum, angular_momentum, virial_ratio)
NBODY_JSON_WITH_DEFAULT(TrajectoryDivergence, steps, position, velocity, reference_energy_error)
NBODY_JSON_WITH_DEFAULT(StepSplit, step_s, force_s, integration_s, communication_s, tree_build_s,
                        other_s, diagnostics_s, snapshots_s)
NBODY_JSON_WITH_DEFAULT(SimulationRecord, implementation, initial_condition, n, status, reason,
                        input_hash, threads, steps, dt, wall_seconds, steps_per_second, per_step,
                        max_relative_energy_error, conservation, divergence, details, energy)
NBODY_JSON_WITH_DEFAULT(InputRecord, initial_condition, n, seed, hash_f64, hash_f32)
NBODY_JSON_WITH_DEFAULT(ResultsDocument, schema, schema_version, generated_at, command_line,
                        complete, interrupted, machine, build, settings, ceilings, implementations,
                        inputs, results, simulations, energy, phase_seconds)

double EnergyMeterRecord::idle_total_watts() const {
  double sum = 0;
  for (const double w : idle_watts) sum += w;
  return sum;
}

void save_results(const ResultsDocument& document, const std::filesystem::path& path) {
  // Non-finite values (an infinite error) become null rather than invalid JSON.
  write_file_atomically(path, nlohmann::json(document).dump(2) + "\n");
}

namespace {

// The whole text of `path`, which must be one JSON value: text after it (a second document, a
// stray line) is refused rather than ignored.
nlohmann::json read_one_json_value(const std::filesystem::path& path) {
  require_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw UsageError(fmt::format("{} is empty; a results file is one JSON object", path.string()));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message after its own tag: "parse error at line 3, column 2: syntax error ...".
    std::string what = e.what();
    if (const std::size_t at = what.find("at line"); at != std::string::npos) what.erase(0, at);
    const std::size_t colon = what.find(": ");
    const std::string where = what.substr(0, colon);
    if (what.find("; expected end of input") != std::string::npos) {
      throw UsageError(fmt::format(
          "{} holds more than one JSON value: text follows the document {}", path.string(), where));
    }
    throw UsageError(fmt::format("{} is not valid JSON ({}): {}", path.string(), where,
                                 colon == std::string::npos ? what : what.substr(colon + 2)));
  }
}

// What the document says it is, before anything else is read: an nbody-fair results file of a
// version this tool knows.
void check_identity(const nlohmann::json& j, const std::filesystem::path& path) {
  if (!j.is_object()) {
    throw UsageError(
        fmt::format("{} is not an nbody-fair results file (not a JSON object)", path.string()));
  }
  const auto schema = j.find("schema");
  if (schema == j.end() || *schema != kResultsSchemaName) {
    throw UsageError(fmt::format(
        "{} is not an nbody-fair results file (its schema is {}, not \"{}\")", path.string(),
        schema == j.end() ? "missing" : schema->dump(), kResultsSchemaName));
  }
  const auto version = j.find("schema_version");
  if (version == j.end()) {
    throw UsageError(fmt::format(
        "{}: schema_version is missing; every results file says which version it follows",
        path.string()));
  }
  if (version->is_number_unsigned() &&
      version->get<std::uint64_t>() > static_cast<std::uint64_t>(kResultsSchemaVersion)) {
    throw UsageError(fmt::format("{} has schema version {}, newer than this tool's {}",
                                 path.string(), version->dump(), kResultsSchemaVersion));
  }
}

// nlohmann's own words, where the schema let through something the model cannot hold: its tag
// dropped and its JSON pointer ("(/results/2/n)") given as the field's path.
std::string in_our_words(const nlohmann::json& j, const std::string& what) {
  std::string message = what;
  if (const std::size_t tag = message.find("] ");
      message.starts_with("[json.exception.") && tag != std::string::npos) {
    message.erase(0, tag + 2);
  }
  if (message.starts_with("(/")) {
    const std::size_t close = message.find(") ");
    if (close != std::string::npos) {
      return fmt::format("{}: {}", field_path(j, message.substr(1, close - 1)),
                         message.substr(close + 2));
    }
  }
  return message;
}

}  // namespace

ResultsDocument load_results(const std::filesystem::path& path) {
  nlohmann::json j = read_one_json_value(path);
  check_identity(j, path);
  // The schema first (types, bounds, spellings, required fields: docs/results.schema.json), then
  // what it cannot state (check_results_values).
  try {
    check_against_results_schema(j);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path.string(), e.what()));
  }
  // Versions 2 to 11 only added fields, absent from older files.
  if (j.value("schema_version", 0) < 2) upgrade_from_version_1(j);
  j["schema_version"] = kResultsSchemaVersion;
  ResultsDocument document;
  try {
    document = j.get<ResultsDocument>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: {}", path.string(), in_our_words(j, e.what())));
  }
  try {
    check_results_values(document);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return document;
}

}  // namespace nbody
