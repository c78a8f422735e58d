#pragma once
// Generic plumbing for GPU formulations, the counterpart of cpu/include/nbody/cpu/cpu_run.hpp: a
// formulation's own file holds only its kernel, its launch plan (a ForceKernel) and its
// registration; GpuRun does the rounding, padding, device residency, timing and copies.
#include <algorithm>
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
#include "nbody/gpu/multi_gpu.hpp"
#include "nbody/registry.hpp"
#include "nbody/target_range.hpp"

namespace nbody::gpu {

// What a kernel gets. Bodies are padded with zero-mass bodies at the origin up to a multiple the
// kernel chooses, so kernels need no tail code: with softening > 0 (required by the j = i term
// anyway) a zero-mass body contributes exactly zero. The kernel computes the accelerations of the
// targets, bodies [first_target, first_target + target_count): all of them, or a decomposition's
// slice, from all `count` sources. The padding covers first_target +
// padded_target_count too, so a kernel reads its padded targets without a bound check.
template <class T>
struct ForceArgs {
  const Body<T>* bodies;   // padded_count bodies (the sources), on the device
  Vec3<T>* accelerations;  // padded_target_count entries, on the device: [k] is the acceleration of
                           // body first_target + k; [0, target_count) must be written
  int count;               // real bodies
  int padded_count;
  int first_target;
  int target_count;
  int padded_target_count;  // a multiple of the kernel's padding, like padded_count
  T softening_squared;
};

// The leapfrog fused into a force kernel's store (ForceKernel::fuses_leapfrog): once body i's
// acceleration a is final, its closing half kick v += a dt/2 and, unless `next_bodies` is null (a
// run's last step), the next step's opening half kick and drift, written to the other position
// buffer (other blocks still read this step's positions). Arithmetic of store_with_leapfrog.
template <class T>
struct LeapfrogArgs {
  Vec3<T>* velocities = nullptr;  // target_count entries, on the device; null: no integration
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

// The kernel's plan for `count` bodies of which it computes `target_count` (at least 1; all of them
// unless decomposed).
template <class T>
using ForceKernelFactory = std::function<std::unique_ptr<ForceKernel<T>>(
    const DeviceContext& device, int count, int target_count)>;

inline int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

inline std::string to_string(const dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

// Largest body count the int-indexed kernels accept (padding included).
inline constexpr std::size_t kMaxBodies = std::size_t{1} << 30;

// What a run and a simulation of one formulation on one device share: the device, the body count,
// its targets (all bodies, or a decomposition's slice), the formulation's launch plan for them, the
// padding the plan asks for and the bodies rounded to T.
template <class T>
class KernelPlan {
 public:
  KernelPlan(std::span<const Body<double>> bodies, double softening, int gpu_device,
             const ForceKernelFactory<T>& factory, const std::optional<TargetRange>& targets = {})
      : device_(select_device(gpu_device)),
        count_(checked_count(bodies.size())),  // before the factory sees the count
        targets_(resolve_targets(targets, bodies.size())),
        // A slice without bodies (more ranks than bodies) launches nothing; its plan is for one.
        kernel_(factory(device_, count_, std::max(1, target_count()))),
        padded_target_count_(round_up(target_count(), kernel_->padding_multiple())),
        padded_count_(round_up(std::max(count_, first_target() + padded_target_count_),
                               kernel_->padding_multiple())),
        host_bodies_(bodies.size()),
        softening_squared_(static_cast<T>(softening * softening)) {
    set_host_bodies(bodies);
  }

  // `bodies` (the same count) rounded to T into host_bodies().
  void set_host_bodies(std::span<const Body<double>> bodies) {
    if (bodies.size() != host_bodies_.size()) {
      throw std::invalid_argument("the bodies changed count: " + std::to_string(bodies.size()) +
                                  " instead of " + std::to_string(host_bodies_.size()));
    }
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      host_bodies_[i] = {static_cast<T>(bodies[i].x), static_cast<T>(bodies[i].y),
                         static_cast<T>(bodies[i].z), static_cast<T>(bodies[i].m)};
    }
  }

  const DeviceContext& device() const { return device_; }
  int count() const { return count_; }
  int padded_count() const { return padded_count_; }
  int first_target() const { return static_cast<int>(targets_.begin); }
  int target_count() const { return static_cast<int>(targets_.size()); }
  int padded_target_count() const { return padded_target_count_; }
  const TargetRange& targets() const { return targets_; }
  ForceKernel<T>& kernel() const { return *kernel_; }
  // The bodies in T, pinned: the source of every upload, and a staging area for downloads.
  PinnedBuffer<Body<T>>& host_bodies() { return host_bodies_; }

  ForceArgs<T> arguments(const DeviceBuffer<Body<T>>& bodies,
                         const DeviceBuffer<Vec3<T>>& accelerations) const {
    return {.bodies = bodies.data(),
            .accelerations = accelerations.data(),
            .count = count_,
            .padded_count = padded_count_,
            .first_target = first_target(),
            .target_count = target_count(),
            .padded_target_count = padded_target_count_,
            .softening_squared = softening_squared_};
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
    if (targets_.size() != static_cast<std::size_t>(count_)) {
      // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "[" + std::string + ...
      std::string range = "[";
      range += std::to_string(targets_.begin);
      range += ", ";
      range += std::to_string(targets_.end);
      range += ") of ";
      range += std::to_string(count_);
      details["targets"] = range;
    }
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
  TargetRange targets_;
  std::unique_ptr<ForceKernel<T>> kernel_;
  int padded_target_count_;
  int padded_count_;
  PinnedBuffer<Body<T>> host_bodies_;
  T softening_squared_;
};

template <class T>
class GpuRun final : public PreparedRun {
 public:
  GpuRun(std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
         const ForceKernelFactory<T>& factory)
      : plan_(bodies, softening, options.gpu_device, factory, options.targets),
        device_bodies_(plan_.upload_padded(stream_)),  // kernel scope finds the inputs resident
        host_accelerations_(static_cast<std::size_t>(plan_.target_count())),
        device_accelerations_(static_cast<std::size_t>(plan_.padded_target_count())) {}

  Seconds evaluate(Scope scope) override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    // Poison (all-ones bytes are NaN in float and double): an element the kernel fails to write
    // fails validation. Outside the timed region.
    check_cuda(cudaMemsetAsync(device_accelerations_.data(), 0xFF, device_accelerations_.bytes(),
                               stream_.get()));
    const ForceArgs<T> args = plan_.arguments(device_bodies_, device_accelerations_);
    if (scope == Scope::kernel) {
      kernel_start_.record(stream_);
      enqueue(args);
      kernel_stop_.record(stream_);
      kernel_stop_.synchronize();
      accelerations_on_host_ = false;
      return Seconds::kernel_only(kernel_stop_.seconds_since(kernel_start_));
    }
    start_.record(stream_);
    plan_.upload(device_bodies_, stream_);
    kernel_start_.record(stream_);
    enqueue(args);
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

  // Decomposed over ranks, the bodies of the next step (DecomposedSimulation): uploaded now, as
  // the contract asks, outside any timing.
  void set_bodies(std::span<const Body<double>> bodies) override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    plan_.set_host_bodies(bodies);
    plan_.upload(device_bodies_, stream_);
    stream_.synchronize();
  }

  std::map<std::string, std::string> details() const override { return plan_.details(); }

 private:
  // A slice without targets (more ranks than bodies) has nothing to launch.
  void enqueue(const ForceArgs<T>& args) {
    if (args.target_count > 0) plan_.kernel().enqueue(args, stream_.get());
  }

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

// Several GPUs through NCCL: those of this process (ExecutionOptions::gpu_devices), or one GPU per
// rank of a group of ranks (ExecutionOptions::gpu_group). Each computes a slice of the targets,
// and NCCL all-gathers the accelerations after a force evaluation (gpu/multi_gpu/multi_gpu_run.cu),
// the positions after a step (multi_gpu_simulation.cu).
template <class T>
std::unique_ptr<PreparedRun> make_multi_gpu_run(std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                const ForceKernelFactory<T>& factory);
template <class T>
std::unique_ptr<Simulation> make_multi_gpu_simulation(const SimulationSetup& setup,
                                                      const ForceKernelFactory<T>& factory);
// Whether a run or simulation goes through NCCL: to the GPUs listed (even one: the command line
// makes a list of one plain --gpu, so a list of one is how tests reach the NCCL path on a one-GPU
// machine), or to this rank's GPU in a group of ranks.
inline bool through_nccl(const ExecutionOptions& options) {
  return !options.gpu_devices.empty() || options.gpu_group.has_value();
}
// The devices this process drives there.
inline std::vector<int> nccl_devices(const ExecutionOptions& options) {
  return options.gpu_group ? std::vector<int>{options.gpu_device} : options.gpu_devices;
}
// Empty where they can; otherwise why not.
inline std::optional<std::string> nccl_unavailable_reason(const ExecutionOptions& options) {
  return options.gpu_group ? gpu_group_unavailable_reason(options.gpu_device)
                           : multi_gpu_unavailable_reason(options.gpu_devices);
}

// Device bytes a run of `count` bodies needs beyond the bodies and accelerations (scratch).
using ScratchBytes = std::function<std::size_t(std::size_t count)>;

// Symmetric formulations add each pair's reaction to the other body: with a slice of targets those
// land on bodies other devices or ranks own.
inline constexpr const char* kSymmetricTargetRangeRefusal =
    "symmetric pairs add reactions to every body: a symmetric GPU formulation does not take a "
    "target range (decomposition)";

// An Implementation around a kernel factory: availability and memory checks, prepare, threads.
template <class T>
Implementation make_gpu_implementation(ImplementationInfo info, ForceKernelFactory<T> factory,
                                       ScratchBytes scratch_bytes = {}) {
  info.device = DeviceKind::gpu;
  const bool symmetric = info.pairs == PairScheme::symmetric;
  // Host memory per body: pinned bodies and accelerations, and the promoted copy returned.
  info.bytes_per_body = sizeof(Body<T>) + sizeof(Vec3<T>) + sizeof(Vec3<double>);
  return {
      .info = std::move(info),
      // The registry asks without options: device 0 answers whether this machine has a GPU;
      // size_limit_reason checks the ordinal actually requested.
      .unavailable_reason = [] { return device_unavailable_reason(0); },
      .prepare =
          [factory, symmetric](std::span<const Body<double>> bodies, double softening,
                               const ExecutionOptions& options) {
            if (symmetric &&
                (is_partial(options.targets, bodies.size()) || through_nccl(options))) {
              throw std::invalid_argument(kSymmetricTargetRangeRefusal);
            }
            if (through_nccl(options)) {
              if (options.targets) {
                throw std::invalid_argument("several GPUs choose their targets themselves");
              }
              return make_multi_gpu_run<T>(bodies, softening, options, factory);
            }
            return std::unique_ptr<PreparedRun>(
                std::make_unique<GpuRun<T>>(bodies, softening, options, factory));
          },
      .threads_used = [](const ExecutionOptions&) { return 1; },  // one host thread drives it
      .size_limit_reason = [symmetric, scratch_bytes = std::move(scratch_bytes)](
                               std::size_t count,
                               const ExecutionOptions& options) -> std::optional<std::string> {
        if (symmetric && (is_partial(options.targets, count) || through_nccl(options))) {
          return kSymmetricTargetRangeRefusal;
        }
        if (through_nccl(options)) {
          if (auto reason = nccl_unavailable_reason(options)) return reason;
        }
        if (count > kMaxBodies) {
          return "GPU formulations index bodies with int: at most 2^30 bodies";
        }
        // Padding adds at most a few thousand bodies.
        const std::size_t padded = count + 4096;
        const std::size_t bytes = padded * (sizeof(Body<T>) + sizeof(Vec3<T>)) +
                                  (scratch_bytes ? scratch_bytes(count) : 0);
        if (!through_nccl(options)) {
          return device_memory_limit_reason(options.gpu_device, bytes);
        }
        // Each of several GPUs holds every body, and the gathered accelerations besides its
        // slice's: at most what one GPU alone holds, plus those.
        for (const int device : nccl_devices(options)) {
          const std::size_t gathered = padded * sizeof(Vec3<T>);
          if (auto reason = device_memory_limit_reason(device, bytes + gathered)) return reason;
        }
        return std::nullopt;
      },
      .simulate =
          [factory](const SimulationSetup& setup) {
            // A slice's simulation is nbody/distributed's, around this formulation's prepared run.
            if (is_partial(setup.execution.targets, setup.bodies.size())) {
              throw std::invalid_argument(
                  "a GPU formulation's own simulation integrates every body, not a slice");
            }
            if (through_nccl(setup.execution)) {
              return make_multi_gpu_simulation<T>(setup, factory);
            }
            return make_gpu_simulation<T>(setup, factory);
          },
  };
}

}  // namespace nbody::gpu
