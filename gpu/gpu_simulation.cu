// The GPU's time integration: bodies, velocities and accelerations stay in device memory for the
// whole run. Where the formulation's kernel fuses the leapfrog into its store
// (ForceKernel::fuses_leapfrog), a step is that one kernel: it reads this step's positions and
// writes the next step's into a second buffer, so blocks still reading the old ones never see new
// ones. Otherwise a step is the opening kick and drift (one kernel), the force kernel and the
// closing kick, captured once as a CUDA graph and launched as one.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbody/diagnostics.hpp"
#include "nbody/gpu/device_potential.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/leapfrog.cuh"
#include "nbody/physics.hpp"

namespace nbody::gpu {
namespace {

template <class T>
class GpuSimulation final : public Simulation {
 public:
  GpuSimulation(const SimulationSetup& setup, const ForceKernelFactory<T>& factory)
      : plan_(setup.bodies, setup.softening, setup.execution.gpu_device, factory),
        softening_(setup.softening),
        fused_(plan_.kernel().fuses_leapfrog()),
        bodies_{plan_.upload_padded(stream_),
                fused_ ? plan_.upload_padded(stream_) : DeviceBuffer<Body<T>>()},
        host_velocities_(setup.velocities.size()),
        device_velocities_(setup.velocities.size()),
        device_accelerations_(static_cast<std::size_t>(plan_.padded_target_count())),
        grid_(static_cast<unsigned>((plan_.count() + kIntegrationBlock - 1) / kIntegrationBlock)),
        potential_(plan_.count()) {
    for (std::size_t i = 0; i < host_velocities_.size(); ++i) {
      const Vec3<double>& v = setup.velocities[i];
      host_velocities_[i] = {static_cast<T>(v.x), static_cast<T>(v.y), static_cast<T>(v.z)};
    }
    check_cuda(cudaMemcpyAsync(device_velocities_.data(), host_velocities_.data(),
                               host_velocities_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    plan_.kernel().enqueue(arguments(current_), stream_.get());  // the first opening kick's
    stream_.synchronize();
  }

  StepSeconds advance(int steps, double dt, bool time_phases) override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    StepSeconds seconds;
    if (steps <= 0) return seconds;
    if (graphs_dt_ != dt) capture_steps(dt);
    start_.record(stream_);
    if (fused_) {
      enqueue_kick_drift(current_, dt);
      for (int step = 0; step + 1 < steps; ++step) {
        middle_steps_[current_].launch(stream_);
        current_ = 1 - current_;
      }
      last_steps_[current_].launch(stream_);
    } else {
      for (int step = 0; step < steps; ++step) middle_steps_[0].launch(stream_);
    }
    stop_.record(stream_);
    stop_.synchronize();
    seconds.total = stop_.seconds_since(start_);
    if (time_phases) {
      // The force's share: as many launches of a graph of the force kernel alone, at the
      // positions reached. Bracketing each kernel with events instead would add more than the
      // 1-2 us an integration kernel takes at small N. The recomputed accelerations are the
      // step's own (one atomic formulation aside, whose sums may round in another order).
      if (force_graphs_[current_].empty()) {
        force_graphs_[current_] = GraphExec::capture(
            stream_, [&] { plan_.kernel().enqueue(arguments(current_), stream_.get()); });
      }
      force_start_.record(stream_);
      for (int step = 0; step < steps; ++step) force_graphs_[current_].launch(stream_);
      force_stop_.record(stream_);
      force_stop_.synchronize();
      // The force graph alone may read longer than the whole steps where the integration is
      // below the timing's noise (gpu.shared.f64 at 64K: -13 us of 6.6 ms): then it is all force.
      seconds.force = std::min(force_stop_.seconds_since(force_start_), seconds.total);
      seconds.integration = seconds.total - seconds.force;
      seconds.phases = true;
    }
    return seconds;
  }

  PhaseSpaceState state() override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    PinnedBuffer<Body<T>>& host_bodies = plan_.host_bodies();
    check_cuda(cudaMemcpyAsync(host_bodies.data(), bodies_[current_].data(), host_bodies.bytes(),
                               cudaMemcpyDeviceToHost, stream_.get()));
    check_cuda(cudaMemcpyAsync(host_velocities_.data(), device_velocities_.data(),
                               host_velocities_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    return promoted_state<T>(
        std::span<const Body<T>>(host_bodies.data(), host_bodies.size()),
        std::span<const Vec3<T>>(host_velocities_.data(), host_velocities_.size()));
  }

  std::optional<double> potential_energy() override {
    check_cuda(cudaSetDevice(plan_.device().ordinal));
    return potential_.sum(bodies_[current_].data(), softening_, stream_);
  }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = plan_.details();
    details["potential_energy"] = kDevicePotentialDescription;
    details["integration"] =
        fused_ ? "on the device, fused into the force kernel's store: one kernel per step, "
                 "positions double-buffered (plus one kick+drift kernel per advance)"
               : "on the device: kick+drift kernel, force kernel, kick kernel; one CUDA graph "
                 "per step";
    return details;
  }

 private:
  ForceArgs<T> arguments(int buffer) const {
    return plan_.arguments(bodies_[buffer], device_accelerations_);
  }

  // The graphs of one step for `dt`: fused, one per position buffer read (and one for a run's
  // last step, which only closes with a half kick); otherwise the three kernels in one graph.
  void capture_steps(double dt) {
    const T half_dt = static_cast<T>(0.5 * dt);
    if (fused_) {
      for (int buffer = 0; buffer < 2; ++buffer) {
        LeapfrogArgs<T> leapfrog{device_velocities_.data(), bodies_[1 - buffer].data(), half_dt,
                                 static_cast<T>(dt)};
        middle_steps_[buffer] = GraphExec::capture(stream_, [&] {
          plan_.kernel().enqueue_with_leapfrog(arguments(buffer), leapfrog, stream_.get());
        });
        leapfrog.next_bodies = nullptr;
        last_steps_[buffer] = GraphExec::capture(stream_, [&] {
          plan_.kernel().enqueue_with_leapfrog(arguments(buffer), leapfrog, stream_.get());
        });
      }
    } else {
      middle_steps_[0] = GraphExec::capture(stream_, [&] {
        enqueue_kick_drift(0, dt);
        plan_.kernel().enqueue(arguments(0), stream_.get());
        kick<T><<<grid_, kIntegrationBlock, 0, stream_.get()>>>(
            device_velocities_.data(), device_accelerations_.data(), plan_.count(), half_dt);
        check_launch();
      });
    }
    graphs_dt_ = dt;
  }

  void enqueue_kick_drift(int buffer, double dt) {
    kick_drift<T><<<grid_, kIntegrationBlock, 0, stream_.get()>>>(
        bodies_[buffer].data(), device_velocities_.data(), device_accelerations_.data(),
        plan_.count(), static_cast<T>(0.5 * dt), static_cast<T>(dt));
    check_launch();
  }

  KernelPlan<T> plan_;  // first: it selects the device everything below is made on
  Stream stream_;
  double softening_;
  bool fused_;
  std::array<DeviceBuffer<Body<T>>, 2> bodies_;  // the second only when fused
  int current_ = 0;                              // the buffer holding the positions now
  PinnedBuffer<Vec3<T>> host_velocities_;
  DeviceBuffer<Vec3<T>> device_velocities_;
  DeviceBuffer<Vec3<T>> device_accelerations_;
  unsigned grid_;
  Event start_;
  Event force_start_;
  Event force_stop_;
  Event stop_;
  std::array<GraphExec, 2> middle_steps_;
  std::array<GraphExec, 2> last_steps_;
  std::array<GraphExec, 2> force_graphs_;
  double graphs_dt_ = 0;
  DevicePotential<T> potential_;  // made here, not in a timed diagnostic
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
