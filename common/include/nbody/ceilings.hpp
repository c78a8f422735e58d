#pragma once
// Ceilings measured on this machine (FAIRNESS.md rule 6). cpu/ and gpu/ measure their own entries
// (a CeilingMeasurement each); the program assembles them into one Ceilings document, caches it
// per machine, and records it in results.json (docs/results-schema.md, "ceilings"). Counter
// figures look entries up by name.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "nbody/json_optional.hpp"
#include "nbody/properties.hpp"

namespace nbody {

inline constexpr const char* kCeilingsSchemaName = "nbody-fair/ceilings";
// Bump when a measurement method changes: cached ceilings of another version are remeasured.
inline constexpr int kCeilingsSchemaVersion = 4;  // 3: gpu.fp32_interaction_mix; 4: cpu.fp64_flops

// Entry names.
std::string cpu_fp32_flops_ceiling(std::string_view isa,
                                   bool all_cores);  // "cpu.fp32_flops.avx2.all_cores"
std::string cpu_fp64_flops_ceiling(std::string_view isa,
                                   bool all_cores);  // "cpu.fp64_flops.avx2.all_cores"
// The FMA ceiling a CPU kernel of `precision` is held against.
std::string cpu_flops_ceiling(Precision precision, std::string_view isa, bool all_cores);
inline constexpr const char* kCpuMemoryBandwidthCeiling = "cpu.memory_bandwidth.triad";
inline constexpr const char* kGpuFp32FlopsCeiling = "gpu.fp32_flops.fma";
inline constexpr const char* kGpuFp64FlopsCeiling = "gpu.fp64_flops.fma";
inline constexpr const char* kGpuRsqrtCeiling = "gpu.mufu_rsqrt";
inline constexpr const char* kGpuMemoryBandwidthCeiling = "gpu.memory_bandwidth.d2d_copy";
// Interactions per second of the float32 interaction's instruction mix alone (12 FP32 + MUFU.RSQ).
inline constexpr const char* kGpuInteractionMixCeiling = "gpu.fp32_interaction_mix";
// NCCL's all-gather between the GPUs a run drives (--gpus): its time at 8 bytes a GPU back to back,
// its best bus bandwidth, and its 8-byte time alone after a long kernel: the alpha, beta and the
// alpha a run's exchange pays in the scaling model (docs/perf-notes.md). Measured for those GPUs
// with each run, never cached: they depend on the set.
inline constexpr const char* kGpuAllGatherLatencyCeiling = "gpu.all_gather.latency";
inline constexpr const char* kGpuAllGatherBandwidthCeiling = "gpu.all_gather.bus_bandwidth";
inline constexpr const char* kGpuAllGatherLatencyAfterKernelCeiling =
    "gpu.all_gather.latency_after_kernel";
// Whether `name` is one of the all-gather's entries: a link between GPUs, no roof of a kernel.
inline bool is_all_gather_ceiling(std::string_view name) {
  return name == kGpuAllGatherLatencyCeiling || name == kGpuAllGatherBandwidthCeiling ||
         name == kGpuAllGatherLatencyAfterKernelCeiling;
}

struct PublishedFigure {
  double value = 0;
  std::string source;  // the datasheet
};

struct TheoreticalFigure {
  double value = 0;
  std::string basis;  // how it follows from the hardware's units and clock
};

struct CeilingEntry {
  std::string name;
  DeviceKind device = DeviceKind::cpu;
  std::string quantity;  // "float32 FMA throughput", "memory bandwidth", ...
  double value = 0;      // measured
  std::string unit;      // "FLOP/s", "B/s", "1/s", "int/s"
  std::string method;
  std::optional<PublishedFigure> datasheet;
  std::optional<TheoreticalFigure> theoretical;
  std::optional<int> threads;  // CPU entries: the threads it ran on
  std::string isa;             // CPU FMA entries
  int lanes = 0;               // CPU FMA entries: lanes per vector of the entry's precision
  // CPU FMA entries: arithmetic vector instructions per second, the issue rate that instruction
  // bounds divide by.
  std::optional<double> fp_instructions_per_second;
  std::string device_name;     // GPU entries
  std::string datasheet_note;  // why there is no datasheet figure, where that needs saying
};

struct UnavailableCeiling {
  std::string name;
  std::string reason;
};

// What one part of the suite (cpu/, gpu/) measured.
struct CeilingMeasurement {
  std::vector<CeilingEntry> entries;
  std::vector<UnavailableCeiling> unavailable;
  // Why figures may read low (a busy machine, throttled clocks): a measurement with warnings is
  // used for its run only and never cached.
  std::vector<std::string> warnings;
};

// What identifies a machine for the cache: a change of any of these remeasures.
struct GpuFingerprint {
  std::string name;
  int sm_count = 0;
  int driver_version = 0;
  bool operator==(const GpuFingerprint&) const = default;
};
struct MachineFingerprint {
  std::string hostname;
  std::string cpu_model;
  int logical_cpus = 0;
  std::vector<GpuFingerprint> gpus;
  bool operator==(const MachineFingerprint&) const = default;
};

struct Ceilings {
  std::string schema = kCeilingsSchemaName;
  int version = kCeilingsSchemaVersion;
  MachineFingerprint machine;
  std::string measured_at;  // UTC, ISO 8601
  bool from_cache = false;
  std::string cache_file;  // where it was read from or written to; empty when not cached
  std::vector<CeilingEntry> entries;
  std::vector<UnavailableCeiling> unavailable;
  std::vector<std::string> warnings;

  // The entry called `name`, or null.
  const CeilingEntry* find(std::string_view name) const;
  std::optional<double> value(std::string_view name) const;
  std::optional<double> datasheet_value(std::string_view name) const;
};

void to_json(nlohmann::json& j, const CeilingEntry& v);
void from_json(const nlohmann::json& j, CeilingEntry& v);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PublishedFigure, value, source)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TheoreticalFigure, value, basis)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(UnavailableCeiling, name, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuFingerprint, name, sm_count, driver_version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MachineFingerprint, hostname, cpu_model,
                                                logical_cpus, gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Ceilings, schema, version, machine, measured_at,
                                                from_cache, cache_file, entries, unavailable,
                                                warnings)

}  // namespace nbody
