// Ceilings measured on this machine and cached per machine; the counter sources this build has.
#include "nbody/app/ceilings.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include "nbody/app/counter_figures.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/counters.hpp"
#include "nbody/files.hpp"
#include "nbody/peaks/cpu_counter_source.hpp"
#include "nbody/peaks/cpu_peaks.hpp"
#include "nbody/reference.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/peaks/gpu_peaks.hpp"
#include "nbody/profiler/cupti.hpp"
#endif

namespace nbody {
namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// What identifies a machine for the cache: a change of any of these remeasures.
nlohmann::json machine_fingerprint() {
  nlohmann::json gpus = nlohmann::json::array();
  for (const nlohmann::json& gpu : describe_gpus()) {
    gpus.push_back({{"name", gpu.value("name", "")},
                    {"sm_count", gpu.value("sm_count", 0)},
                    {"driver_version", gpu.value("driver_version", 0)}});
  }
  return {{"hostname", host_name()},
          {"cpu_model", cpu_model()},
          {"logical_cpus", peaks::all_cores_threads()},
          {"gpus", gpus}};
}

nlohmann::json entry(std::string name, std::string device, std::string quantity, double value,
                     std::string unit, std::string method) {
  return {
      {"name", std::move(name)}, {"device", std::move(device)}, {"quantity", std::move(quantity)},
      {"value", value},          {"unit", std::move(unit)},     {"method", std::move(method)},
      {"datasheet", nullptr},    {"theoretical", nullptr}};
}

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

void measure_cpu(const CeilingOptions& options, nlohmann::json& entries,
                 nlohmann::json& unavailable, nlohmann::json& warnings) {
  const int all_threads = peaks::all_cores_threads();
  const std::optional<CpuTimes> before = read_cpu_times();
  for (const std::string& isa : peaks::cpu_isa_names()) {
    double one_core_flops = 0;
    for (const bool all_cores : {false, true}) {
      const std::string name = cpu_fp32_flops_ceiling(isa, all_cores);
      const auto peak =
          peaks::measure_fma_peak(isa, all_cores ? all_threads : 1, options.seconds_per_fma_run);
      if (!peak) {
        unavailable.push_back({{"name", name}, {"reason", isa + " not supported by this CPU"}});
        continue;
      }
      if (!all_cores) one_core_flops = peak->flops_per_second;
      // All cores together fall short of cores x one core only by the all-core clock (10-20%);
      // far less means cores were shared with other virtual machines or threads not all running.
      if (all_cores && all_threads > 1 && one_core_flops > 0) {
        const double scaling = peak->flops_per_second / (one_core_flops * all_threads);
        if (scaling < kMinAllCoreScaling) {
          warnings.push_back(fmt::format(
              "{} on {} threads is {:.0f}% of {} times one core (expected at least {:.0f}%): "
              "cores shared with other programs or virtual machines, or threads not all running",
              name, all_threads, 100 * scaling, all_threads, 100 * kMinAllCoreScaling));
        }
      }
      nlohmann::json e = entry(name, "cpu", "float32 FMA throughput", peak->flops_per_second,
                               "FLOP/s", peak->method);
      e["isa"] = isa;
      e["threads"] = peak->threads;
      e["lanes"] = peak->lanes;
      e["fp_instructions_per_second"] = peak->fp_instructions_per_second;
      e["datasheet_note"] = "no datasheet figure: CPU clocks under vector load are model-specific";
      entries.push_back(std::move(e));
    }
  }
  const peaks::BandwidthPeak triad = peaks::measure_triad_bandwidth(
      all_threads,
      options.triad_bytes_per_array != 0 ? options.triad_bytes_per_array
                                         : peaks::default_triad_bytes_per_array(),
      5);
  nlohmann::json e = entry(kCpuMemoryBandwidthCeiling, "cpu", "memory bandwidth",
                           triad.bytes_per_second, "B/s", triad.method);
  e["threads"] = triad.threads;
  entries.push_back(std::move(e));
  if (const std::optional<CpuTimes> after = read_cpu_times(); before && after) {
    if (auto warning = cpu_contention_warning(*before, *after)) {
      warnings.push_back(std::move(*warning));
    }
  }
}

#if defined(NBODY_HAVE_CUDA)
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

void warn_if_low(const nlohmann::json& e, double floor, nlohmann::json& warnings) {
  if (!e.contains("theoretical") || !e["theoretical"].is_object()) return;
  const double theoretical = e["theoretical"].value("value", 0.0);
  const double measured = e.value("value", 0.0);
  if (theoretical > 0 && measured < floor * theoretical) {
    warnings.push_back(fmt::format(
        "{} measured at {:.0f}% of its theoretical figure (expected at least {:.0f}%): another "
        "process may have been using the GPU, or its clocks were held down",
        e.value("name", std::string("?")), 100 * measured / theoretical, 100 * floor));
  }
}

void measure_gpu(const CeilingOptions& options, nlohmann::json& entries,
                 nlohmann::json& unavailable, nlohmann::json& warnings) {
  const peaks::GpuPeaks gpu = peaks::measure_gpu_peaks(options.gpu_device);
  if (!gpu.unavailable_reason.empty()) {
    for (const char* name : {kGpuFp32FlopsCeiling, kGpuFp64FlopsCeiling, kGpuRsqrtCeiling,
                             kGpuInteractionMixCeiling, kGpuMemoryBandwidthCeiling}) {
      unavailable.push_back({{"name", name}, {"reason", gpu.unavailable_reason}});
    }
    return;
  }
  const nlohmann::json datasheet = gpu_datasheet(gpu.device_name);
  const auto published = [&](const char* field) -> nlohmann::json {
    if (datasheet.is_null() || !datasheet.contains(field)) return nullptr;
    return {{"value", datasheet[field]}, {"source", datasheet["source"]}};
  };
  const std::optional<SmLanes> lanes = sm_lanes(gpu.compute_capability);
  const auto theoretical = [&](double per_sm_per_clock,
                               const std::string& basis) -> nlohmann::json {
    if (!lanes) return nullptr;
    return {{"value", gpu.sm_count * per_sm_per_clock * gpu.max_sm_clock_hz},
            {"basis", fmt::format("{} SMs x {} x {:.0f} MHz (maximum SM clock)", gpu.sm_count,
                                  basis, gpu.max_sm_clock_hz * 1e-6)}};
  };
  const auto add = [&](nlohmann::json e, double floor) {
    warn_if_low(e, floor, warnings);
    e["device_name"] = gpu.device_name;
    e["threads"] = nullptr;
    entries.push_back(std::move(e));
  };
  nlohmann::json fp32 = entry(kGpuFp32FlopsCeiling, "gpu", "float32 FMA throughput", gpu.fp32_flops,
                              "FLOP/s", "FFMA: " + gpu.fma_method);
  fp32["datasheet"] = published("fp32_flops");
  if (lanes) {
    fp32["theoretical"] =
        theoretical(2.0 * lanes->fp32, fmt::format("{} FP32 lanes x 2 flops", lanes->fp32));
  }
  add(std::move(fp32), kGpuComputeFloor);
  nlohmann::json fp64 = entry(kGpuFp64FlopsCeiling, "gpu", "float64 FMA throughput", gpu.fp64_flops,
                              "FLOP/s", "DFMA: " + gpu.fma_method);
  fp64["datasheet"] = published("fp64_flops");
  if (lanes) {
    fp64["theoretical"] =
        theoretical(2.0 * lanes->fp64, fmt::format("{} FP64 lanes x 2 flops", lanes->fp64));
  }
  add(std::move(fp64), kGpuComputeFloor);
  nlohmann::json rsqrt = entry(kGpuRsqrtCeiling, "gpu", "MUFU reciprocal square root throughput",
                               gpu.rsqrt_per_second, "1/s", gpu.rsqrt_method);
  if (lanes) {
    rsqrt["theoretical"] = theoretical(lanes->sfu, fmt::format("{} SFU results", lanes->sfu));
  }
  add(std::move(rsqrt), kGpuComputeFloor);
  nlohmann::json mix =
      entry(kGpuInteractionMixCeiling, "gpu", "float32 interaction's instruction mix alone",
            gpu.interaction_mix_per_second, "int/s", gpu.interaction_mix_method);
  if (lanes) {
    // The model: every instruction, the MUFU.RSQ included, one issue slot of a 32-lane
    // scheduler. GH100 measures about 90% of it: a MUFU takes about two (docs/perf-notes.md).
    constexpr int kSlots = peaks::kInteractionMixFp32 + 1;
    mix["theoretical"] = theoretical(
        static_cast<double>(lanes->fp32) / kSlots,
        fmt::format("{} FP32 lanes / {} issue slots per interaction", lanes->fp32, kSlots));
  }
  add(std::move(mix), kGpuComputeFloor);
  nlohmann::json copy = entry(kGpuMemoryBandwidthCeiling, "gpu", "device memory bandwidth",
                              gpu.copy_bytes_per_second, "B/s", gpu.copy_method);
  copy["datasheet"] = published("memory_bandwidth");
  if (gpu.memory_clock_hz > 0 && gpu.memory_bus_bits > 0) {
    copy["theoretical"] = {
        {"value", gpu.memory_clock_hz * 2 * gpu.memory_bus_bits / 8},
        {"basis", fmt::format("{:.0f} MHz memory clock x 2 (double data rate) x {}-bit bus",
                              gpu.memory_clock_hz * 1e-6, gpu.memory_bus_bits)}};
  }
  add(std::move(copy), kGpuBandwidthFloor);
}
#endif

nlohmann::json measure_now(const CeilingOptions& options, const nlohmann::json& machine) {
  nlohmann::json entries = nlohmann::json::array();
  nlohmann::json unavailable = nlohmann::json::array();
  nlohmann::json warnings = nlohmann::json::array();
  if (options.measure_cpu) measure_cpu(options, entries, unavailable, warnings);
#if defined(NBODY_HAVE_CUDA)
  if (options.measure_gpu) measure_gpu(options, entries, unavailable, warnings);
#else
  if (options.measure_gpu) {
    unavailable.push_back({{"name", "gpu.*"}, {"reason", "this build has no CUDA"}});
  }
#endif
  return {{"schema", kCeilingsSchemaName},
          {"version", kCeilingsSchemaVersion},
          {"machine", machine},
          {"measured_at",
           fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(
                                                    std::chrono::system_clock::now())))},
          {"from_cache", false},
          {"entries", entries},
          {"unavailable", unavailable},
          {"warnings", warnings}};
}

