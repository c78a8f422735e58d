// The several-GPU entry points where NCCL is not found: each refuses with the reason (the
// availability checks say it first, so a run never gets this far), and no group is ever joined.
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/multi_gpu.hpp"

namespace nbody {

struct GpuGroupCommunicator {};  // never made: no group is joined without NCCL

void LeaveGpuGroup::operator()(GpuGroupCommunicator* communicator) const noexcept {
  delete communicator;
}

}  // namespace nbody

namespace nbody::gpu {
namespace {

std::string without_nccl(const ExecutionOptions& options) {
  return *(options.gpu_group ? gpu_group_unavailable_reason(options.gpu_device)
                             : multi_gpu_unavailable_reason(options.gpu_devices));
}

}  // namespace

std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices) {
  static_cast<void>(devices);
  return "this nbody-fair was built without NCCL: one GPU per process (install NCCL and "
         "reconfigure)";
}

std::optional<std::string> gpu_group_unavailable_reason(int device) {
  static_cast<void>(device);
  return "this nbody-fair was built without NCCL: GPU formulations' slices travel between ranks "
         "through host memory (install NCCL and reconfigure)";
}

std::vector<std::byte> make_gpu_group_id() {
  throw std::invalid_argument(*gpu_group_unavailable_reason(0));
}

GpuGroupMembership join_gpu_group(const GpuGroup&, int device) {
  throw std::invalid_argument(*gpu_group_unavailable_reason(device));
}

AllGatherSweep time_all_gather(std::span<const int> devices) {
  throw std::invalid_argument(*multi_gpu_unavailable_reason(devices));
}

template <class T>
std::unique_ptr<PreparedRun> make_multi_gpu_run(std::span<const Body<double>>, double,
                                                const ExecutionOptions& options,
                                                const ForceKernelFactory<T>&) {
  throw std::invalid_argument(without_nccl(options));
}

template <class T>
std::unique_ptr<Simulation> make_multi_gpu_simulation(const SimulationSetup& setup,
                                                      const ForceKernelFactory<T>&) {
  throw std::invalid_argument(without_nccl(setup.execution));
}

template std::unique_ptr<PreparedRun> make_multi_gpu_run<float>(std::span<const Body<double>>,
                                                                double, const ExecutionOptions&,
                                                                const ForceKernelFactory<float>&);
template std::unique_ptr<PreparedRun> make_multi_gpu_run<double>(std::span<const Body<double>>,
                                                                 double, const ExecutionOptions&,
                                                                 const ForceKernelFactory<double>&);
template std::unique_ptr<Simulation> make_multi_gpu_simulation<float>(
    const SimulationSetup&, const ForceKernelFactory<float>&);
template std::unique_ptr<Simulation> make_multi_gpu_simulation<double>(
    const SimulationSetup&, const ForceKernelFactory<double>&);

}  // namespace nbody::gpu
