// NCCL's communicators: those one process makes for the GPUs it drives (ncclCommInitAll), and
// this rank's in a group of ranks (ncclCommInitRank, join_gpu_group), each with one owner; and
// whether a list of GPUs or a group can be driven at all. Built only where NCCL is found
// (without_nccl.cpp otherwise).
#include "nccl_communicators.hpp"

#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/device_query.hpp"
#include "nbody/gpu/multi_gpu.hpp"

namespace nbody {

void LeaveGpuGroup::operator()(GpuGroupCommunicator* communicator) const noexcept {
  if (communicator == nullptr) return;
  if (std::uncaught_exceptions() > 0) communicator->comm.abort();
  delete communicator;  // destroys the communicator, unless aborted
}

}  // namespace nbody

namespace nbody::gpu {

void check_nccl(ncclResult_t status, std::source_location where) {
  if (status == ncclSuccess) return;
  std::string message = std::string("NCCL error: ") + ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
    message += std::string(" (") + last + ")";
  }
  throw CudaError(message + " (at " + where.file_name() + ":" + std::to_string(where.line()) + ")");
}

std::string describe_devices(std::span<const int> devices) {
  std::string text;
  for (const int device : devices) {
    if (!text.empty()) text += ",";
    text += std::to_string(device);
  }
  return text;
}

NcclCommunicators::NcclCommunicators(const ExecutionOptions& options) {
  if (options.gpu_group) {
    borrow_group(options);
  } else {
    init_all(options);
  }
}

// This rank's one device and the group's communicator, which the options carry for a process that
// joined the group on that device.
void NcclCommunicators::borrow_group(const ExecutionOptions& options) {
  if (!options.gpu_devices.empty()) {
    throw std::invalid_argument("a GPU group of ranks drives one GPU per rank, not a list");
  }
  const GpuGroupCommunicator* joined = options.gpu_group->communicator;
  if (joined == nullptr || joined->rank != options.gpu_group->rank ||
      joined->size != options.gpu_group->size || joined->device != options.gpu_device) {
    // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "..." + std::string + ...
    std::string message = "this process is not in the GPU group of rank ";
    message += std::to_string(options.gpu_group->rank);
    message += " of ";
    message += std::to_string(options.gpu_group->size);
    message += " on CUDA device ";
    message += std::to_string(options.gpu_device);
    message += " (join_gpu_group joins it)";
    throw std::invalid_argument(message);
  }
  devices_ = {options.gpu_device};
  comms_ = {joined->comm.get()};
  first_part_ = static_cast<std::size_t>(joined->rank);
  parts_ = static_cast<std::size_t>(joined->size);
  over_ranks_ = true;
}

// One communicator per device listed, made together and owned here.
void NcclCommunicators::init_all(const ExecutionOptions& options) {
  if (auto reason = multi_gpu_unavailable_reason(options.gpu_devices)) {
    throw std::invalid_argument(*reason);
  }
  devices_ = options.gpu_devices;
  parts_ = devices_.size();
  comms_.assign(devices_.size(), nullptr);
  owned_.reserve(devices_.size());  // before NCCL makes them: nothing throws between
  check_nccl(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()));
  for (ncclComm_t comm : comms_) owned_.emplace_back(comm);
}

std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices) {
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size()) {
    return "a GPU listed twice (" + describe_devices(devices) + ")";
  }
  for (const int device : devices) {
    if (auto reason = device_unavailable_reason(device)) return reason;
  }
  return std::nullopt;
}

std::optional<std::string> gpu_group_unavailable_reason(int device) {
  return device_unavailable_reason(device);
}

std::vector<std::byte> make_gpu_group_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id));
  std::vector<std::byte> bytes(sizeof id);
  std::memcpy(bytes.data(), &id, sizeof id);
  return bytes;
}

GpuGroupMembership join_gpu_group(const GpuGroup& group, int device) {
  if (group.id.size() != sizeof(ncclUniqueId)) {
    std::string message = "a GPU group's id is ";
    message += std::to_string(group.id.size());
    message += " bytes, not NCCL's ";
    message += std::to_string(sizeof(ncclUniqueId));
    throw std::invalid_argument(message);
  }
  if (group.size < 1 || group.rank < 0 || group.rank >= group.size) {
    std::string message = "rank ";
    message += std::to_string(group.rank);
    message += " of a GPU group of ";
    message += std::to_string(group.size);
    message += ": no such rank";
    throw std::invalid_argument(message);
  }
  ncclUniqueId id;
  std::memcpy(&id, group.id.data(), sizeof id);
  check_cuda(cudaSetDevice(device));
  GpuGroupMembership membership(
      new GpuGroupCommunicator{.rank = group.rank, .size = group.size, .device = device});
  ncclComm_t comm = nullptr;
  const ncclResult_t status = ncclCommInitRank(&comm, group.size, id, group.rank);
  // Owned from here on, even where NCCL made it and then failed: a communicator NCCL made is
  // ended once, by the membership alone.
  membership->comm = NcclComm(comm);
  check_nccl(status);
  return membership;
}

}  // namespace nbody::gpu
