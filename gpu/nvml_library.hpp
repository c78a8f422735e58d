#pragma once
// NVML, opened at run time (gpu_monitor.cpp and gpu_energy.cpp share it): libnvidia-ml.so.1 comes
// with the driver, and a binary linked against it would not start on a machine without one (the
// CI machines, a CPU-only host running a CUDA build).
#if defined(NBODY_HAVE_NVML_HEADER)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvml.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "nbody/results.hpp"

namespace nbody::gpu {

// libnvidia-ml.so.1, loaded and initialised for as long as a sampler holds it. Functions are
// looked up by name with the header's own types: linking the library would keep nbody-fair from
// starting on a machine without a driver.
class Nvml {
 public:
  static std::shared_ptr<Nvml> open(std::string& why_not) {
    void* handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      why_not = std::string("NVML not found (no NVIDIA driver?): ") + ::dlerror();
      return nullptr;
    }
    std::shared_ptr<Nvml> nvml(new Nvml(handle));
    if (!nvml->init_ || !nvml->shutdown_ || !nvml->by_bus_id_ || !nvml->clock_ ||
        !nvml->max_clock_ || !nvml->temperature_ || !nvml->event_reasons_) {
      why_not = "NVML lacks a function nbody-fair reads (driver too old?)";
      return nullptr;
    }
    if (const nvmlReturn_t status = nvml->init_(); status != NVML_SUCCESS) {
      why_not = std::string("NVML did not start: ") + nvml->error_string(status);
      nvml->shutdown_ = nullptr;  // nothing to shut down
      return nullptr;
    }
    return nvml;
  }

  ~Nvml() {
    if (shutdown_) shutdown_();
    ::dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::optional<nvmlDevice_t> device(int cuda_ordinal, std::string& why_not) const {
    char bus_id[64] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_ordinal) != cudaSuccess) {
      cudaGetLastError();
      why_not = "CUDA could not name the device's PCI bus id";
      return std::nullopt;
    }
    nvmlDevice_t device{};
    if (const nvmlReturn_t status = by_bus_id_(bus_id, &device); status != NVML_SUCCESS) {
      why_not = std::string("NVML does not know device ") + bus_id + ": " + error_string(status);
      return std::nullopt;
    }
    return device;
  }

  std::optional<GpuSample> sample(nvmlDevice_t device) const {
    unsigned clock = 0, max_clock = 0, temperature = 0;
    unsigned long long reasons = 0;
    if (clock_(device, NVML_CLOCK_SM, &clock) != NVML_SUCCESS ||
        max_clock_(device, NVML_CLOCK_SM, &max_clock) != NVML_SUCCESS ||
        temperature_(device, NVML_TEMPERATURE_GPU, &temperature) != NVML_SUCCESS ||
        event_reasons_(device, &reasons) != NVML_SUCCESS) {
      return std::nullopt;
    }
    GpuSample s{.sm_clock_mhz = static_cast<double>(clock),
                .max_sm_clock_mhz = static_cast<double>(max_clock),
                .temperature_c = static_cast<double>(temperature),
                .clock_limits = {}};
    // Every reason but idle and the applications-clocks setting says the GPU was held down. (The
    // hardware reasons have only their older "throttle" names in CUDA 13's nvml.h.)
    const std::pair<unsigned long long, const char*> kLimits[] = {
        {nvmlClocksEventReasonSwPowerCap, "sw_power_cap"},
        {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
        {nvmlClocksEventReasonSyncBoost, "sync_boost"},
        {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
        {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
        {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
        {nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting"}};
    for (const auto& [bit, name] : kLimits) {
      if ((reasons & bit) != 0) s.clock_limits.emplace_back(name);
    }
    return s;
  }

  bool reads_energy() const { return total_energy_ != nullptr; }

  // The board's energy since the driver loaded, in millijoules (64 bits: no wrap-around).
  nvmlReturn_t total_energy_mj(nvmlDevice_t device, unsigned long long& mj) const {
    return total_energy_(device, &mj);
  }

  std::optional<double> power_limit_watts(nvmlDevice_t device) const {
    unsigned milliwatts = 0;
    if (!power_limit_ || power_limit_(device, &milliwatts) != NVML_SUCCESS) return std::nullopt;
    return 1e-3 * milliwatts;
  }

  const char* error_string(nvmlReturn_t status) const {
    return error_string_ ? error_string_(status) : "unknown NVML error";
  }

 private:
  explicit Nvml(void* handle) : handle_(handle) {
    init_ = symbol<decltype(&nvmlInit_v2)>("nvmlInit_v2");
    shutdown_ = symbol<decltype(&nvmlShutdown)>("nvmlShutdown");
    by_bus_id_ =
        symbol<decltype(&nvmlDeviceGetHandleByPciBusId_v2)>("nvmlDeviceGetHandleByPciBusId_v2");
    clock_ = symbol<decltype(&nvmlDeviceGetClockInfo)>("nvmlDeviceGetClockInfo");
    max_clock_ = symbol<decltype(&nvmlDeviceGetMaxClockInfo)>("nvmlDeviceGetMaxClockInfo");
    temperature_ = symbol<decltype(&nvmlDeviceGetTemperature)>("nvmlDeviceGetTemperature");
    event_reasons_ = symbol<decltype(&nvmlDeviceGetCurrentClocksEventReasons)>(
        "nvmlDeviceGetCurrentClocksEventReasons");
    total_energy_ = symbol<decltype(&nvmlDeviceGetTotalEnergyConsumption)>(
        "nvmlDeviceGetTotalEnergyConsumption");
    power_limit_ =
        symbol<decltype(&nvmlDeviceGetEnforcedPowerLimit)>("nvmlDeviceGetEnforcedPowerLimit");
    error_string_ = symbol<decltype(&nvmlErrorString)>("nvmlErrorString");
  }

  template <class Function>
  Function symbol(const char* name) const {
    return reinterpret_cast<Function>(::dlsym(handle_, name));
  }

  void* handle_;
  decltype(&nvmlInit_v2) init_ = nullptr;
  decltype(&nvmlShutdown) shutdown_ = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_bus_id_ = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock_ = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock_ = nullptr;
  decltype(&nvmlDeviceGetTemperature) temperature_ = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) event_reasons_ = nullptr;
  decltype(&nvmlErrorString) error_string_ = nullptr;
  // Optional: a driver without them still samples clocks; the energy meter says why not.
  decltype(&nvmlDeviceGetTotalEnergyConsumption) total_energy_ = nullptr;
  decltype(&nvmlDeviceGetEnforcedPowerLimit) power_limit_ = nullptr;
};

}  // namespace nbody::gpu

#endif