// Adds each figure of the running configuration onto a CounterReadout of an inner source.
class DerivingCounterSource final : public CounterSource {
 public:
  using Derive = std::function<std::map<std::string, double>(const std::map<std::string, double>&,
                                                             const ImplementationInfo&, std::size_t,
                                                             const nlohmann::json&)>;
  DerivingCounterSource(std::unique_ptr<CounterSource> inner, Derive derive)
      : inner_(std::move(inner)), derive_(std::move(derive)) {}
  bool applies_to(const ImplementationInfo& info) const override {
    return inner_->applies_to(info);
  }
  CounterReadout read(PreparedRun& run, const ImplementationInfo& info, std::size_t n,
                      const nlohmann::json& ceilings) override {
    CounterReadout readout = inner_->read(run, info, n, ceilings);
    try {
      if (readout.unavailable_reason.empty()) {
        readout.derived = derive_(readout.metrics, info, n, ceilings);
      }
    } catch (const std::exception& error) {
      readout.unavailable_reason = std::string("deriving figures failed: ") + error.what();
    }
    return readout;
  }

 private:
  std::unique_ptr<CounterSource> inner_;
  Derive derive_;
};

}  // namespace

std::string cpu_fp32_flops_ceiling(std::string_view isa, bool all_cores) {
  return fmt::format("cpu.fp32_flops.{}.{}", isa, all_cores ? "all_cores" : "one_core");
}

