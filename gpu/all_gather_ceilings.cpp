// The all-gather's ceilings between the GPUs a run drives: the alpha and beta of the
// scaling model, measured rather than taken from a datasheet (docs/perf-notes.md).
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "nbody/gpu/multi_gpu.hpp"

namespace nbody::gpu {
namespace {

// 8 B, 4 KiB, 64 MiB: the sweep's sizes are powers of two.
std::string binary_size(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

}  // namespace

CeilingMeasurement measure_all_gather_ceilings(std::span<const int> devices) {
  CeilingMeasurement measured;
  const auto unavailable = [&measured](const std::string& why) {
    for (const char* name : {kGpuAllGatherLatencyCeiling, kGpuAllGatherBandwidthCeiling,
                             kGpuAllGatherLatencyAfterKernelCeiling}) {
      measured.unavailable.push_back({name, why});
    }
    return measured;
  };
  if (devices.size() < 2) {
    return unavailable("an all-gather between GPUs needs two of them or more");
  }
  AllGatherSweep sweep;
  try {
    sweep = time_all_gather(devices);
  } catch (const std::exception& e) {
    return unavailable(e.what());
  }
  if (sweep.points.empty()) return unavailable("the sweep timed nothing");
  std::string points;
  std::string after_kernel;
  for (const AllGatherPoint& p : sweep.points) {
    points += fmt::format("{}{}: {:.3g} µs, {:.3g} GB/s", points.empty() ? "" : "; ",
                          binary_size(p.bytes_per_gpu), p.seconds * 1e6, p.bus_bandwidth * 1e-9);
    after_kernel +=
        fmt::format("{}{}: {:.3g} µs alone, {:.3g} µs waited", after_kernel.empty() ? "" : "; ",
                    binary_size(p.bytes_per_gpu), p.after_kernel.alone_seconds * 1e6,
                    p.after_kernel.waited_seconds * 1e6);
  }
  std::string gpus;
  for (const int device : devices) {
    if (!gpus.empty()) gpus += ',';  // piecewise: GCC 12 warns (-Wrestrict, falsely) on "," + str
    gpus += std::to_string(device);
  }
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  const std::string how = fmt::format(
      "ncclAllGather in place between GPUs {} (one process, ncclCommInitAll; NCCL {}, "
      "NCCL_NVLS_ENABLE={}), back to back, the median of 5 batches of about 20 ms per size",
      gpus, sweep.nccl_version, nvls != nullptr ? nvls : "unset");
  const auto best = std::max_element(sweep.points.begin(), sweep.points.end(),
                                     [](const AllGatherPoint& a, const AllGatherPoint& b) {
                                       return a.bus_bandwidth < b.bus_bandwidth;
                                     });
  const std::string note =
      "no datasheet figure: it depends on the links (NVLink, PCIe) and NCCL's transport";
  measured.entries.push_back(
      {.name = kGpuAllGatherLatencyCeiling,
       .device = DeviceKind::gpu,
       .quantity = fmt::format("all-gather time at 8 bytes a GPU, {} GPUs", devices.size()),
       .value = sweep.points.front().seconds,
       .unit = "s",
       .method = how + "; the sweep's 8-byte time (the sweep: gpu.all_gather.bus_bandwidth)",
       .datasheet_note = note});
  measured.entries.push_back(
      {.name = kGpuAllGatherBandwidthCeiling,
       .device = DeviceKind::gpu,
       .quantity = fmt::format("all-gather bus bandwidth, {} GPUs (best at {} a GPU)",
                               devices.size(), binary_size(best->bytes_per_gpu)),
       .value = best->bus_bandwidth,
       .unit = "B/s",
       .method = how + "; bus bandwidth = (G - 1) x bytes a GPU / time, as nccl-tests reports " +
                 "it, the best of the sweep. Sweep (bytes a GPU): " + points,
       .datasheet_note = note});
  measured.entries.push_back(
      {.name = kGpuAllGatherLatencyAfterKernelCeiling,
       .device = DeviceKind::gpu,
       .quantity =
           fmt::format("all-gather time at 8 bytes a GPU after a kernel, {} GPUs", devices.size()),
       .value = sweep.points.front().after_kernel.alone_seconds,
       .unit = "s",
       .method = fmt::format(
           "ncclAllGather between GPUs {} (NCCL {}) after about 10 ms of a kernel reading "
           "memory on every SM of each GPU, launched on each in turn as a run's force kernels "
           "are; timed on each GPU from its kernel's end until it had every slice, the median "
           "of 7: alone on the GPU that waited for no other, waited on the one that waited "
           "longest. The run's exchange pays this, not the back-to-back time. Sweep (bytes a "
           "GPU): {}",
           gpus, sweep.nccl_version, after_kernel),
       .datasheet_note = note});
  return measured;
}

}  // namespace nbody::gpu
