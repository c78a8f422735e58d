// A run on several GPUs through NCCL: each device computes the accelerations of its slice of the
// targets from all N sources, and NCCL all-gathers them on device buffers after each force
// evaluation. The devices are those one process drives (`--gpus`), or this rank's one GPU in a
// group of ranks (ExecutionOptions::gpu_group).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "decomposition.cuh"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/steady_clock.hpp"
#include "nccl_communicators.hpp"

namespace nbody::gpu {
namespace {

using Clock = SteadyClock;

// One device's part of a run: its plan for its slice, all N bodies, its slice's accelerations
// and every device's, gathered.
template <class T>
struct RunShare {
  RunShare(std::span<const Body<double>> bodies, double softening, int device,
           const ForceKernelFactory<T>& factory, const TargetRange& slice,
           const EqualSlices& slices)
      : plan(bodies, softening, device, factory, slice),
        bodies(plan.upload_padded(stream)),
        accelerations(
            std::max(static_cast<std::size_t>(plan.padded_target_count()), slices.length)),
        gathered(slices.gathered()) {}

  KernelPlan<T> plan;  // first: it selects the device everything below is made on
  Stream stream;
  DeviceBuffer<Body<T>> bodies;
  DeviceBuffer<Vec3<T>> accelerations;  // at least slices.length: what the all-gather sends
  DeviceBuffer<Vec3<T>> gathered;
  Event start, kernel_start, kernel_stop, gathered_event, stop;
};

template <class T>
class MultiGpuRun final : public PreparedRun {
 public:
  MultiGpuRun(std::span<const Body<double>> bodies, double softening,
              const ExecutionOptions& options, const ForceKernelFactory<T>& factory)
      : communicators_(options),
        slices_(bodies.size(), communicators_.parts()),
        host_accelerations_(bodies.size()) {
    const std::vector<int>& devices = communicators_.devices();
    shares_.reserve(devices.size());
    for (std::size_t d = 0; d < devices.size(); ++d) {
      shares_.push_back(std::make_unique<RunShare<T>>(bodies, softening, devices[d], factory,
                                                      slices_[communicators_.part(d)], slices_));
    }
  }

  Seconds evaluate(Scope scope) override {
    const auto launches_start = Clock::now();
    std::vector<double> host_launches;  // when the host reached each device's kernel
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      // Poison, outside the timed region: an acceleration nobody wrote fails validation.
      check_cuda(cudaMemsetAsync(share->gathered.data(), 0xFF, share->gathered.bytes(),
                                 share->stream.get()));
      share->start.record(share->stream);
      if (scope == Scope::end_to_end) share->plan.upload(share->bodies, share->stream);
      share->kernel_start.record(share->stream);
      host_launches.push_back(seconds_since(launches_start));
      if (share->plan.target_count() > 0) {
        share->plan.kernel().enqueue(share->plan.arguments(share->bodies, share->accelerations),
                                     share->stream.get());
      }
      share->kernel_stop.record(share->stream);
    }
    nccl_group([&] {
      for (std::size_t d = 0; d < shares_.size(); ++d) {
        RunShare<T>& share = *shares_[d];
        check_cuda(cudaSetDevice(share.plan.device().ordinal));
        check_nccl(ncclAllGather(share.accelerations.data(), share.gathered.data(),
                                 3 * slices_.length, nccl_type<T>(), communicators_[d],
                                 share.stream.get()));
      }
    });
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      share->gathered_event.record(share->stream);
    }
    if (scope == Scope::end_to_end) copy_accelerations_to_host();
    for (auto& share : shares_) share->stop.record(share->stream);
    Seconds seconds;
    seconds.communication = std::numeric_limits<double>::infinity();
    for (auto& share : shares_) {
      share->stop.synchronize();
      seconds.kernel =
          std::max(seconds.kernel, share->kernel_stop.seconds_since(share->kernel_start));
      seconds.total = std::max(seconds.total, share->stop.seconds_since(share->start));
      // The all-gather itself: from the end of the kernel that ended last until every slice is
      // everywhere. That device waited for no other, so its time from its kernel's end is the
      // smallest; the others' add their wait for it (a later launch from this one thread, a
      // longer kernel): imbalance, which stays in the total. Measured from each kernel's start
      // instead, the launch offset (35-55 us on two H200s) read as exchange.
      seconds.communication =
          std::min(seconds.communication, share->gathered_event.seconds_since(share->kernel_stop));
    }
    accelerations_on_host_ = scope == Scope::end_to_end;
    trace_exchange(scope, seconds, host_launches);
    return seconds;
  }

