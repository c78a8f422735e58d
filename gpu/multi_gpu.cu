// Several GPUs exchanging slices through NCCL (issue 15): each device computes the accelerations
// of a slice of the targets from all N sources, and NCCL all-gathers on device buffers what every
// device needs next: the accelerations after a force evaluation (run), the positions after each
// step (simulate). The devices are those one process drives (`--gpus`: ncclCommInitAll), or one
// GPU per rank of mpirun, every rank running the same code on its own (ExecutionOptions::
// gpu_group: ncclCommInitRank, join_gpu_group). The slices are equal (the last one short): NCCL's
// all-gather takes the same count from every device.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nbody/gpu/device_potential.hpp"
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/leapfrog.cuh"
#include "nbody/steady_clock.hpp"

#if NBODY_HAVE_NCCL
#include <nccl.h>
#endif

namespace nbody::gpu {
namespace {

std::string describe_devices(std::span<const int> devices) {
  std::string text;
  for (const int device : devices) {
    if (!text.empty()) text += ",";
    text += std::to_string(device);
  }
  return text;
}

}  // namespace

std::optional<std::string> multi_gpu_unavailable_reason(std::span<const int> devices) {
#if NBODY_HAVE_NCCL
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size()) {
    return "a GPU listed twice (" + describe_devices(devices) + ")";
  }
  for (const int device : devices) {
    if (auto reason = device_unavailable_reason(device)) return reason;
  }
  return std::nullopt;
#else
  static_cast<void>(devices);
  return "this nbody-fair was built without NCCL: one GPU per process (install NCCL and "
         "reconfigure)";
#endif
}

std::optional<std::string> gpu_group_unavailable_reason(int device) {
#if NBODY_HAVE_NCCL
  return device_unavailable_reason(device);
#else
  static_cast<void>(device);
  return "this nbody-fair was built without NCCL: GPU formulations' slices travel between ranks "
         "through host memory (install NCCL and reconfigure)";
#endif
}

#if NBODY_HAVE_NCCL
namespace {

using Clock = SteadyClock;

// The one place NCCL's results become exceptions, as check_cuda does for CUDA's, with what NCCL
// said of its last error on this thread ("corrupted comm object detected").
void check_nccl(ncclResult_t status, std::source_location where = std::source_location::current()) {
  if (status == ncclSuccess) return;
  std::string message = std::string("NCCL error: ") + ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
    message += std::string(" (") + last + ")";
  }
  throw CudaError(message + " (at " + where.file_name() + ":" + std::to_string(where.line()) + ")");
}

template <class T>
ncclDataType_t nccl_type() {
  return std::is_same_v<T, float> ? ncclFloat : ncclDouble;
}

}  // namespace

}  // namespace nbody::gpu

namespace nbody {

// This rank's communicator in a group of ranks (join_gpu_group): its place and device, and NCCL's
// communicator, which LeaveGpuGroup destroys.
struct GpuGroupCommunicator {
  int rank = 0;
  int size = 1;
  int device = 0;
  ncclComm_t comm = nullptr;
};

void LeaveGpuGroup::operator()(GpuGroupCommunicator* communicator) const noexcept {
  if (communicator == nullptr) return;
  if (communicator->comm != nullptr) {
    if (std::uncaught_exceptions() > 0) {
      ncclCommAbort(communicator->comm);
    } else {
      ncclCommDestroy(communicator->comm);
    }
  }
  delete communicator;
}

}  // namespace nbody

namespace nbody::gpu {
namespace {

// NCCL's communicators of the devices this process drives in an exchange, in the order of their
// parts (slices): one per device listed, its own (ncclCommInitAll: parts 0 to G - 1 of G, destroyed
// with it), or this rank's one device in the group of ranks the process joined (part `rank` of
// `size`, borrowed from the options' GpuGroup). A part is its communicator's NCCL rank, so an
// all-gather puts slice p at p times the slice's length.
class NcclCommunicators {
 public:
  explicit NcclCommunicators(const ExecutionOptions& options) {
    if (options.gpu_group) {
      if (!options.gpu_devices.empty()) {
        throw std::invalid_argument("a GPU group of ranks drives one GPU per rank, not a list");
      }
      const GpuGroupCommunicator* joined = options.gpu_group->communicator;
      if (joined == nullptr || joined->rank != options.gpu_group->rank ||
          joined->size != options.gpu_group->size || joined->device != options.gpu_device) {
        // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "..." + std::string + ...
        std::string message = "this process is not in the GPU group of rank ";
        message += std::to_string(options.gpu_group->rank);
        message += " of ";
        message += std::to_string(options.gpu_group->size);
        message += " on CUDA device ";
        message += std::to_string(options.gpu_device);
        message += " (join_gpu_group joins it)";
        throw std::invalid_argument(message);
      }
      devices_ = {options.gpu_device};
      comms_ = {joined->comm};
      first_part_ = static_cast<std::size_t>(joined->rank);
      parts_ = static_cast<std::size_t>(joined->size);
      return;
    }
    if (auto reason = multi_gpu_unavailable_reason(options.gpu_devices)) {
      throw std::invalid_argument(*reason);
    }
    devices_ = options.gpu_devices;
    parts_ = devices_.size();
    owned_ = true;
    comms_.assign(devices_.size(), nullptr);
    check_nccl(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()));
  }
  NcclCommunicators(const NcclCommunicators&) = delete;
  NcclCommunicators& operator=(const NcclCommunicators&) = delete;
  ~NcclCommunicators() {
    if (!owned_) return;
    for (ncclComm_t comm : comms_) {
      if (comm != nullptr) ncclCommDestroy(comm);
    }
  }

