#pragma once
// Several GPUs exchanging slices through NCCL (issue 15; gpu/multi_gpu.cu): those one process
// drives (ExecutionOptions::gpu_devices, ncclCommInitAll), or one GPU per rank of mpirun
// (ExecutionOptions::gpu_group, ncclCommInitRank on the id the ranks shared over MPI).
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbody/execution_options.hpp"

namespace nbody::gpu {

// Empty where this build and machine can drive `devices` together (NCCL; distinct, working
// ordinals); otherwise why not.
std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices);

// Empty where this build and machine can put `device` in a group of ranks (NCCL; a working
// ordinal); otherwise why not. Whether the ranks of a host have a GPU each is the caller's to ask.
std::optional<std::string> gpu_group_unavailable_reason(int device);

// NCCL's unique id for a new group of ranks, as opaque bytes: one rank makes it, every rank joins
// with it (GpuGroupMember). Throws where NCCL is not built or fails.
std::vector<std::byte> make_gpu_group_id();

// This process's place in a group of ranks, one GPU each: ncclCommInitRank on `device` as rank
// group.rank of group.size (a collective: every rank of the group constructs one, and waits
// inside for the others). While it lives, runs and simulations whose ExecutionOptions carry this
// group (gpu_group) and this device (gpu_device) all-gather through its communicator; one group
// per process at a time. Destroyed normally, it destroys the communicator (every operation is
// complete by then); destroyed while an exception unwinds, it aborts it (ncclCommAbort), since
// another rank may be missing from an operation and destroying would wait for it.
class GpuGroupMember {
 public:
  GpuGroupMember(const GpuGroup& group, int device);
  ~GpuGroupMember();
  GpuGroupMember(const GpuGroupMember&) = delete;
  GpuGroupMember& operator=(const GpuGroupMember&) = delete;

  struct Joined;  // the group, the device and NCCL's communicator (multi_gpu.cu)

 private:
  std::unique_ptr<Joined> joined_;
};

}  // namespace nbody::gpu
