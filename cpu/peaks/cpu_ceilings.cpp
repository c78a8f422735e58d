// The CPU's ceilings (FAIRNESS.md rule 6): float32 and float64 FMA throughput of each ISA on one
// core and on all cores, and STREAM-triad memory bandwidth, with warnings where the machine was
// busy.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "nbody/cpu_peaks/cpu_peaks.hpp"
#include "nbody/machine_info.hpp"

namespace nbody::peaks {
namespace {

// A warning when other programs (or the hypervisor) took more than a tenth of the machine's CPU
// time while the CPU ceilings were measured: they would read low.
std::optional<std::string> cpu_contention_warning(const CpuActivity& before,
                                                  const CpuActivity& after) {
  const MeasurementConditions c = conditions_between(before, after);
  const double share = c.other_processes_cpu_share + c.steal_cpu_share;
  if (share <= kMaxOtherCpuShare) return std::nullopt;
  return fmt::format(
      "other programs used {:.0f}% of the CPUs' time while the CPU ceilings were measured; they "
      "read low",
      100 * share);
}

constexpr double kMinAllCoreScaling = 0.6;

CeilingEntry entry(std::string name, std::string quantity, double value, std::string unit,
                   std::string method) {
  return {.name = std::move(name),
          .device = DeviceKind::cpu,
          .quantity = std::move(quantity),
          .value = value,
          .unit = std::move(unit),
          .method = std::move(method)};
}

}  // namespace

CeilingMeasurement measure_cpu_ceilings(double seconds_per_fma_run,
                                        std::size_t triad_bytes_per_array) {
  CeilingMeasurement measured;
  const int all_threads = all_cores_threads();
  const std::optional<CpuActivity> before = sample_cpu_activity();
  for (const Precision precision : {Precision::f32, Precision::f64}) {
    for (const std::string& isa : cpu_isa_names()) {
      double one_core_flops = 0;
      for (const bool all_cores : {false, true}) {
        const std::string name = cpu_flops_ceiling(precision, isa, all_cores);
        const auto peak =
            measure_fma_peak(isa, all_cores ? all_threads : 1, seconds_per_fma_run, precision);
        if (!peak) {
          measured.unavailable.push_back({name, isa + " not supported by this CPU"});
          continue;
        }
        if (!all_cores) one_core_flops = peak->flops_per_second;
        // All cores together fall short of cores x one core only by the all-core clock (10-20%);
        // far less means cores were shared with other virtual machines or threads not all running.
        if (all_cores && all_threads > 1 && one_core_flops > 0) {
          const double scaling = peak->flops_per_second / (one_core_flops * all_threads);
          if (scaling < kMinAllCoreScaling) {
            measured.warnings.push_back(fmt::format(
                "{} on {} threads is {:.0f}% of {} times one core (expected at least {:.0f}%): "
                "cores shared with other programs or virtual machines, or threads not all running",
                name, all_threads, 100 * scaling, all_threads, 100 * kMinAllCoreScaling));
          }
        }
        CeilingEntry e = entry(
            name, precision == Precision::f64 ? "float64 FMA throughput" : "float32 FMA throughput",
            peak->flops_per_second, "FLOP/s", peak->method);
        e.isa = isa;
        e.threads = peak->threads;
        e.lanes = peak->lanes;
        e.fp_instructions_per_second = peak->fp_instructions_per_second;
        e.datasheet_note = "no datasheet figure: CPU clocks under vector load are model-specific";
        measured.entries.push_back(std::move(e));
      }
    }
  }
  const BandwidthPeak triad = measure_triad_bandwidth(
      all_threads,
      triad_bytes_per_array != 0 ? triad_bytes_per_array : default_triad_bytes_per_array(), 5);
  CeilingEntry e = entry(kCpuMemoryBandwidthCeiling, "memory bandwidth", triad.bytes_per_second,
                         "B/s", triad.method);
  e.threads = triad.threads;
  measured.entries.push_back(std::move(e));
  if (const std::optional<CpuActivity> after = sample_cpu_activity(); before && after) {
    if (auto warning = cpu_contention_warning(*before, *after)) {
      measured.warnings.push_back(std::move(*warning));
    }
  }
  return measured;
}

}  // namespace nbody::peaks
