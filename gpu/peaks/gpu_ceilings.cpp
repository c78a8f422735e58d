// The GPU's ceilings (FAIRNESS.md rule 6): FFMA, DFMA, MUFU rsqrt, the float32 interaction's own
// instruction mix and device memory bandwidth, each beside its theoretical figure (units x clock)
// and, for GPUs known by name, the datasheet's.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "nbody/gpu_peaks/gpu_peaks.hpp"

namespace nbody::peaks {
namespace {

// Per-SM lanes by compute capability: FP32 FMA, FP64 FMA, SFU (MUFU) results per clock.
struct SmLanes {
  int fp32, fp64, sfu;
};
std::optional<SmLanes> sm_lanes(int compute_capability) {
  switch (compute_capability) {
    case 80:
      return SmLanes{64, 32, 16};
    case 90:
      return SmLanes{128, 64, 16};
    default:
      return std::nullopt;
  }
}

// Measured throughput below this fraction of the theoretical figure means the GPU was shared
// (another process's kernels) or throttled: a ceiling like that must not be cached.
constexpr double kGpuComputeFloor = 0.8;
constexpr double kGpuBandwidthFloor = 0.6;  // copies reach 85-90% of the pin rate

void warn_if_low(const CeilingEntry& e, double floor, std::vector<std::string>& warnings) {
  if (!e.theoretical || e.theoretical->value <= 0) return;
  if (e.value < floor * e.theoretical->value) {
    warnings.push_back(fmt::format(
        "{} measured at {:.0f}% of its theoretical figure (expected at least {:.0f}%): another "
        "process may have been using the GPU, or its clocks were held down",
        e.name, 100 * e.value / e.theoretical->value, 100 * floor));
  }
}

CeilingEntry entry(std::string name, std::string quantity, double value, std::string unit,
                   std::string method) {
  return {.name = std::move(name),
          .device = DeviceKind::gpu,
          .quantity = std::move(quantity),
          .value = value,
          .unit = std::move(unit),
          .method = std::move(method)};
}

}  // namespace

std::optional<GpuDatasheet> gpu_datasheet(std::string_view device_name) {
  // Non-tensor FP32 / FP64 and memory bandwidth of NVIDIA's product datasheets (boost clock).
  static constexpr std::pair<const char*, GpuDatasheet> kSheets[] = {
      {"H200 NVL", {60e12, 30e12, 4.8e12, "NVIDIA H200 datasheet (H200 NVL)"}},
      {"H200", {67e12, 34e12, 4.8e12, "NVIDIA H200 datasheet (H200 SXM)"}},
      {"H100 NVL", {60e12, 30e12, 3.9e12, "NVIDIA H100 datasheet (H100 NVL)"}},
      {"H100 PCIe", {51e12, 26e12, 2.0e12, "NVIDIA H100 datasheet (H100 PCIe)"}},
      {"H100", {67e12, 34e12, 3.35e12, "NVIDIA H100 datasheet (H100 SXM5)"}},
  };
  for (const auto& [match, sheet] : kSheets) {
    if (device_name.find(match) != std::string_view::npos) return sheet;
  }
  return std::nullopt;
}

CeilingMeasurement measure_gpu_ceilings(int ordinal) {
  CeilingMeasurement measured;
  const GpuPeaks gpu = measure_gpu_peaks(ordinal);
  if (!gpu.unavailable_reason.empty()) {
    for (const char* name : {kGpuFp32FlopsCeiling, kGpuFp64FlopsCeiling, kGpuRsqrtCeiling,
                             kGpuInteractionMixCeiling, kGpuMemoryBandwidthCeiling}) {
      measured.unavailable.push_back({name, gpu.unavailable_reason});
    }
    return measured;
  }
  const std::optional<GpuDatasheet> sheet = gpu_datasheet(gpu.device_name);
  const auto published = [&](double GpuDatasheet::*field) -> std::optional<PublishedFigure> {
    if (!sheet) return std::nullopt;
    return PublishedFigure{(*sheet).*field, sheet->source};
  };
  const std::optional<SmLanes> lanes = sm_lanes(gpu.compute_capability);
  const auto theoretical = [&](double per_sm_per_clock, const std::string& basis) {
    return TheoreticalFigure{gpu.sm_count * per_sm_per_clock * gpu.max_sm_clock_hz,
                             fmt::format("{} SMs x {} x {:.0f} MHz (maximum SM clock)",
                                         gpu.sm_count, basis, gpu.max_sm_clock_hz * 1e-6)};
  };
  const auto add = [&](CeilingEntry e, double floor) {
    warn_if_low(e, floor, measured.warnings);
    e.device_name = gpu.device_name;
    measured.entries.push_back(std::move(e));
  };
  CeilingEntry fp32 = entry(kGpuFp32FlopsCeiling, "float32 FMA throughput", gpu.fp32_flops,
                            "FLOP/s", "FFMA: " + gpu.fma_method);
  fp32.datasheet = published(&GpuDatasheet::fp32_flops);
  if (lanes) {
    fp32.theoretical =
        theoretical(2.0 * lanes->fp32, fmt::format("{} FP32 lanes x 2 flops", lanes->fp32));
  }
  add(std::move(fp32), kGpuComputeFloor);
  CeilingEntry fp64 = entry(kGpuFp64FlopsCeiling, "float64 FMA throughput", gpu.fp64_flops,
                            "FLOP/s", "DFMA: " + gpu.fma_method);
  fp64.datasheet = published(&GpuDatasheet::fp64_flops);
  if (lanes) {
    fp64.theoretical =
        theoretical(2.0 * lanes->fp64, fmt::format("{} FP64 lanes x 2 flops", lanes->fp64));
  }
  add(std::move(fp64), kGpuComputeFloor);
  CeilingEntry rsqrt = entry(kGpuRsqrtCeiling, "MUFU reciprocal square root throughput",
                             gpu.rsqrt_per_second, "1/s", gpu.rsqrt_method);
  if (lanes) rsqrt.theoretical = theoretical(lanes->sfu, fmt::format("{} SFU results", lanes->sfu));
  add(std::move(rsqrt), kGpuComputeFloor);
  CeilingEntry mix = entry(kGpuInteractionMixCeiling, "float32 interaction's instruction mix alone",
                           gpu.interaction_mix_per_second, "int/s", gpu.interaction_mix_method);
  if (lanes) {
    // The model: every instruction, the MUFU.RSQ included, one issue slot of a 32-lane
    // scheduler. GH100 measures about 90% of it: a MUFU takes about two (docs/perf-notes.md).
    constexpr int kSlots = kInteractionMixFp32 + 1;
    mix.theoretical = theoretical(
        static_cast<double>(lanes->fp32) / kSlots,
        fmt::format("{} FP32 lanes / {} issue slots per interaction", lanes->fp32, kSlots));
  }
  add(std::move(mix), kGpuComputeFloor);
  CeilingEntry copy = entry(kGpuMemoryBandwidthCeiling, "device memory bandwidth",
                            gpu.copy_bytes_per_second, "B/s", gpu.copy_method);
  copy.datasheet = published(&GpuDatasheet::memory_bandwidth);
  if (gpu.memory_clock_hz > 0 && gpu.memory_bus_bits > 0) {
    copy.theoretical =
        TheoreticalFigure{gpu.memory_clock_hz * 2 * gpu.memory_bus_bits / 8,
                          fmt::format("{:.0f} MHz memory clock x 2 (double data rate) x {}-bit bus",
                                      gpu.memory_clock_hz * 1e-6, gpu.memory_bus_bits)};
  }
  add(std::move(copy), kGpuBandwidthFloor);
  return measured;
}

}  // namespace nbody::peaks
