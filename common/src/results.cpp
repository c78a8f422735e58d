#include "nbody/results.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "nbody/errors.hpp"
#include "nbody/files.hpp"
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

// Fields read as unsigned numbers: a negative one would wrap to near 2^64 (N = -5 read as
// 18446744073709551611), so it is refused here, by its path, before it is read.
constexpr const char* kUnsignedFields[] = {"n",
                                           "pairs_evaluated",
                                           "seed",
                                           "sizes",
                                           "validation_bodies",
                                           "counter_sizes",
                                           "divergence_up_to",
                                           "bodies_compared",
                                           "memory_bytes",
                                           "l2_cache_bytes"};

void refuse_negative_counts(const nlohmann::json& j, const std::string& path,
                            bool unsigned_field = false) {
  if (j.is_number_integer() && !j.is_number_unsigned() && unsigned_field) {
    throw UsageError(fmt::format("{} is {}; it must not be negative", path, j.get<std::int64_t>()));
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      refuse_negative_counts(j[i], fmt::format("{}[{}]", path, i), unsigned_field);
    }
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      const bool listed = std::find(std::begin(kUnsignedFields), std::end(kUnsignedFields), key) !=
                          std::end(kUnsignedFields);
      refuse_negative_counts(value, path.empty() ? key : path + "." + key, listed);
    }
  }
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
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuSample, sm_clock_mhz, max_sm_clock_mhz,
                                                temperature_c, clock_limits)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MeasurementConditions, wall_seconds, online_cpus,
                                                other_processes_cpu_share, steal_cpu_share,
                                                cpu_clock_mhz_before, cpu_clock_mhz_after, attempts,
                                                disturbances, gpu_before, gpu_after,
                                                gpu_unavailable_reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingStatistics, repetitions,
                                                iterations_per_repetition, samples_s, median_s,
                                                mean_s, min_s, max_s, stddev_s, ci_low_s, ci_high_s,
                                                ci_confidence, cv, noisy, conditions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AccuracyRecord, metrics, relative_l2_bound,
                                                max_relative_bound, sampled, passed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RateFigures, interactions_per_second,
                                                interactions_per_second_min,
                                                interactions_per_second_max, gflops_at_20)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TreeWork, body_body, body_cell, build)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ResultRecord, implementation, initial_condition, n,
                                                status, reason, input_hash, pairs_evaluated,
                                                interactions_credited, threads, details, accuracy,
                                                kernel, end_to_end, communication, kernel_rate,
                                                end_to_end_rate, counters, tree_work, phase_seconds)
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
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuDescription, ordinal, name, compute_capability,
                                                sm_count, sm_clock_khz, memory_clock_khz,
                                                memory_bus_width_bits, memory_bytes, l2_cache_bytes,
                                                driver_version, runtime_version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MachineRecord, hostname, os, cpu_model,
                                                logical_cpus, physical_cores, isa_features,
                                                memory_bytes, gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BuildRecord, tool_version, build_type, cxx_compiler,
                                                cxx_flags, cuda_compiler, cuda_flags,
                                                cuda_architectures, libraries)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    RunSettings, command, initial_condition, seed, softening, sizes, implementation_pattern,
    repetitions, min_time_s, warmup_s, separate_kernel_timing_below_s, max_eval_seconds,
    validation_bodies, counters, counter_sizes, threads, isa, gpu_device, dt, steps, diag_every,
    snapshot_every, phase_steps, divergence_up_to, ic_file, ranks, decomposition, rank_hosts,
    gpu_devices, gpu_exchange, budget_s, thetas)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ConservationSample, step, time, kinetic_energy,
                                                potential_energy, relative_energy_error, momentum,
                                                angular_momentum, virial_ratio)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TrajectoryDivergence, steps, position, velocity,
                                                reference_energy_error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepSplit, step_s, force_s, integration_s,
                                                communication_s, tree_build_s, other_s,
                                                diagnostics_s, snapshots_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SimulationRecord, implementation, initial_condition,
                                                n, status, reason, input_hash, threads, steps, dt,
                                                wall_seconds, steps_per_second, per_step,
                                                max_relative_energy_error, conservation, divergence,
                                                details)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InputRecord, initial_condition, n, seed, hash_f64,
                                                hash_f32)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ResultsDocument, schema, schema_version,
                                                generated_at, command_line, complete, interrupted,
                                                machine, build, settings, ceilings, implementations,
                                                inputs, results, simulations, phase_seconds)

void save_results(const ResultsDocument& document, const std::filesystem::path& path) {
  // Non-finite values (an infinite error) become null rather than invalid JSON.
  write_file_atomically(path, nlohmann::json(document).dump(2) + "\n");
}

ResultsDocument load_results(const std::filesystem::path& path) {
  // A FIFO or a device is refused before it is opened: reading one could wait for ever.
  require_input_file(path);
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read {}", path.string()));
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{} is not valid JSON: {}", path.string(), e.what()));
  }
  if (!j.is_object()) {
    throw UsageError(
        fmt::format("{} is not an nbody-fair results file (not a JSON object)", path.string()));
  }
  if (j.value("schema", std::string{}) != kResultsSchemaName) {
    throw UsageError(fmt::format("{} is not an nbody-fair results file", path.string()));
  }
  if (j.value("schema_version", 0) > kResultsSchemaVersion) {
    throw UsageError(fmt::format("{} has schema version {}, newer than this tool's {}",
                                 path.string(), j.value("schema_version", 0),
                                 kResultsSchemaVersion));
  }
  // Versions 2 to 7 only added fields (measurement conditions, simulations, decomposition over
  // ranks, the GPUs each rank drives, how GPU slices travel between ranks), absent from older
  // files.
  if (j.value("schema_version", 0) < 2) upgrade_from_version_1(j);
  j["schema_version"] = kResultsSchemaVersion;
  ResultsDocument document;
  try {
    refuse_negative_counts(j, "");
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path.string(), e.what()));
  }
  try {
    document = j.get<ResultsDocument>();
  } catch (const std::exception& e) {  // nlohmann's errors (with the field's JSON pointer)
    throw UsageError(
        fmt::format("{} does not follow the results schema: {}", path.string(), e.what()));
  }
  try {
    check_results_values(document);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return document;
}

}  // namespace nbody
