#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/target_range.hpp"

namespace nbody {

// Under mpirun with NCCL between the ranks' GPUs (--gpu-exchange nccl): the communicator every
// rank's GPU formulations share, as the ranks agreed on it. NCCL's unique id travels as opaque
// bytes (rank 0 made it, MPI broadcast it); this rank is `rank` of `size`, and drives one GPU,
// ExecutionOptions::gpu_device.
struct GpuGroupCommunicator;  // this rank's NCCL communicator: gpu/ alone knows NCCL
// Leaves the group: NCCL's communicator destroyed once every operation is complete, or aborted
// while an exception unwinds (another rank may be missing from an operation, and destroying would
// wait for it). Defined where NCCL is; a build without it never joins a group.
struct LeaveGpuGroup {
  void operator()(GpuGroupCommunicator* communicator) const noexcept;
};
// The one owner of this rank's communicator: whoever joined the group holds it, and must outlive
// every run that carries the group, MPI and the CUDA context.
using GpuGroupMembership = std::unique_ptr<GpuGroupCommunicator, LeaveGpuGroup>;
struct GpuGroup {
  std::vector<std::byte> id;
  int rank = 0;
  int size = 1;
  // Set once this rank has joined (app's join_gpu_group): every run and simulation carrying the
  // group all-gathers through it. Borrowed from the GpuGroupMembership that owns it.
  GpuGroupCommunicator* communicator = nullptr;
  bool operator==(const GpuGroup&) const = default;
};

// Options a user can set for a run; each implementation uses those that apply to it.
struct ExecutionOptions {
  int threads = 0;     // CPU threads; 0 = all the machine has
  std::string isa;     // CPU SIMD ISA to force ("sse4.2", "avx2", "avx512f"); empty = widest
  int gpu_device = 0;  // CUDA device ordinal
  // Several GPUs driven by this process (`--gpus`), each computing a slice of the
  // targets, NCCL all-gathering between them. Empty: gpu_device alone.
  std::vector<int> gpu_devices;
  // One GPU per rank of mpirun, NCCL all-gathering between the ranks: each rank's GPU
  // formulations compute its slice on gpu_device. Empty: their slices travel through host memory
  // (MPI), or there are no ranks.
  std::optional<GpuGroup> gpu_group;
  // The bodies whose accelerations a run computes, from all N sources: a rank's or a device's
  // slice when the bodies are decomposed by target range. Empty: all of them.
  std::optional<TargetRange> targets;
};

}  // namespace nbody
