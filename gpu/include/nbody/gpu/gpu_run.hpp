#pragma once
// Generic plumbing for GPU formulations, the counterpart of cpu/include/nbody/cpu/cpu_run.hpp: a
// formulation's own file holds only its kernel, its launch plan (a ForceKernel) and its
// registration; GpuRun does the rounding, padding, device residency, timing and copies.
#include <climits>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "nbody/bodies.hpp"
#include "nbody/gpu/cuda_check.hpp"
#include "nbody/gpu/cuda_resources.hpp"
#include "nbody/gpu/device_math.cuh"
#include "nbody/gpu/device_query.hpp"
#include "nbody/registry.hpp"

namespace nbody::gpu {

// What a kernel gets. Bodies are padded with zero-mass bodies at the origin up to a multiple the
// kernel chooses, so kernels need no tail code: with softening > 0 (required by the j = i term
// anyway) a zero-mass body contributes exactly zero.
template <class T>
struct ForceArgs {
  const Body<T>* bodies;   // padded_count bodies, on the device
  Vec3<T>* accelerations;  // padded_count entries, on the device; [0, count) must be written
  int count;               // real bodies
  int padded_count;
  T softening_squared;
};

// The leapfrog fused into a force kernel's store (ForceKernel::fuses_leapfrog): once body i's
// acceleration a is final, its closing half kick v += a dt/2 and, unless `next_bodies` is null (a
// run's last step), the next step's opening half kick and drift, written to the other position
// buffer (other blocks still read this step's positions). Arithmetic of store_with_leapfrog.
template <class T>
struct LeapfrogArgs {
  Vec3<T>* velocities = nullptr;  // count entries, on the device; null: no integration
  Body<T>* next_bodies = nullptr;
  T half_dt = 0;
  T dt = 0;
};

// The launch configuration, as a reader of the results needs it (PreparedRun::details).
struct LaunchDescription {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  int bodies_per_thread = 1;
  int threads_per_body = 1;
  std::size_t shared_memory_bytes = 0;
  std::map<std::string, std::string> extra;  // facts particular to the formulation
};

// One formulation's launch plan for one body count, decided at prepare time.
template <class T>
class ForceKernel {
 public:
  virtual ~ForceKernel() = default;
  // Bodies are padded to a multiple of this.
  virtual int padding_multiple() const = 0;
  // Enqueues one force evaluation on `stream` (everything it needs, e.g. zeroing for atomics, is
  // part of it and timed with it) and checks the launch.
  virtual void enqueue(const ForceArgs<T>& args, cudaStream_t stream) = 0;
  virtual LaunchDescription describe() const = 0;
  // Whether enqueue_with_leapfrog integrates in the kernel's store (one launch per step);
  // otherwise the simulation launches kick and drift kernels around enqueue.
  virtual bool fuses_leapfrog() const { return false; }
  virtual void enqueue_with_leapfrog(const ForceArgs<T>& args, const LeapfrogArgs<T>& leapfrog,
                                     cudaStream_t stream) {
    static_cast<void>(args);
    static_cast<void>(leapfrog);
    static_cast<void>(stream);
    throw std::logic_error("this force kernel does not fuse the leapfrog");
  }
};

template <class T>
using ForceKernelFactory =
    std::function<std::unique_ptr<ForceKernel<T>>(const DeviceContext& device, int count)>;

inline int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

inline std::string to_string(const dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

// Largest body count the int-indexed kernels accept (padding included).
inline constexpr std::size_t kMaxBodies = std::size_t{1} << 30;

// What a run and a simulation of one formulation on one device share: the device, the body count,
// the formulation's launch plan for it, the padding the plan asks for and the bodies rounded to T.
template <class T>
class KernelPlan {
 public:
  KernelPlan(std::span<const Body<double>> bodies, double softening, int gpu_device,
             const ForceKernelFactory<T>& factory)
      : device_(select_device(gpu_device)),
        count_(checked_count(bodies.size())),  // before the factory sees the count
        kernel_(factory(device_, count_)),
        padded_count_(round_up(count_, kernel_->padding_multiple())),
        host_bodies_(bodies.size()),
        softening_squared_(static_cast<T>(softening * softening)) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      host_bodies_[i] = {static_cast<T>(bodies[i].x), static_cast<T>(bodies[i].y),
                         static_cast<T>(bodies[i].z), static_cast<T>(bodies[i].m)};
    }
  }

