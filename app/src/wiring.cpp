#include "nbody/app/wiring.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "nbody/cpu/register.hpp"
#include "nbody/cpu_peaks/cpu_counter_source.hpp"
#include "nbody/cpu_peaks/rapl_energy.hpp"
#include "nbody/errors.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/gpu/describe_gpus.hpp"
#include "nbody/gpu/device_query.hpp"
#include "nbody/gpu/formulations.hpp"
#include "nbody/gpu/gpu_energy.hpp"
#include "nbody/gpu/gpu_monitor.hpp"
#include "nbody/gpu/multi_gpu.hpp"
#include "nbody/profiler/cupti.hpp"
#endif

namespace nbody {

Registry make_default_registry() {
  Registry registry;
  register_cpu_implementations(registry);
#if defined(NBODY_HAVE_CUDA)
  register_gpu_implementations(registry);
#else
  // No GPU ordinal exists for this build; 0, the default, stays valid so that one command line
  // serves every build.
  registry.add_option_check([](const ExecutionOptions& options) {
    if (!options.gpu_devices.empty()) {
      throw UsageError("--gpus: built without CUDA, this nbody-fair has no GPUs");
    }
    if (options.gpu_device != 0) {
      throw UsageError(fmt::format("--gpu {}: built without CUDA, this nbody-fair has no GPUs",
                                   options.gpu_device));
    }
  });
#endif
  return registry;
}

std::vector<std::unique_ptr<CounterSource>> make_counter_sources() {
  std::vector<std::unique_ptr<CounterSource>> sources;
#if defined(NBODY_HAVE_CUDA)
  sources.push_back(profiler::make_cupti_counter_source());
#endif
  sources.push_back(peaks::make_cpu_disassembly_counter_source());
  return sources;
}

GpuObservation observe_gpu(int ordinal) {
  GpuObservation observation;
#if defined(NBODY_HAVE_CUDA)
  observation.sample_gpu = gpu::make_gpu_sampler(ordinal, observation.unavailable_reason);
#else
  (void)ordinal;
  observation.unavailable_reason = "this build has no CUDA";
#endif
  return observation;
}

namespace {

// Idle power is read over ten of the counter's updates, and at least half a second.
double idle_seconds_for(const EnergyMeter& meter) {
  return meter.source() == "nvml" ? 1.0 : 0.5;
}

DeviceEnergy described(std::unique_ptr<EnergyMeter> meter, DeviceKind device, std::string why_not) {
  DeviceEnergy energy;
  const double idle_s = meter ? idle_seconds_for(*meter) : 0;
  energy.record = describe_energy_meter(meter.get(), device, std::move(why_not), idle_s);
  if (energy.record.available) energy.meter = std::move(meter);
  return energy;
}

}  // namespace

DeviceEnergy make_cpu_energy(const std::set<int>& packages) {
  std::string why_not;
  std::unique_ptr<EnergyMeter> meter =
      peaks::make_rapl_meter(peaks::RaplPaths::from_environment(), packages, why_not);
  return described(std::move(meter), DeviceKind::cpu, why_not);
}

DeviceEnergy make_gpu_energy(const std::vector<int>& ordinals) {
  std::string why_not;
#if defined(NBODY_HAVE_CUDA)
  std::unique_ptr<EnergyMeter> meter = gpu::make_gpu_energy_meter(ordinals, why_not);
#else
  (void)ordinals;
  std::unique_ptr<EnergyMeter> meter;
  why_not = "this build has no CUDA";
#endif
  return described(std::move(meter), DeviceKind::gpu, why_not);
}

EnergyMeters make_energy_meters(const ExecutionOptions& execution, bool with_gpu) {
  EnergyMeters meters;
  meters.cpu = make_cpu_energy(peaks::packages_of_this_process());
  if (!with_gpu) return meters;
  meters.gpu =
      make_gpu_energy(execution.gpu_devices.empty() ? std::vector<int>{execution.gpu_device}
                                                    : execution.gpu_devices);
  return meters;
}

EnergyMeters energy_not_read(const std::string& why) {
  EnergyMeters meters;
  meters.cpu.record = {.device = DeviceKind::cpu, .unavailable_reason = why};
  meters.gpu.record = {.device = DeviceKind::gpu, .unavailable_reason = why};
  return meters;
}

std::vector<GpuDescription> describe_gpus() {
#if defined(NBODY_HAVE_CUDA)
  return gpu::describe_gpus();
#else
  return {};
#endif
}

#if defined(NBODY_HAVE_CUDA)

std::optional<std::string> gpu_group_unavailable_reason(int device) {
  return gpu::gpu_group_unavailable_reason(device);
}

std::string ready_gpu(int device) {
  gpu::select_device(device);
  return gpu::pci_bus_id(device);
}

std::vector<std::byte> make_gpu_group_id() {
  return gpu::make_gpu_group_id();
}

GpuGroupMembership join_gpu_group(const GpuGroup& group, int device) {
  return gpu::join_gpu_group(group, device);
}

#else

namespace {

constexpr const char* kWithoutCuda =
    "this nbody-fair was built without CUDA: no GPU formulations to exchange between ranks";

}  // namespace

std::optional<std::string> gpu_group_unavailable_reason(int) {
  return kWithoutCuda;
}

std::string ready_gpu(int) {
  throw std::invalid_argument(kWithoutCuda);
}

std::vector<std::byte> make_gpu_group_id() {
  throw std::invalid_argument(kWithoutCuda);
}

GpuGroupMembership join_gpu_group(const GpuGroup&, int) {
  throw std::invalid_argument(kWithoutCuda);
}

struct GpuGroupCommunicator {};  // never made: no group is joined without CUDA

void LeaveGpuGroup::operator()(GpuGroupCommunicator* communicator) const noexcept {
  delete communicator;
}

#endif

}  // namespace nbody
