// The CPU's ceilings (FAIRNESS.md rule 6): float32 FMA throughput of each ISA on one core and on
// all cores, and STREAM-triad memory bandwidth, with warnings where the machine was busy.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "nbody/peaks/cpu_peaks.hpp"

namespace nbody::peaks {
namespace {

// CPU time the whole machine and this process have used, to tell whether other programs ran
// while the CPU ceilings were measured (they would lower them). Linux only: empty elsewhere.
struct CpuTimes {
  double machine_busy_seconds = 0;  // all CPUs, from /proc/stat
  double own_seconds = 0;           // this process, all threads
  std::chrono::steady_clock::time_point when;
};

std::optional<CpuTimes> read_cpu_times() {
  std::ifstream stat("/proc/stat");
  std::string label;
  stat >> label;
  if (!stat || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
  double fields[8] = {};
  for (double& field : fields) stat >> field;
  if (!stat) return std::nullopt;
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  const double busy_ticks = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
  return CpuTimes{busy_ticks / ticks_per_second, seconds(usage.ru_utime) + seconds(usage.ru_stime),
                  std::chrono::steady_clock::now()};
}

// A warning when other programs used more than a tenth of the machine's CPU time meanwhile.
// /proc/stat sums every online CPU, so the share is of all of them.
std::optional<std::string> cpu_contention_warning(const CpuTimes& before, const CpuTimes& after) {
  const long logical_cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (logical_cpus <= 0) return std::nullopt;
  const double wall = std::chrono::duration<double>(after.when - before.when).count();
  const double others = (after.machine_busy_seconds - before.machine_busy_seconds) -
                        (after.own_seconds - before.own_seconds);
  const double share = wall > 0 ? others / (wall * static_cast<double>(logical_cpus)) : 0.0;
  if (share <= 0.1) return std::nullopt;
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
  const std::optional<CpuTimes> before = read_cpu_times();
  for (const std::string& isa : cpu_isa_names()) {
    double one_core_flops = 0;
    for (const bool all_cores : {false, true}) {
      const std::string name = cpu_fp32_flops_ceiling(isa, all_cores);
      const auto peak = measure_fma_peak(isa, all_cores ? all_threads : 1, seconds_per_fma_run);
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
      CeilingEntry e =
          entry(name, "float32 FMA throughput", peak->flops_per_second, "FLOP/s", peak->method);
      e.isa = isa;
      e.threads = peak->threads;
      e.lanes = peak->lanes;
      e.fp_instructions_per_second = peak->fp_instructions_per_second;
      e.datasheet_note = "no datasheet figure: CPU clocks under vector load are model-specific";
      measured.entries.push_back(std::move(e));
    }
  }
  const BandwidthPeak triad = measure_triad_bandwidth(
      all_threads,
      triad_bytes_per_array != 0 ? triad_bytes_per_array : default_triad_bytes_per_array(), 5);
  CeilingEntry e = entry(kCpuMemoryBandwidthCeiling, "memory bandwidth", triad.bytes_per_second,
                         "B/s", triad.method);
  e.threads = triad.threads;
  measured.entries.push_back(std::move(e));
  if (const std::optional<CpuTimes> after = read_cpu_times(); before && after) {
    if (auto warning = cpu_contention_warning(*before, *after)) {
      measured.warnings.push_back(std::move(*warning));
    }
  }
  return measured;
}

}  // namespace nbody::peaks