  const DeviceContext& device() const { return device_; }
  int count() const { return count_; }
  int padded_count() const { return padded_count_; }
  ForceKernel<T>& kernel() const { return *kernel_; }
  // The bodies in T, pinned: the source of every upload, and a staging area for downloads.
  PinnedBuffer<Body<T>>& host_bodies() { return host_bodies_; }

  ForceArgs<T> arguments(const DeviceBuffer<Body<T>>& bodies,
                         const DeviceBuffer<Vec3<T>>& accelerations) const {
    return {bodies.data(), accelerations.data(), count_, padded_count_, softening_squared_};
  }

  // A device buffer of padded_count bodies: the real ones from host_bodies(), then the padding
  // (zero mass at the origin, written once: the kernels never move it).
  DeviceBuffer<Body<T>> upload_padded(const Stream& stream) {
    DeviceBuffer<Body<T>> bodies(static_cast<std::size_t>(padded_count_));
    const std::vector<Body<T>> padding(static_cast<std::size_t>(padded_count_ - count_),
                                       Body<T>{0, 0, 0, 0});
    check_cuda(cudaMemcpyAsync(bodies.data() + count_, padding.data(),
                               padding.size() * sizeof(Body<T>), cudaMemcpyHostToDevice,
                               stream.get()));
    upload(bodies, stream);
    stream.synchronize();  // `padding` is a pageable temporary
    return bodies;
  }

  // host_bodies() into the real bodies of `bodies`.
  void upload(const DeviceBuffer<Body<T>>& bodies, const Stream& stream) {
    check_cuda(cudaMemcpyAsync(bodies.data(), host_bodies_.data(), host_bodies_.bytes(),
                               cudaMemcpyHostToDevice, stream.get()));
  }

  // The launch and the device, as details() reports them.
  std::map<std::string, std::string> details() const {
    const LaunchDescription launch = kernel_->describe();
    std::map<std::string, std::string> details = launch.extra;
    details["device"] = device_.properties.name;
    details["device_ordinal"] = std::to_string(device_.ordinal);
    details["sm_count"] = std::to_string(device_.properties.multiProcessorCount);
    details["grid"] = to_string(launch.grid);
    details["block"] = to_string(launch.block);
    details["bodies_per_thread"] = std::to_string(launch.bodies_per_thread);
    details["threads_per_body"] = std::to_string(launch.threads_per_body);
    details["shared_memory_bytes"] = std::to_string(launch.shared_memory_bytes);
    details["padded_bodies"] = std::to_string(padded_count_);
    return details;
  }

 private:
  static int checked_count(std::size_t count) {
    if (count == 0 || count > kMaxBodies) {
      throw std::invalid_argument("GPU formulations take 1 to 2^30 bodies, not " +
                                  std::to_string(count));
    }
    return static_cast<int>(count);
  }

  DeviceContext device_;
  int count_;
  std::unique_ptr<ForceKernel<T>> kernel_;
  int padded_count_;
  PinnedBuffer<Body<T>> host_bodies_;
  T softening_squared_;
};

template <class T>
class GpuRun final : public PreparedRun {
 public:
  GpuRun(std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
         const ForceKernelFactory<T>& factory)
      : plan_(bodies, softening, options.gpu_device, factory),
        device_bodies_(plan_.upload_padded(stream_)),  // kernel scope finds the inputs resident
        host_accelerations_(bodies.size()),
        device_accelerations_(static_cast<std::size_t>(plan_.padded_count())) {}

