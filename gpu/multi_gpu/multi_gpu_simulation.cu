// A simulation on several GPUs through NCCL: each device integrates its slice of the bodies, and
// NCCL all-gathers the positions on device buffers after each step (velocities only for state()).
// The devices are those one process drives (`--gpus`), or this rank's one GPU in a group of ranks
// (ExecutionOptions::gpu_group).
#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "decomposition.cuh"
#include "nbody/gpu/device_potential.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/leapfrog.cuh"
#include "nbody/leapfrog.hpp"
#include "nbody/steady_clock.hpp"
#include "nccl_communicators.hpp"

namespace nbody::gpu {
namespace {

using Clock = SteadyClock;

// One device's part of a simulation: every body's position (two buffers where the kernel fuses
// the leapfrog: it reads one and writes the other), its slice's velocities and accelerations.
template <class T>
struct SimulationShare {
  SimulationShare(const SimulationSetup& setup, int device, const ForceKernelFactory<T>& factory,
                  const TargetRange& slice, const EqualSlices& slices)
      : plan(setup.bodies, setup.softening, device, factory, slice),
        fused(plan.kernel().fuses_leapfrog()),
        bodies{positions(slices), fused ? positions(slices) : DeviceBuffer<Body<T>>()},
        velocities(slices.length),
        gathered_velocities(slices.gathered()),
        accelerations(
            std::max(static_cast<std::size_t>(plan.padded_target_count()), slices.length)) {
    PinnedBuffer<Vec3<T>> host(slices.length);
    for (std::size_t k = 0; k < slice.size(); ++k) {
      const Vec3<double>& v = setup.velocities[slice.begin + k];
      host[k] = {static_cast<T>(v.x), static_cast<T>(v.y), static_cast<T>(v.z)};
    }
    check_cuda(cudaMemcpyAsync(velocities.data(), host.data(), host.bytes(), cudaMemcpyHostToDevice,
                               stream.get()));
    stream.synchronize();  // `host` goes
  }

  // The padded bodies, and room for the all-gather's last slice where it reaches past them.
  DeviceBuffer<Body<T>> positions(const EqualSlices& slices) {
    const std::size_t size =
        std::max(static_cast<std::size_t>(plan.padded_count()), slices.gathered());
    DeviceBuffer<Body<T>> buffer(size);
    check_cuda(cudaMemsetAsync(buffer.data(), 0, buffer.bytes(), stream.get()));
    plan.upload(buffer, stream);
    stream.synchronize();
    return buffer;
  }

  ForceArgs<T> arguments(int buffer) const { return plan.arguments(bodies[buffer], accelerations); }
  int targets() const { return plan.target_count(); }
  unsigned integration_grid() const {
    return static_cast<unsigned>((targets() + kIntegrationBlock - 1) / kIntegrationBlock);
  }

  KernelPlan<T> plan;  // first: it selects the device everything below is made on
  Stream stream;
  bool fused;
  std::array<DeviceBuffer<Body<T>>, 2> bodies;
  DeviceBuffer<Vec3<T>> velocities;           // its slice's: slices.length, what a gather sends
  DeviceBuffer<Vec3<T>> gathered_velocities;  // every slice's, all-gathered for state()
  DeviceBuffer<Vec3<T>> accelerations;
};

template <class T>
class MultiGpuSimulation final : public Simulation {
 public:
  MultiGpuSimulation(const SimulationSetup& setup, const ForceKernelFactory<T>& factory)
      : communicators_(setup.execution),
        slices_(setup.bodies.size(), communicators_.parts()),
        softening_(setup.softening) {
    if (setup.velocities.size() != setup.bodies.size()) {
      throw std::invalid_argument("simulation: one velocity per body");
    }
    const std::vector<int>& devices = communicators_.devices();
    shares_.reserve(devices.size());
    for (std::size_t d = 0; d < devices.size(); ++d) {
      shares_.push_back(std::make_unique<SimulationShare<T>>(
          setup, devices[d], factory, slices_[communicators_.part(d)], slices_));
    }
    fused_ = shares_.front()->fused;
    check_cuda(cudaSetDevice(devices.front()));
    potential_ = std::make_unique<DevicePotential<T>>(shares_.front()->plan.count());
    enqueue_forces();  // the first opening kick's
    synchronize();
    // No collective here: in a group of ranks, one whose construction failed would leave the
    // others waiting in it, where no agreement reaches them (warm_up comes after).
  }

