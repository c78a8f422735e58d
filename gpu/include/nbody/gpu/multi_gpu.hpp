#pragma once
// Several GPUs exchanging slices through NCCL (gpu/multi_gpu/): those one process drives
// (ExecutionOptions::gpu_devices, ncclCommInitAll), or one GPU per rank of mpirun
// (ExecutionOptions::gpu_group, ncclCommInitRank on the id the ranks shared over MPI). Where NCCL
// is not built, every function here refuses with the reason (multi_gpu/without_nccl.cu).
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbody/ceilings.hpp"
#include "nbody/execution_options.hpp"

namespace nbody::gpu {

// Empty where this build and machine can drive `devices` together (NCCL; distinct, working
// ordinals); otherwise why not.
std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices);

// Empty where this build and machine can put `device` in a group of ranks (NCCL; a working
// ordinal); otherwise why not. Whether the ranks of a host have a GPU each is the caller's to ask.
std::optional<std::string> gpu_group_unavailable_reason(int device);

// NCCL's unique id for a new group of ranks, as opaque bytes: one rank makes it, every rank joins
// with it (join_gpu_group). Throws where NCCL is not built or fails.
std::vector<std::byte> make_gpu_group_id();

// This process's place in a group of ranks, one GPU each: ncclCommInitRank on `device` as rank
// group.rank of group.size (a collective: every rank of the group calls it, and waits inside for
// the others). Runs and simulations whose ExecutionOptions carry the group with this communicator
// (gpu_group) and this device (gpu_device) all-gather through it. The membership returned is the
// communicator's one owner (LeaveGpuGroup).
GpuGroupMembership join_gpu_group(const GpuGroup& group, int device);

// One all-gather that follows about 10 ms of a kernel filling every SM of each GPU, as a run's
// follows its force kernel (medians of 7): `alone_seconds` from the kernel's end on the GPU that
// waited for no other until it had every slice; `waited_seconds` on the GPU that waited longest
// (adding the later launches of the others' kernels).
struct AllGatherAfterKernel {
  double alone_seconds = 0;
  double waited_seconds = 0;
};

// One size of an all-gather sweep: `bytes_per_gpu` sent by each GPU, the median time of one
// all-gather back to back, nccl-tests' bus bandwidth, (G - 1) x bytes_per_gpu / seconds (0 on one
// GPU), and the same all-gather after a kernel.
struct AllGatherPoint {
  std::size_t bytes_per_gpu = 0;
  double seconds = 0;
  double bus_bandwidth = 0;
  AllGatherAfterKernel after_kernel;
};

struct AllGatherSweep {
  std::string nccl_version;  // "2.28.3"
  std::vector<AllGatherPoint> points;
};

// ncclAllGather, in place, between `devices` (this process, ncclCommInitAll) at 8 bytes a GPU, then
// eight times more up to 16 MiB, then 64 MiB, back to back and after a kernel: the times the
// scaling model's exchange term is made of. Throws where NCCL or a device is not available (one
// device: NCCL's copy alone).
AllGatherSweep time_all_gather(std::span<const int> devices);

// gpu.all_gather.latency (the sweep's 8-byte time), gpu.all_gather.bus_bandwidth (its best) and
// gpu.all_gather.latency_after_kernel (the 8-byte time alone after a kernel), the sweep in the
// second's method and the third's; all unavailable, with the reason, for fewer than two devices
// or where the sweep fails. Never throws.
CeilingMeasurement measure_all_gather_ceilings(std::span<const int> devices);

}  // namespace nbody::gpu
