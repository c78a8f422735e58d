#pragma once
// The program's wiring: what this build contains, from cpu/ and gpu/ (the only place that knows
// both, and whether CUDA was built).
#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/counters.hpp"
#include "nbody/execution_options.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"

namespace nbody {

// Every formulation this build has.
Registry make_default_registry();

// The counter sources this build has (CUPTI when built with CUDA, the hot loop's disassembly for
// CPU kernels).
std::vector<std::unique_ptr<CounterSource>> make_counter_sources();

// The CUDA devices present (name, SMs, clocks, memory, driver and runtime versions); none on a
// build without CUDA or a machine without a GPU.
std::vector<GpuDescription> describe_gpus();

// How GPU timings on CUDA device `ordinal` observe the GPU's state (NVML), or why they cannot.
GpuObservation observe_gpu(int ordinal);

// The run's energy meters (FAIRNESS.md rule 10): RAPL for the CPU packages this process may run
// on, NVML for the GPU boards it drives where `with_gpu`; each described (update period, idle
// power) before any measurement, or with the reason it is not read. Never throws.
EnergyMeters make_energy_meters(const ExecutionOptions& execution, bool with_gpu);
// The two meters apart, for a process that meters only some of its devices (decomposed over
// ranks): RAPL over `packages`, NVML over the GPUs `ordinals`. Never throw.
DeviceEnergy make_cpu_energy(const std::set<int>& packages);
DeviceEnergy make_gpu_energy(const std::vector<int>& ordinals);

// Meters that read nothing, each device's record saying why.
EnergyMeters energy_not_read(const std::string& why);

// NCCL between the GPUs of mpirun's ranks, one GPU each (gpu/multi_gpu.hpp), where this
// build has it:
// - empty where `device` can be in a group of ranks (NCCL built, the device working); otherwise
//   why not;
std::optional<std::string> gpu_group_unavailable_reason(int device);
// - makes `device` this thread's, its context created (a failure here is not NCCL's), and returns
//   its PCI bus id: which physical GPU it is; throws;
std::string ready_gpu(int device);
// - NCCL's unique id for a new group, as opaque bytes (one rank makes it); throws;
std::vector<std::byte> make_gpu_group_id();
// - this process's place in `group` on `device` (ncclCommInitRank: a collective, waiting inside
//   for every rank of the group), for GpuGroup::communicator: the membership is its one owner,
//   and leaves the group when it goes; throws.
GpuGroupMembership join_gpu_group(const GpuGroup& group, int device);

}  // namespace nbody
