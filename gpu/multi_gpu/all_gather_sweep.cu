// The all-gather sweep: ncclAllGather in place between the GPUs one process drives, timed at
// sizes from 8 bytes to 64 MiB a GPU, back to back and after a kernel, for the all-gather's
// ceilings (all_gather_ceilings.cpp).
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/cuda_resources.hpp"
#include "nbody/gpu/multi_gpu.hpp"
#include "nbody/steady_clock.hpp"
#include "nccl_communicators.hpp"

namespace nbody::gpu {
namespace {

using Clock = SteadyClock;

// Keeps every SM of a device busy for `passes` sweeps over `words` floats: what a run's
// all-gather follows (a force kernel that filled the SMs and the L2), for the sweep's points after
// a kernel. The sum is written only where it cannot be, so the loads stay.
__global__ void occupy_device(const float* __restrict__ words, std::size_t count, int passes,
                              float* never_written) {
  float sum = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += stride) {
      sum = fmaf(sum, 0.999f, words[i]);
    }
  }
  if (sum == -1.0f) *never_written = sum;
}

// ncclAllGather in place between the devices of one process (time_all_gather): timed back to back
// as nccl-tests does, and alone after about 10 ms of a kernel on every device, as a run's follows
// its force kernel.
class AllGatherTimer {
 public:
  static constexpr std::size_t kLargest = std::size_t{64} << 20;  // bytes a GPU

  explicit AllGatherTimer(const ExecutionOptions& execution) : communicators_(execution) {
    shares_.reserve(communicators_.parts());
    for (const int device : communicators_.devices()) {
      check_cuda(cudaSetDevice(device));
      int sms = 0;
      check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      shares_.push_back({.device = device,
                         .sms = sms,
                         .buffer = DeviceBuffer<float>(parts() * kLargest / sizeof(float))});
      Share& share = shares_.back();
      check_cuda(cudaMemsetAsync(share.buffer.data(), 0, share.buffer.bytes(), share.stream.get()));
    }
    synchronize();
  }

  std::size_t parts() const { return communicators_.parts(); }

  // The median of 5 batches of about 20 ms each (at least 5 all-gathers), after 5 alone.
  double back_to_back(std::size_t bytes) {
    const std::size_t floats = bytes / sizeof(float);
    for (int i = 0; i < 5; ++i) gather(floats);
    synchronize();
    const auto first = Clock::now();
    gather(floats);
    synchronize();
    const double once = std::max(1e-6, seconds_since(first));
    const int repeats = std::clamp(static_cast<int>(0.02 / once), 5, 1000);
    std::array<double, 5> batches{};
    for (double& batch : batches) {
      const auto start = Clock::now();
      for (int i = 0; i < repeats; ++i) gather(floats);
      synchronize();
      batch = seconds_since(start) / repeats;
    }
    return median(batches);
  }

  // The median of 7: each time the kernel is launched on every device in turn (as a run's are),
  // then the all-gather; timed on each device from its kernel's end until it has every slice. The
  // shortest of those is the all-gather alone (that device waited for no other); the longest adds
  // the wait for the device launched last.
  AllGatherAfterKernel after_kernel(std::size_t bytes) {
    const std::size_t floats = bytes / sizeof(float);
    const int passes = occupying_passes();
    std::array<double, 7> alone{};
    std::array<double, 7> waited{};
    for (std::size_t r = 0; r < alone.size(); ++r) {
      for (Share& share : shares_) {
        check_cuda(cudaSetDevice(share.device));
        occupy(share, passes);
        share.kernel_end.record(share.stream);
      }
      gather(floats);
      for (Share& share : shares_) {
        check_cuda(cudaSetDevice(share.device));
        share.gathered.record(share.stream);
      }
      alone[r] = 1e9;
      for (Share& share : shares_) {
        share.gathered.synchronize();
        const double seconds = share.gathered.seconds_since(share.kernel_end);
        alone[r] = std::min(alone[r], seconds);
        waited[r] = std::max(waited[r], seconds);
      }
    }
    return {.alone_seconds = median(alone), .waited_seconds = median(waited)};
  }

 private:
  struct Share {
    int device = 0;
    int sms = 0;  // streaming multiprocessors: the occupying kernel runs 4 blocks on each
    DeviceBuffer<float> buffer;  // every GPU's part, the largest size
    Stream stream{};
    Event kernel_end{}, gathered{};
  };

  template <std::size_t Count>
  static double median(std::array<double, Count> values) {
    std::sort(values.begin(), values.end());
    return values[Count / 2];
  }

  void gather(std::size_t floats) {
    nccl_group([&] {
      for (std::size_t d = 0; d < parts(); ++d) {
        check_cuda(cudaSetDevice(communicators_.devices()[d]));
        float* all = shares_[d].buffer.data();
        check_nccl(ncclAllGather(all + communicators_.part(d) * floats, all, floats, ncclFloat,
                                 communicators_[d], shares_[d].stream.get()));
      }
    });
  }

  void synchronize() {
    for (std::size_t d = 0; d < parts(); ++d) {
      check_cuda(cudaSetDevice(communicators_.devices()[d]));
      shares_[d].stream.synchronize();
    }
  }

  // It reads the buffer the all-gathers write; what it reads does not matter, only that it reads.
  void occupy(Share& share, int passes) {
    occupy_device<<<4 * share.sms, 256, 0, share.stream.get()>>>(
        share.buffer.data(), share.buffer.size(), passes, share.buffer.data());
    check_cuda(cudaGetLastError());
  }

  // Passes over the buffer that take about 10 ms on the first device (timed once).
  int occupying_passes() {
    if (passes_ > 0) return passes_;
    Share& first = shares_.front();
    check_cuda(cudaSetDevice(first.device));
    occupy(first, 1);
    first.stream.synchronize();
    const auto start = Clock::now();
    occupy(first, 4);
    first.stream.synchronize();
    const double pass = std::max(1e-6, seconds_since(start) / 4);
    passes_ = std::clamp(static_cast<int>(0.01 / pass), 1, 100000);
    return passes_;
  }

  NcclCommunicators communicators_;
  std::vector<Share> shares_;  // one per device, in part order
  int passes_ = 0;
};

}  // namespace

AllGatherSweep time_all_gather(std::span<const int> devices) {
  ExecutionOptions execution;
  execution.gpu_devices.assign(devices.begin(), devices.end());
  AllGatherTimer timer(execution);
  AllGatherSweep sweep;
  int version = 0;
  check_nccl(ncclGetVersion(&version));
  sweep.nccl_version = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
                       "." + std::to_string(version % 100);
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 8; bytes <= (std::size_t{16} << 20); bytes *= 8) sizes.push_back(bytes);
  sizes.push_back(AllGatherTimer::kLargest);
  for (const std::size_t bytes : sizes) {
    const double seconds = timer.back_to_back(bytes);
    sweep.points.push_back({.bytes_per_gpu = bytes,
                            .seconds = seconds,
                            .bus_bandwidth = static_cast<double>(timer.parts() - 1) *
                                             static_cast<double>(bytes) / seconds,
                            .after_kernel = timer.after_kernel(bytes)});
  }
  return sweep;
}

}  // namespace nbody::gpu