const nlohmann::json* find_ceiling(const nlohmann::json& ceilings, std::string_view name) {
  if (!ceilings.is_object() || !ceilings.contains("entries")) return nullptr;
  for (const nlohmann::json& e : ceilings["entries"]) {
    if (e.is_object() && e.value("name", "") == name) return &e;
  }
  return nullptr;
}

std::optional<double> ceiling_value(const nlohmann::json& ceilings, std::string_view name) {
  const nlohmann::json* e = find_ceiling(ceilings, name);
  if (e == nullptr || !e->contains("value") || !(*e)["value"].is_number()) return std::nullopt;
  return (*e)["value"].get<double>();
}

std::optional<double> ceiling_datasheet_value(const nlohmann::json& ceilings,
                                              std::string_view name) {
  const nlohmann::json* e = find_ceiling(ceilings, name);
  if (e == nullptr || !e->contains("datasheet") || !(*e)["datasheet"].is_object()) {
    return std::nullopt;
  }
  const nlohmann::json& sheet = (*e)["datasheet"];
  if (!sheet.contains("value") || !sheet["value"].is_number()) return std::nullopt;
  return sheet["value"].get<double>();
}

nlohmann::json gpu_datasheet(std::string_view device_name) {
  struct Sheet {
    const char* match;
    double fp32_flops, fp64_flops, memory_bandwidth;
    const char* source;
  };
  // Non-tensor FP32 / FP64 and memory bandwidth of NVIDIA's product datasheets (boost clock).
  static constexpr Sheet kSheets[] = {
      {"H200 NVL", 60e12, 30e12, 4.8e12, "NVIDIA H200 datasheet (H200 NVL)"},
      {"H200", 67e12, 34e12, 4.8e12, "NVIDIA H200 datasheet (H200 SXM)"},
      {"H100 NVL", 60e12, 30e12, 3.9e12, "NVIDIA H100 datasheet (H100 NVL)"},
      {"H100 PCIe", 51e12, 26e12, 2.0e12, "NVIDIA H100 datasheet (H100 PCIe)"},
      {"H100", 67e12, 34e12, 3.35e12, "NVIDIA H100 datasheet (H100 SXM5)"},
  };
  for (const Sheet& sheet : kSheets) {
    if (device_name.find(sheet.match) != std::string_view::npos) {
      return {{"fp32_flops", sheet.fp32_flops},
              {"fp64_flops", sheet.fp64_flops},
              {"memory_bandwidth", sheet.memory_bandwidth},
              {"source", sheet.source}};
    }
  }
  return nullptr;
}

