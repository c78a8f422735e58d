// The GPU's time integration: bodies, velocities and accelerations stay in device memory for the
// whole run; a step is the opening kick and drift (one kernel), the formulation's force kernel and
// the closing kick, captured once as a CUDA graph and launched as one.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/gpu/gpu_run.hpp"

namespace nbody::gpu {
namespace {

constexpr int kIntegrationBlock = 256;

template <class T>
__global__ void kick_drift(Body<T>* bodies, Vec3<T>* velocities, const Vec3<T>* accelerations,
                           int count, T half_dt, T dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  const Vec3<T> a = accelerations[i];
  Vec3<T> v = velocities[i];
  v = {v.x + half_dt * a.x, v.y + half_dt * a.y, v.z + half_dt * a.z};
  velocities[i] = v;
  Body<T> b = bodies[i];
  bodies[i] = {b.x + dt * v.x, b.y + dt * v.y, b.z + dt * v.z, b.m};
}

template <class T>
__global__ void kick(Vec3<T>* velocities, const Vec3<T>* accelerations, int count, T half_dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  const Vec3<T> a = accelerations[i];
  const Vec3<T> v = velocities[i];
  velocities[i] = {v.x + half_dt * a.x, v.y + half_dt * a.y, v.z + half_dt * a.z};
}

template <class T>
class GpuSimulation final : public Simulation {
 public:
  GpuSimulation(const SimulationSetup& setup, const ForceKernelFactory<T>& factory)
      : device_(select_device(setup.execution.gpu_device)),
        count_(static_cast<int>(setup.bodies.size())),
        kernel_(factory(device_, count_)),
        padded_count_(round_up(count_, kernel_->padding_multiple())),
        host_bodies_(setup.bodies.size()),
        host_velocities_(setup.bodies.size()),
        device_bodies_(static_cast<std::size_t>(padded_count_)),
        device_velocities_(setup.bodies.size()),
        device_accelerations_(static_cast<std::size_t>(padded_count_)),
        softening_squared_(static_cast<T>(setup.softening * setup.softening)),
        grid_((count_ + kIntegrationBlock - 1) / kIntegrationBlock) {
    if (setup.bodies.empty() || setup.bodies.size() > kMaxBodies) {
      throw std::invalid_argument("GPU formulations take 1 to 2^30 bodies");
    }
    for (std::size_t i = 0; i < setup.bodies.size(); ++i) {
      const Body<double>& b = setup.bodies[i];
      host_bodies_[i] = {static_cast<T>(b.x), static_cast<T>(b.y), static_cast<T>(b.z),
                         static_cast<T>(b.m)};
      const Vec3<double>& v = setup.velocities[i];
      host_velocities_[i] = {static_cast<T>(v.x), static_cast<T>(v.y), static_cast<T>(v.z)};
    }
    // Padding bodies have zero mass at the origin and never move (the kernels skip them).
    const std::vector<Body<T>> padding(static_cast<std::size_t>(padded_count_ - count_),
                                       Body<T>{0, 0, 0, 0});
    check_cuda(cudaMemcpyAsync(device_bodies_.data() + count_, padding.data(),
                               padding.size() * sizeof(Body<T>), cudaMemcpyHostToDevice,
                               stream_.get()));
    check_cuda(cudaMemcpyAsync(device_bodies_.data(), host_bodies_.data(), host_bodies_.bytes(),
                               cudaMemcpyHostToDevice, stream_.get()));
    check_cuda(cudaMemcpyAsync(device_velocities_.data(), host_velocities_.data(),
                               host_velocities_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    kernel_->enqueue(arguments(), stream_.get());
    stream_.synchronize();
  }

  StepSeconds advance(int steps, double dt, bool time_phases) override {
    check_cuda(cudaSetDevice(device_.ordinal));
    StepSeconds seconds;
    if (steps <= 0) return seconds;
    if (step_graph_.empty() || graph_dt_ != dt) {
      step_graph_ = GraphExec::capture(stream_, [&] {
        enqueue_kick_drift(dt);
        kernel_->enqueue(arguments(), stream_.get());
        enqueue_kick(dt);
      });
      graph_dt_ = dt;
    }
    start_.record(stream_);
    for (int step = 0; step < steps; ++step) step_graph_.launch(stream_);
    stop_.record(stream_);
    stop_.synchronize();
    seconds.total = stop_.seconds_since(start_);
    if (time_phases) {
      // The force's share: as many launches of a graph of the force kernel alone, at the
      // positions reached. Bracketing each kernel with events instead would add more than the
      // 1-2 us an integration kernel takes at small N. The recomputed accelerations are the
      // step's own (one atomic formulation aside, whose sums may round in another order).
      if (force_graph_.empty()) {
        force_graph_ =
            GraphExec::capture(stream_, [&] { kernel_->enqueue(arguments(), stream_.get()); });
      }
      force_start_.record(stream_);
      for (int step = 0; step < steps; ++step) force_graph_.launch(stream_);
      force_stop_.record(stream_);
      force_stop_.synchronize();
      seconds.force = force_stop_.seconds_since(force_start_);
      seconds.integration = seconds.total - seconds.force;
      seconds.phases = true;
    }
    return seconds;
  }

  PhaseSpaceState state() override {
    check_cuda(cudaSetDevice(device_.ordinal));
    check_cuda(cudaMemcpyAsync(host_bodies_.data(), device_bodies_.data(), host_bodies_.bytes(),
                               cudaMemcpyDeviceToHost, stream_.get()));
    check_cuda(cudaMemcpyAsync(host_velocities_.data(), device_velocities_.data(),
                               host_velocities_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    PhaseSpaceState state;
    state.bodies.resize(host_bodies_.size());
    state.velocities.resize(host_velocities_.size());
    for (std::size_t i = 0; i < host_bodies_.size(); ++i) {
      const Body<T>& b = host_bodies_[i];
      state.bodies[i] = {b.x, b.y, b.z, b.m};
      const Vec3<T>& v = host_velocities_[i];
      state.velocities[i] = {v.x, v.y, v.z};
    }
    return state;
  }

  std::map<std::string, std::string> details() const override {
    const LaunchDescription launch = kernel_->describe();
    std::map<std::string, std::string> details = launch.extra;
    details["device"] = device_.properties.name;
    details["grid"] = to_string(launch.grid);
    details["block"] = to_string(launch.block);
    details["integration"] =
        "on the device: kick+drift kernel, force kernel, kick kernel; one CUDA graph per step";
    return details;
  }

 private:
  ForceArgs<T> arguments() const {
    return {device_bodies_.data(), device_accelerations_.data(), count_, padded_count_,
            softening_squared_};
  }

  void enqueue_kick_drift(double dt) {
    kick_drift<T><<<grid_, kIntegrationBlock, 0, stream_.get()>>>(
        device_bodies_.data(), device_velocities_.data(), device_accelerations_.data(), count_,
        static_cast<T>(0.5 * dt), static_cast<T>(dt));
    check_launch();
  }

  void enqueue_kick(double dt) {
    kick<T><<<grid_, kIntegrationBlock, 0, stream_.get()>>>(
        device_velocities_.data(), device_accelerations_.data(), count_, static_cast<T>(0.5 * dt));
    check_launch();
  }

  DeviceContext device_;
  int count_;
  std::unique_ptr<ForceKernel<T>> kernel_;
  int padded_count_;
  PinnedBuffer<Body<T>> host_bodies_;
  PinnedBuffer<Vec3<T>> host_velocities_;
  DeviceBuffer<Body<T>> device_bodies_;
  DeviceBuffer<Vec3<T>> device_velocities_;
  DeviceBuffer<Vec3<T>> device_accelerations_;
  T softening_squared_;
  unsigned grid_;
  Stream stream_;
  Event start_;
  Event force_start_;
  Event force_stop_;
  Event stop_;
  GraphExec step_graph_;
  GraphExec force_graph_;
  double graph_dt_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<Simulation> make_gpu_simulation(const SimulationSetup& setup,
                                                const ForceKernelFactory<T>& factory) {
  return std::make_unique<GpuSimulation<T>>(setup, factory);
}

template std::unique_ptr<Simulation> make_gpu_simulation<float>(const SimulationSetup&,
                                                                const ForceKernelFactory<float>&);
template std::unique_ptr<Simulation> make_gpu_simulation<double>(const SimulationSetup&,
                                                                 const ForceKernelFactory<double>&);

}  // namespace nbody::gpu
