// The machine's ceilings, assembled from cpu/ and gpu/ and cached per machine.
#include "nbody/app/ceilings.hpp"

#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "nbody/app/wiring.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"
#include "nbody/files.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/reference.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/gpu/multi_gpu.hpp"
#include "nbody/gpu_peaks/gpu_peaks.hpp"
#endif

namespace nbody {
namespace {

MachineFingerprint machine_fingerprint() {
  const MachineRecord machine = describe_machine();
  MachineFingerprint fingerprint{.hostname = machine.hostname,
                                 .cpu_model = machine.cpu_model,
                                 .logical_cpus = peaks::all_cores_threads(),
                                 .gpus = {}};
  for (const GpuDescription& gpu : describe_gpus()) {
    fingerprint.gpus.push_back(
        {.name = gpu.name, .sm_count = gpu.sm_count, .driver_version = gpu.driver_version});
  }
  return fingerprint;
}

void append(CeilingMeasurement part, Ceilings& into) {
  for (auto& e : part.entries) into.entries.push_back(std::move(e));
  for (auto& u : part.unavailable) into.unavailable.push_back(std::move(u));
  for (auto& w : part.warnings) into.warnings.push_back(std::move(w));
}

Ceilings measure_now(const CeilingOptions& options, const MachineFingerprint& machine) {
  Ceilings ceilings;
  ceilings.machine = machine;
  ceilings.measured_at = utc_timestamp();
  if (options.measure_cpu) {
    append(peaks::measure_cpu_ceilings(options.seconds_per_fma_run, options.triad_bytes_per_array),
           ceilings);
  }
  if (options.measure_gpu) {
#if defined(NBODY_HAVE_CUDA)
    append(peaks::measure_gpu_ceilings(options.gpu_device), ceilings);
#else
    ceilings.unavailable.push_back({"gpu.*", "this build has no CUDA"});
#endif
  }
  return ceilings;
}

// The machine's own ceilings, from the cache where it holds them.
std::optional<Ceilings> machine_ceilings(const CeilingOptions& options) {
  try {
    const MachineFingerprint machine = machine_fingerprint();
    const std::filesystem::path directory = options.cache_directory.empty()
                                                ? ReferenceCache::default_directory()
                                                : options.cache_directory;
    const std::filesystem::path file =
        directory.empty()
            ? std::filesystem::path{}
            : directory / fmt::format("ceilings-{:016x}.json",
                                      std::hash<std::string>{}(nlohmann::json(machine).dump()));
    if (!options.remeasure && !file.empty() && std::filesystem::exists(file)) {
      try {
        std::ifstream in(file);
        Ceilings cached = nlohmann::json::parse(in).get<Ceilings>();
        if (cached.schema == kCeilingsSchemaName && cached.version == kCeilingsSchemaVersion &&
            cached.machine == machine) {
          cached.from_cache = true;
          cached.cache_file = file.string();
          return cached;
        }
      } catch (const std::exception&) {
        // An unreadable cache is remeasured and overwritten.
      }
    }
    Ceilings measured = measure_now(options, machine);
    if (measured.entries.empty()) return std::nullopt;
    // Ceilings taken on a busy machine are used for this run only, never cached.
    if (!file.empty() && measured.warnings.empty()) {
      std::error_code error;
      std::filesystem::create_directories(directory, error);
      try {
        write_file_atomically(file, nlohmann::json(measured).dump(2));
        measured.cache_file = file.string();
      } catch (const std::exception&) {
        // A cache that cannot be written only costs time.
      }
    }
    return measured;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The all-gather between the run's GPUs, where it drives several: measured with every run.
void add_all_gather(const CeilingOptions& options, Ceilings& ceilings) {
  if (!options.measure_gpu || options.gpu_devices.size() < 2) return;
#if defined(NBODY_HAVE_CUDA)
  append(gpu::measure_all_gather_ceilings(options.gpu_devices), ceilings);
#else
  ceilings.unavailable.push_back({"gpu.all_gather.*", "this build has no CUDA"});
#endif
}

}  // namespace

std::optional<Ceilings> measure_ceilings(const CeilingOptions& options) {
  std::optional<Ceilings> ceilings = machine_ceilings(options);
  if (ceilings) add_all_gather(options, *ceilings);
  return ceilings;
}

std::optional<Ceilings> measure_exchange_ceilings(const std::vector<int>& gpu_devices) {
  if (gpu_devices.size() < 2) return std::nullopt;
  try {
    Ceilings ceilings;
    ceilings.machine = machine_fingerprint();
    ceilings.measured_at = utc_timestamp();
    CeilingOptions options;
    options.gpu_devices = gpu_devices;
    add_all_gather(options, ceilings);
    return ceilings;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<Ceilings> measure_ceilings(bool remeasure) {
  CeilingOptions options;
  options.remeasure = remeasure;
  return measure_ceilings(options);
}

}  // namespace nbody
