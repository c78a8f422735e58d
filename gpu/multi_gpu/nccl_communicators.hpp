#pragma once
// What the several-GPU run, simulation and all-gather sweep share, where NCCL is built: NCCL's
// errors as exceptions, one owner per NCCL communicator, and the communicators of the devices an
// exchange drives. Private to gpu/ (only these files see nccl.h); host code, no CUDA syntax.
#include <cstddef>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nccl.h>

#include "nbody/execution_options.hpp"

namespace nbody::gpu {

// The one place NCCL's results become exceptions, as check_cuda does for CUDA's, with what NCCL
// said of its last error on this thread ("corrupted comm object detected").
void check_nccl(ncclResult_t status, std::source_location where = std::source_location::current());

template <class T>
ncclDataType_t nccl_type() {
  return std::is_same_v<T, float> ? ncclFloat : ncclDouble;
}

// Owns one NCCL communicator: destroyed with its owner, once its operations are complete, unless
// aborted first (abort: where one of them may never complete, and destroying would wait for it).
class NcclComm {
 public:
  NcclComm() = default;
  explicit NcclComm(ncclComm_t comm) noexcept : comm_(comm) {}
  NcclComm(NcclComm&& other) noexcept : comm_(std::exchange(other.comm_, nullptr)) {}
  NcclComm& operator=(NcclComm&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ~NcclComm() {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }

  void abort() noexcept {
    if (comm_ != nullptr) ncclCommAbort(std::exchange(comm_, nullptr));
  }
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

// "0,1": the devices' ordinals, as the details name them.
std::string describe_devices(std::span<const int> devices);

// NCCL's communicators of the devices this process drives in an exchange, in the order of their
// parts (slices): one per device listed, its own (ncclCommInitAll: parts 0 to G - 1 of G, destroyed
// with it), or this rank's one device in the group of ranks the process joined (part `rank` of
// `size`, borrowed from the options' GpuGroup, whose membership owns it). A part is its
// communicator's NCCL rank, so an all-gather puts slice p at p times the slice's length.
class NcclCommunicators {
 public:
  explicit NcclCommunicators(const ExecutionOptions& options);

  // This process's devices, in the order of their parts.
  const std::vector<int>& devices() const { return devices_; }
  std::size_t part(std::size_t device) const { return first_part_ + device; }
  std::size_t parts() const { return parts_; }
  // Whether the other parts are other ranks' (a group of ranks).
  bool over_ranks() const { return over_ranks_; }
  ncclComm_t operator[](std::size_t device) const { return comms_[device]; }

 private:
  void borrow_group(const ExecutionOptions& options);
  void init_all(const ExecutionOptions& options);

  std::vector<int> devices_;
  std::vector<NcclComm> owned_;    // ncclCommInitAll's, destroyed with this; none in a group
  std::vector<ncclComm_t> comms_;  // one per device: the owned ones, or the group's
  std::size_t first_part_ = 0;
  std::size_t parts_ = 0;
  bool over_ranks_ = false;
};

// NCCL calls for several devices from one thread are one group (ncclGroupStart/End around them):
// each call alone would wait for the other devices' calls.
template <class Calls>
void nccl_group(Calls&& calls) {
  check_nccl(ncclGroupStart());
  try {
    calls();
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  check_nccl(ncclGroupEnd());
}

}  // namespace nbody::gpu

namespace nbody {

// This rank's communicator in a group of ranks (join_gpu_group): its place and device, and NCCL's
// communicator, which LeaveGpuGroup ends.
struct GpuGroupCommunicator {
  int rank = 0;
  int size = 1;
  int device = 0;
  gpu::NcclComm comm;
};

}  // namespace nbody