  StepSeconds advance(int steps, double dt, bool time_phases) override {
    StepSeconds seconds;
    if (steps <= 0) return seconds;
    warm_up();
    const T half_dt = static_cast<T>(0.5 * dt);
    const auto start = Clock::now();
    if (fused_) {
      // As on one GPU: the opening kick and drift, then kernels that each close a step and open
      // the next into the other position buffer, which the all-gather then completes.
      enqueue_kick_drift(half_dt, static_cast<T>(dt));
      gather_positions(current_);
      for (int step = 0; step < steps; ++step) {
        const bool last = step + 1 == steps;
        for (auto& share : shares_) {
          check_cuda(cudaSetDevice(share->plan.device().ordinal));
          if (share->targets() == 0) continue;
          const LeapfrogArgs<T> leapfrog{share->velocities.data(),
                                         last ? nullptr : share->bodies[1 - current_].data(),
                                         half_dt, static_cast<T>(dt)};
          share->plan.kernel().enqueue_with_leapfrog(share->arguments(current_), leapfrog,
                                                     share->stream.get());
        }
        if (!last) {
          gather_positions(1 - current_);
          current_ = 1 - current_;
        }
      }
    } else {
      for (int step = 0; step < steps; ++step) {
        enqueue_kick_drift(half_dt, static_cast<T>(dt));
        gather_positions(current_);
        enqueue_forces();
        for (auto& share : shares_) {
          check_cuda(cudaSetDevice(share->plan.device().ordinal));
          if (share->targets() == 0) continue;
          kick<T><<<share->integration_grid(), kIntegrationBlock, 0, share->stream.get()>>>(
              share->velocities.data(), share->accelerations.data(), share->targets(), half_dt);
          check_launch();
        }
      }
    }
    synchronize();
    seconds.total = seconds_since(start);
    if (time_phases) {
      // As many force evaluations alone, then as many all-gathers alone, at the positions
      // reached (every device holds the same ones: a gather changes nothing); integration is
      // the rest of the steps, zero where it is below the timing's noise.
      const auto force_start = Clock::now();
      for (int step = 0; step < steps; ++step) enqueue_forces();
      synchronize();
      seconds.force = seconds_since(force_start);
      const auto gather_start = Clock::now();
      for (int step = 0; step < steps; ++step) gather_positions(current_);
      synchronize();
      seconds.communication = std::min(seconds_since(gather_start), seconds.total);
      seconds.force = std::min(seconds.force, seconds.total - seconds.communication);
      seconds.integration = seconds.total - seconds.force - seconds.communication;
      seconds.phases = true;
    }
    return seconds;
  }

  PhaseSpaceState state() override {
    warm_up();
    const std::size_t n = slices_.count;
    // Every slice's velocities on every device (in a group of ranks each holds only its own).
    nccl_group([&] {
      for (std::size_t d = 0; d < shares_.size(); ++d) {
        SimulationShare<T>& share = *shares_[d];
        check_cuda(cudaSetDevice(share.plan.device().ordinal));
        check_nccl(ncclAllGather(share.velocities.data(), share.gathered_velocities.data(),
                                 3 * slices_.length, nccl_type<T>(), communicators_[d],
                                 share.stream.get()));
      }
    });
    PinnedBuffer<Body<T>> host_bodies(n);
    PinnedBuffer<Vec3<T>> host_velocities(n);
    SimulationShare<T>& first = *shares_.front();
    check_cuda(cudaSetDevice(first.plan.device().ordinal));
    check_cuda(cudaMemcpyAsync(host_bodies.data(), first.bodies[current_].data(),
                               host_bodies.bytes(), cudaMemcpyDeviceToHost, first.stream.get()));
    check_cuda(cudaMemcpyAsync(host_velocities.data(), first.gathered_velocities.data(),
                               host_velocities.bytes(), cudaMemcpyDeviceToHost,
                               first.stream.get()));
    synchronize();
    return promoted_state<T>(std::span<const Body<T>>(host_bodies.data(), n),
                             std::span<const Vec3<T>>(host_velocities.data(), n));
  }