  Seconds evaluate(Scope scope) override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    // Poison (all-ones bytes are NaN in float and double): an element the kernel fails to write
    // fails validation. Outside the timed region.
    check_cuda(cudaMemsetAsync(device_accelerations_.data(), 0xFF, device_accelerations_.bytes(),
                               stream_.get()));
    const ForceArgs<T> args = plan_.arguments(device_bodies_, device_accelerations_);
    if (scope == Scope::kernel) {
      kernel_start_.record(stream_);
      plan_.kernel().enqueue(args, stream_.get());
      kernel_stop_.record(stream_);
      kernel_stop_.synchronize();
      accelerations_on_host_ = false;
      return Seconds::kernel_only(kernel_stop_.seconds_since(kernel_start_));
    }
    start_.record(stream_);
    plan_.upload(device_bodies_, stream_);
    kernel_start_.record(stream_);
    plan_.kernel().enqueue(args, stream_.get());
    kernel_stop_.record(stream_);
    copy_accelerations_to_host();
    stop_.record(stream_);
    stop_.synchronize();
    accelerations_on_host_ = true;
    return {.total = stop_.seconds_since(start_),
            .kernel = kernel_stop_.seconds_since(kernel_start_)};
  }

  std::vector<Vec3<double>> accelerations() override {
    if (!accelerations_on_host_) {
      check_cuda(cudaSetDevice(plan_.device().ordinal));
      copy_accelerations_to_host();
      stream_.synchronize();
      accelerations_on_host_ = true;
    }
    return promote(
        std::span<const Vec3<T>>(host_accelerations_.data(), host_accelerations_.size()));
  }

  std::map<std::string, std::string> details() const override { return plan_.details(); }

 private:
  void copy_accelerations_to_host() {
    check_cuda(cudaMemcpyAsync(host_accelerations_.data(), device_accelerations_.data(),
                               host_accelerations_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
  }

  KernelPlan<T> plan_;  // first: it selects the device the stream and buffers are made on
  Stream stream_;
  DeviceBuffer<Body<T>> device_bodies_;
  PinnedBuffer<Vec3<T>> host_accelerations_;
  DeviceBuffer<Vec3<T>> device_accelerations_;
  Event start_;
  Event kernel_start_;
  Event kernel_stop_;
  Event stop_;
  bool accelerations_on_host_ = false;
};

// The formulation's time integration on the device (gpu_simulation.cu; float and double).
template <class T>
std::unique_ptr<Simulation> make_gpu_simulation(const SimulationSetup& setup,
                                                const ForceKernelFactory<T>& factory);

// Device bytes a run of `count` bodies needs beyond the bodies and accelerations (scratch).
using ScratchBytes = std::function<std::size_t(std::size_t count)>;

// GPU runs compute every body; a slice of targets (decomposition over devices) is not there yet.
inline constexpr const char* kTargetRangeRefusal =
    "GPU formulations do not take a target range (decomposition) yet";

// An Implementation around a kernel factory: availability and memory checks, prepare, threads.
template <class T>
Implementation make_gpu_implementation(ImplementationInfo info, ForceKernelFactory<T> factory,
                                       ScratchBytes scratch_bytes = {}) {
  info.device = DeviceKind::gpu;
  // Host memory per body: pinned bodies and accelerations, and the promoted copy returned.
  info.bytes_per_body = sizeof(Body<T>) + sizeof(Vec3<T>) + sizeof(Vec3<double>);
  return {
      .info = std::move(info),
      // The registry asks without options: device 0 answers whether this machine has a GPU;
      // size_limit_reason checks the ordinal actually requested.
      .unavailable_reason = [] { return device_unavailable_reason(0); },
      .prepare =
          [factory](std::span<const Body<double>> bodies, double softening,
                    const ExecutionOptions& options) {
            if (is_partial(options.targets, bodies.size())) {
              throw std::invalid_argument(kTargetRangeRefusal);
            }
            return std::unique_ptr<PreparedRun>(
                std::make_unique<GpuRun<T>>(bodies, softening, options, factory));
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },  // one host thread drives it
      .size_limit_reason = [scratch_bytes = std::move(scratch_bytes)](
                               std::size_t count,
                               const ExecutionOptions& options) -> std::optional<std::string> {
        if (is_partial(options.targets, count)) return kTargetRangeRefusal;
        if (count > kMaxBodies) {
          return "GPU formulations index bodies with int: at most 2^30 bodies";
        }
        // Padding adds at most a few thousand bodies.
        const std::size_t padded = count + 4096;
        const std::size_t bytes = padded * (sizeof(Body<T>) + sizeof(Vec3<T>)) +
                                  (scratch_bytes ? scratch_bytes(count) : 0);
        return device_memory_limit_reason(options.gpu_device, bytes);
      },
      .simulate =
          [factory](const SimulationSetup& setup) {
            if (is_partial(setup.execution.targets, setup.bodies.size())) {
              throw std::invalid_argument(kTargetRangeRefusal);
            }
            return make_gpu_simulation<T>(setup, factory);
          },
  };
}

}  // namespace nbody::gpu
