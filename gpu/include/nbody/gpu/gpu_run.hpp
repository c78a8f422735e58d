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

template <class T>
class GpuRun final : public PreparedRun {
 public:
  GpuRun(std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
         const ForceKernelFactory<T>& factory)
      : device_(select_device(options.gpu_device)),
        count_(checked_count(bodies.size())),
        kernel_(factory(device_, count_)),
        padded_count_(round_up(count_, kernel_->padding_multiple())),
        host_bodies_(bodies.size()),
        host_accelerations_(bodies.size()),
        device_bodies_(static_cast<std::size_t>(padded_count_)),
        device_accelerations_(static_cast<std::size_t>(padded_count_)),
        softening_squared_(static_cast<T>(softening * softening)) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      host_bodies_[i] = {static_cast<T>(bodies[i].x), static_cast<T>(bodies[i].y),
                         static_cast<T>(bodies[i].z), static_cast<T>(bodies[i].m)};
    }
    // The padding is written once; end-to-end evaluations copy only the real bodies.
    const std::vector<Body<T>> padding(static_cast<std::size_t>(padded_count_ - count_),
                                       Body<T>{0, 0, 0, 0});
    check_cuda(cudaMemcpyAsync(device_bodies_.data() + count_, padding.data(),
                               padding.size() * sizeof(Body<T>), cudaMemcpyHostToDevice,
                               stream_.get()));
    // Kernel scope times the force computation with the inputs already resident.
    copy_bodies_to_device();
    stream_.synchronize();
  }

  Seconds evaluate(Scope scope) override {
    check_cuda(cudaSetDevice(device_.ordinal));
    // Poison (all-ones bytes are NaN in float and double): an element the kernel fails to write
    // fails validation. Outside the timed region.
    check_cuda(cudaMemsetAsync(device_accelerations_.data(), 0xFF, device_accelerations_.bytes(),
                               stream_.get()));
    if (scope == Scope::kernel) {
      kernel_start_.record(stream_);
      kernel_->enqueue(arguments(), stream_.get());
      kernel_stop_.record(stream_);
      kernel_stop_.synchronize();
      accelerations_on_host_ = false;
      return Seconds::kernel_only(kernel_stop_.seconds_since(kernel_start_));
    }
    start_.record(stream_);
    copy_bodies_to_device();
    kernel_start_.record(stream_);
    kernel_->enqueue(arguments(), stream_.get());
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
      check_cuda(cudaSetDevice(device_.ordinal));
      copy_accelerations_to_host();
      stream_.synchronize();
      accelerations_on_host_ = true;
    }
    return promote(
        std::span<const Vec3<T>>(host_accelerations_.data(), host_accelerations_.size()));
  }

  std::map<std::string, std::string> details() const override {
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

  ForceArgs<T> arguments() const {
    return {device_bodies_.data(), device_accelerations_.data(), count_, padded_count_,
            softening_squared_};
  }

  void copy_bodies_to_device() {
    check_cuda(cudaMemcpyAsync(device_bodies_.data(), host_bodies_.data(), host_bodies_.bytes(),
                               cudaMemcpyHostToDevice, stream_.get()));
  }

  void copy_accelerations_to_host() {
    check_cuda(cudaMemcpyAsync(host_accelerations_.data(), device_accelerations_.data(),
                               host_accelerations_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
  }

  DeviceContext device_;
  int count_;
  std::unique_ptr<ForceKernel<T>> kernel_;
  int padded_count_;
  PinnedBuffer<Body<T>> host_bodies_;
  PinnedBuffer<Vec3<T>> host_accelerations_;
  DeviceBuffer<Body<T>> device_bodies_;
  DeviceBuffer<Vec3<T>> device_accelerations_;
  T softening_squared_;
  Stream stream_;
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
            return std::unique_ptr<PreparedRun>(
                std::make_unique<GpuRun<T>>(bodies, softening, options, factory));
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },  // one host thread drives it
      .size_limit_reason = [scratch_bytes = std::move(scratch_bytes)](
                               std::size_t count,
                               const ExecutionOptions& options) -> std::optional<std::string> {
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
            return make_gpu_simulation<T>(setup, factory);
          },
  };
}

}  // namespace nbody::gpu