  std::optional<double> potential_energy() override {
    SimulationShare<T>& first = *shares_.front();
    check_cuda(cudaSetDevice(first.plan.device().ordinal));
    return potential_->sum(first.bodies[current_].data(), softening_, first.stream);
  }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = decomposition_details(
        shares_.front()->plan, communicators_, slices_, "positions all-gathered after each step");
    details["potential_energy"] =
        std::string(kDevicePotentialDescription) +
        (communicators_.over_ranks() ? ", on each rank's GPU (every one holds every position)"
                                     : ", on the first GPU");
    details["integration"] =
        fused_ ? "on each GPU for its slice, fused into the force kernel's store; the new "
                 "positions all-gathered (NCCL) before the next step"
               : "on each GPU for its slice: kick+drift kernel, all-gather of positions (NCCL), "
                 "force kernel, kick kernel";
    return details;
  }

 private:
  void enqueue_forces() {
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      if (share->targets() == 0) continue;
      share->plan.kernel().enqueue(share->arguments(current_), share->stream.get());
    }
  }

  // Each device's slice of buffer current_: opening half kick and drift.
  void enqueue_kick_drift(T half_dt, T dt) {
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      if (share->targets() == 0) continue;
      kick_drift<T><<<share->integration_grid(), kIntegrationBlock, 0, share->stream.get()>>>(
          share->bodies[current_].data() + share->plan.first_target(), share->velocities.data(),
          share->accelerations.data(), share->targets(), half_dt, dt);
      check_launch();
    }
  }

  // NCCL's first collective sets up its channels (12 ms on two H200s): once, before the first
  // steps or state, so that it falls in neither the phase-timed steps, whose split it skewed, nor
  // setup, where a group of ranks has not yet agreed that every rank is ready (the positions are
  // every device's already: the gather changes nothing).
  void warm_up() {
    if (warm_) return;
    gather_positions(current_);
    synchronize();
    warm_ = true;
  }

  // Every device's slice of position buffer `buffer` into every device's, in place.
  void gather_positions(int buffer) {
    nccl_group([&] {
      for (std::size_t d = 0; d < shares_.size(); ++d) {
        SimulationShare<T>& share = *shares_[d];
        check_cuda(cudaSetDevice(share.plan.device().ordinal));
        Body<T>* all = share.bodies[buffer].data();
        check_nccl(ncclAllGather(all + communicators_.part(d) * slices_.length, all,
                                 4 * slices_.length, nccl_type<T>(), communicators_[d],
                                 share.stream.get()));
      }
    });
  }

  void synchronize() {
    for (auto& share : shares_) {
      check_cuda(cudaSetDevice(share->plan.device().ordinal));
      share->stream.synchronize();
    }
  }

  NcclCommunicators communicators_;
  EqualSlices slices_;
  double softening_;
  std::vector<std::unique_ptr<SimulationShare<T>>> shares_;  // one per device, in part order
  bool fused_ = false;
  bool warm_ = false;                              // NCCL's first collective done (warm_up)
  int current_ = 0;                                // the position buffer holding the positions now
  std::unique_ptr<DevicePotential<T>> potential_;  // on the first device
};

}  // namespace

template <class T>
std::unique_ptr<Simulation> make_multi_gpu_simulation(const SimulationSetup& setup,
                                                      const ForceKernelFactory<T>& factory) {
  return std::make_unique<MultiGpuSimulation<T>>(setup, factory);
}

template std::unique_ptr<Simulation> make_multi_gpu_simulation<float>(
    const SimulationSetup&, const ForceKernelFactory<float>&);
template std::unique_ptr<Simulation> make_multi_gpu_simulation<double>(
    const SimulationSetup&, const ForceKernelFactory<double>&);

}  // namespace nbody::gpu
