#pragma once
// Ceilings measured on this machine (FAIRNESS.md rule 6), as self-describing JSON:
//   {"schema": "nbody-fair/ceilings", "version": 1, "machine": {...}, "measured_at": "...",
//    "from_cache": bool, "cache_file": "...",
//    "entries": [{"name", "device", "quantity", "value", "unit", "threads", "isa", "method",
//                 "datasheet": {"value", "source"} | null, "theoretical": {...} | null, ...}],
//    "unavailable": [{"name", "reason"}]}
// measure_ceilings() (nbody/app/ceilings.hpp) produces it; counter figures look entries up by name.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nbody {

inline constexpr const char* kCeilingsSchemaName = "nbody-fair/ceilings";
// Bump when a measurement method changes: cached ceilings of another version are remeasured.
inline constexpr int kCeilingsSchemaVersion = 3;  // 3: gpu.fp32_interaction_mix

// Entry names.
std::string cpu_fp32_flops_ceiling(std::string_view isa,
                                   bool all_cores);  // "cpu.fp32_flops.avx2.all_cores"
inline constexpr const char* kCpuMemoryBandwidthCeiling = "cpu.memory_bandwidth.triad";
inline constexpr const char* kGpuFp32FlopsCeiling = "gpu.fp32_flops.fma";
inline constexpr const char* kGpuFp64FlopsCeiling = "gpu.fp64_flops.fma";
inline constexpr const char* kGpuRsqrtCeiling = "gpu.mufu_rsqrt";
inline constexpr const char* kGpuMemoryBandwidthCeiling = "gpu.memory_bandwidth.d2d_copy";
// Interactions per second of the float32 interaction's instruction mix alone (12 FP32 + MUFU.RSQ).
inline constexpr const char* kGpuInteractionMixCeiling = "gpu.fp32_interaction_mix";

// The entry called `name`, or null.
const nlohmann::json* find_ceiling(const nlohmann::json& ceilings, std::string_view name);
std::optional<double> ceiling_value(const nlohmann::json& ceilings, std::string_view name);
std::optional<double> ceiling_datasheet_value(const nlohmann::json& ceilings,
                                              std::string_view name);

// Published figures for a GPU known by its device name (H100 SXM / PCIe / NVL, H200), or null.
nlohmann::json gpu_datasheet(std::string_view device_name);

}  // namespace nbody