nlohmann::json measure_ceilings(const CeilingOptions& options) {
  try {
    const nlohmann::json machine = machine_fingerprint();
    const std::filesystem::path directory = options.cache_directory.empty()
                                                ? ReferenceCache::default_directory()
                                                : options.cache_directory;
    const std::filesystem::path file =
        directory.empty() ? std::filesystem::path{}
                          : directory / fmt::format("ceilings-{:016x}.json",
                                                    std::hash<std::string>{}(machine.dump()));
    if (!options.remeasure && !file.empty() && std::filesystem::exists(file)) {
      try {
        std::ifstream in(file);
        nlohmann::json cached = nlohmann::json::parse(in);
        if (cached.value("schema", "") == kCeilingsSchemaName &&
            cached.value("version", 0) == kCeilingsSchemaVersion && cached["machine"] == machine) {
          cached["from_cache"] = true;
          cached["cache_file"] = file.string();
          return cached;
        }
      } catch (const std::exception&) {
        // An unreadable cache is remeasured and overwritten.
      }
    }
    nlohmann::json measured = measure_now(options, machine);
    if (measured["entries"].empty()) return nullptr;
    // Ceilings taken on a busy machine are used for this run only, never cached.
    if (!file.empty() && measured["warnings"].empty()) {
      std::error_code error;
      std::filesystem::create_directories(directory, error);
      try {
        write_file_atomically(file, measured.dump(2));
        measured["cache_file"] = file.string();
      } catch (const std::exception&) {
        // A cache that cannot be written only costs time.
      }
    }
    return measured;
  } catch (const std::exception&) {
    return nullptr;
  }
}

nlohmann::json measure_ceilings(bool remeasure) {
  CeilingOptions options;
  options.remeasure = remeasure;
  return measure_ceilings(options);
}

std::vector<std::unique_ptr<CounterSource>> make_counter_sources() {
  std::vector<std::unique_ptr<CounterSource>> sources;
#if defined(NBODY_HAVE_CUDA)
  sources.push_back(std::make_unique<DerivingCounterSource>(profiler::make_cupti_counter_source(),
                                                            derive_gpu_figures));
#endif
  sources.push_back(std::make_unique<DerivingCounterSource>(
      peaks::make_cpu_disassembly_counter_source(), derive_cpu_figures));
  return sources;
}

}  // namespace nbody