  std::vector<Vec3<double>> accelerations() override {
    if (!accelerations_on_host_) {
      copy_accelerations_to_host();
      shares_.front()->stream.synchronize();
      accelerations_on_host_ = true;
    }
    return promote(
        std::span<const Vec3<T>>(host_accelerations_.data(), host_accelerations_.size()));
  }

  void set_bodies(std::span<const Body<double>> bodies) override {
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      share->plan.set_host_bodies(bodies);
      share->plan.upload(share->bodies, share->stream);
      share->stream.synchronize();
    }
  }

  std::map<std::string, std::string> details() const override {
    return decomposition_details(shares_.front()->plan, communicators_, slices_,
                                 "accelerations all-gathered after each evaluation");
  }

 private:
  // NBODY_EXCHANGE_TRACE=1: each evaluation's anatomy on stderr, per device (the host's time to
  // reach its kernel; on its own clock the upload, the kernel, and the time from its kernel's end
  // until it had every slice), for the performance notes' account of the exchange.
  void trace_exchange(Scope scope, const Seconds& seconds,
                      const std::vector<double>& host_launches) const {
    const char* on = std::getenv("NBODY_EXCHANGE_TRACE");
    if (on == nullptr || *on != '1') return;
    std::string line = "exchange: N=" + std::to_string(slices_.count) +
                       (scope == Scope::end_to_end ? " end_to_end" : " kernel");
    char figures[192];
    for (std::size_t d = 0; d < shares_.size(); ++d) {
      const RunShare<T>& share = *shares_[d];
      std::snprintf(figures, sizeof figures,
                    " | gpu %d: host %.1f us, upload %.1f us, kernel %.1f us, to gathered %.1f us",
                    share.plan.device().ordinal, host_launches[d] * 1e6,
                    share.kernel_start.seconds_since(share.start) * 1e6,
                    share.kernel_stop.seconds_since(share.kernel_start) * 1e6,
                    share.gathered_event.seconds_since(share.kernel_stop) * 1e6);
      line += figures;
    }
    std::snprintf(figures, sizeof figures, " | communication %.1f us, total %.1f us",
                  seconds.communication * 1e6, seconds.total * 1e6);
    std::fprintf(stderr, "%s%s\n", line.c_str(), figures);
  }

  // The first device's gathered accelerations (every device holds them all).
  void copy_accelerations_to_host() {
    RunShare<T>& first = *shares_.front();
    check_cuda(cudaSetDevice(first.plan.device().ordinal));
    check_cuda(cudaMemcpyAsync(host_accelerations_.data(), first.gathered.data(),
                               host_accelerations_.bytes(), cudaMemcpyDeviceToHost,
                               first.stream.get()));
  }

  NcclCommunicators communicators_;
  EqualSlices slices_;
  std::vector<std::unique_ptr<RunShare<T>>> shares_;  // one per device, in part order
  PinnedBuffer<Vec3<T>> host_accelerations_;
  bool accelerations_on_host_ = false;
};

}  // namespace

template <class T>
std::unique_ptr<PreparedRun> make_multi_gpu_run(std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                const ForceKernelFactory<T>& factory) {
  return std::make_unique<MultiGpuRun<T>>(bodies, softening, options, factory);
}

template std::unique_ptr<PreparedRun> make_multi_gpu_run<float>(std::span<const Body<double>>,
                                                                double, const ExecutionOptions&,
                                                                const ForceKernelFactory<float>&);
template std::unique_ptr<PreparedRun> make_multi_gpu_run<double>(std::span<const Body<double>>,
                                                                 double, const ExecutionOptions&,
                                                                 const ForceKernelFactory<double>&);

}  // namespace nbody::gpu
