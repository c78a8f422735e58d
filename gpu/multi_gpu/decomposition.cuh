#pragma once
// How the several-GPU run and simulation divide the bodies between the devices of an exchange:
// equal slices of the targets, and the details that say so.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>

#include "nbody/gpu/gpu_run.hpp"
#include "nbody/target_range.hpp"
#include "nccl_communicators.hpp"

namespace nbody::gpu {

// The bodies each device computes: ceil(n / devices) each, the last ones fewer (or none).
struct EqualSlices {
  EqualSlices(std::size_t n, std::size_t devices)
      : length((n + devices - 1) / devices), count(n), parts(devices) {}
  TargetRange operator[](std::size_t part) const {
    return {std::min(count, part * length), std::min(count, (part + 1) * length)};
  }
  std::size_t gathered() const { return length * parts; }  // entries an all-gather fills

  std::size_t length;
  std::size_t count;
  std::size_t parts;
};

// The details a run and a simulation share: the first device's plan, then the decomposition,
// `gathered` saying what the all-gather carries and when.
template <class T>
std::map<std::string, std::string> decomposition_details(const KernelPlan<T>& first,
                                                         const NcclCommunicators& communicators,
                                                         const EqualSlices& slices,
                                                         const char* gathered) {
  std::map<std::string, std::string> details = first.details();
  details.erase("targets");
  details["gpus"] = describe_devices(communicators.devices());
  details["gpu_count"] = std::to_string(communicators.parts());
  details["bodies_per_gpu"] = std::to_string(slices.length);
  if (communicators.over_ranks()) {
    details["decomposition"] =
        std::string("target range over the ranks, one GPU each, ") + gathered + " (NCCL)";
    details["exchange"] =
        "ncclAllGather on device buffers, between the ranks' GPUs (ncclCommInitRank)";
  } else {
    details["decomposition"] =
        std::string("target range over the GPUs of this process, ") + gathered + " (NCCL)";
    details["exchange"] =
        "ncclAllGather on device buffers, between the GPUs of this process (ncclCommInitAll)";
  }
  return details;
}

}  // namespace nbody::gpu