  // This process's devices, in the order of their parts.
  const std::vector<int>& devices() const { return devices_; }
  std::size_t part(std::size_t device) const { return first_part_ + device; }
  std::size_t parts() const { return parts_; }
  // Whether the other parts are other ranks' (a group of ranks).
  bool over_ranks() const { return !owned_; }
  ncclComm_t operator[](std::size_t device) const { return comms_[device]; }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::size_t first_part_ = 0;
  std::size_t parts_ = 0;
  bool owned_ = false;
};

// NCCL calls for several devices from one thread are one group (ncclGroupStart/End around them):
// each call alone would wait for the other devices' calls.
template <class Calls>
void nccl_group(Calls&& calls) {
  check_nccl(ncclGroupStart());
  try {
    calls();
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  check_nccl(ncclGroupEnd());
}

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

// The details both share: the first device's plan, then the decomposition.
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

std::vector<std::byte> make_gpu_group_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id));
  std::vector<std::byte> bytes(sizeof id);
  std::memcpy(bytes.data(), &id, sizeof id);
  return bytes;
}

GpuGroupMembership join_gpu_group(const GpuGroup& group, int device) {
  if (group.id.size() != sizeof(ncclUniqueId)) {
    std::string message = "a GPU group's id is ";
    message += std::to_string(group.id.size());
    message += " bytes, not NCCL's ";
    message += std::to_string(sizeof(ncclUniqueId));
    throw std::invalid_argument(message);
  }
  if (group.size < 1 || group.rank < 0 || group.rank >= group.size) {
    std::string message = "rank ";
    message += std::to_string(group.rank);
    message += " of a GPU group of ";
    message += std::to_string(group.size);
    message += ": no such rank";
    throw std::invalid_argument(message);
  }
  ncclUniqueId id;
  std::memcpy(&id, group.id.data(), sizeof id);
  check_cuda(cudaSetDevice(device));
  // Owned from here on: a communicator NCCL made is destroyed once, by the membership alone.
  GpuGroupMembership membership(
      new GpuGroupCommunicator{.rank = group.rank, .size = group.size, .device = device});
  check_nccl(ncclCommInitRank(&membership->comm, group.size, id, group.rank));
  return membership;
}

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

template <class T>
std::unique_ptr<PreparedRun> make_multi_gpu_run(std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                const ForceKernelFactory<T>& factory) {
  return std::make_unique<MultiGpuRun<T>>(bodies, softening, options, factory);
}

template <class T>
std::unique_ptr<Simulation> make_multi_gpu_simulation(const SimulationSetup& setup,
                                                      const ForceKernelFactory<T>& factory) {
  return std::make_unique<MultiGpuSimulation<T>>(setup, factory);
}

#else  // without NCCL: the reasons above say why, and nothing gets this far

}  // namespace nbody::gpu

namespace nbody {

struct GpuGroupCommunicator {};  // never made: no group is joined without NCCL

void LeaveGpuGroup::operator()(GpuGroupCommunicator* communicator) const noexcept {
  delete communicator;
}

}  // namespace nbody

namespace nbody::gpu {
namespace {

std::string without_nccl(const ExecutionOptions& options) {
  return *(options.gpu_group ? gpu_group_unavailable_reason(options.gpu_device)
                             : multi_gpu_unavailable_reason(options.gpu_devices));
}

}  // namespace

std::vector<std::byte> make_gpu_group_id() {
  throw std::invalid_argument(*gpu_group_unavailable_reason(0));
}

GpuGroupMembership join_gpu_group(const GpuGroup&, int device) {
  throw std::invalid_argument(*gpu_group_unavailable_reason(device));
}

AllGatherSweep time_all_gather(std::span<const int> devices) {
  throw std::invalid_argument(*multi_gpu_unavailable_reason(devices));
}

template <class T>
std::unique_ptr<PreparedRun> make_multi_gpu_run(std::span<const Body<double>>, double,
                                                const ExecutionOptions& options,
                                                const ForceKernelFactory<T>&) {
  throw std::invalid_argument(without_nccl(options));
}

template <class T>
std::unique_ptr<Simulation> make_multi_gpu_simulation(const SimulationSetup& setup,
                                                      const ForceKernelFactory<T>&) {
  throw std::invalid_argument(without_nccl(setup.execution));
}

#endif

template std::unique_ptr<PreparedRun> make_multi_gpu_run<float>(std::span<const Body<double>>,
                                                                double, const ExecutionOptions&,
                                                                const ForceKernelFactory<float>&);
template std::unique_ptr<PreparedRun> make_multi_gpu_run<double>(std::span<const Body<double>>,
                                                                 double, const ExecutionOptions&,
                                                                 const ForceKernelFactory<double>&);
template std::unique_ptr<Simulation> make_multi_gpu_simulation<float>(
    const SimulationSetup&, const ForceKernelFactory<float>&);
template std::unique_ptr<Simulation> make_multi_gpu_simulation<double>(
    const SimulationSetup&, const ForceKernelFactory<double>&);

}  // namespace nbody::gpu
