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
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/gpu/leapfrog.cuh"
#include "nbody/physics.hpp"

namespace nbody::gpu {
namespace {

constexpr int kIntegrationBlock = 256;

template <class T>
__global__ void kick_drift(Body<T>* bodies, Vec3<T>* velocities, const Vec3<T>* accelerations,
                           int count, T half_dt, T dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  const Vec3<T> v = kicked(velocities[i], accelerations[i], half_dt);
  velocities[i] = v;
  bodies[i] = drifted(bodies[i], v, dt);
}

template <class T>
__global__ void kick(Vec3<T>* velocities, const Vec3<T>* accelerations, int count, T half_dt) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  velocities[i] = kicked(velocities[i], accelerations[i], half_dt);
}

constexpr int kPotentialBlock = 128;
// The j range is cut into (at most) this many chunks, each summed by its own threads, which a
// second kernel adds per row. Whole rows (one thread each) took 11 ms at N = 65536, where block
// 0's rows alone are 65536 terms long: a chunk's length is the kernel's longest dependent chain.
// More chunks shorten it but cost chunks x N doubles of partial sums (2048-long chunks would take
// 4.3 GB at N = 1M, 67 GB at 4M).
constexpr int kPotentialChunks = 32;

// The chunks' length for `count` bodies: a multiple of the block, at least one block.
int potential_chunk_length(int count) {
  const int spread = (count + kPotentialChunks - 1) / kPotentialChunks;
  return std::max(1, (spread + kPotentialBlock - 1) / kPotentialBlock) * kPotentialBlock;
}

int potential_chunks(int count) {
  const int length = potential_chunk_length(count);
  return (count + length - 1) / length;
}

// partials[c][i] = the compensated sum of pair_potential over j > i in chunk c of the j range
// (chunks `chunk_length` long), in float64 (with the device's rsqrt). Written for every row i whose
// pairs reach into chunk c (c at least (i + 1) / chunk_length); blocks whose rows all lie beyond
// the chunk have nothing to do.
template <class T>
__global__ void __launch_bounds__(kPotentialBlock)
    potential_partials(const Body<T>* bodies, int count, int chunk_length, double softening_squared,
                       double* partials) {
  __shared__ Body<double> tile[kPotentialBlock];
  const int block_start = static_cast<int>(blockIdx.x) * kPotentialBlock;
  const int chunk = static_cast<int>(blockIdx.y);
  if (chunk < (block_start + 1) / chunk_length) return;  // uniform across the block
  const int i = block_start + static_cast<int>(threadIdx.x);
  const auto promoted = [&](int k) {
    const Body<T> b = bodies[k];
    return Body<double>{b.x, b.y, b.z, b.m};
  };
  const Body<double> bi = i < count ? promoted(i) : Body<double>{0, 0, 0, 0};
  const int chunk_end = min(count, (chunk + 1) * chunk_length);
  // Tiles wholly at or below the block's first row hold no j > i for any of its rows.
  const int first_tile = max(chunk * chunk_length, block_start / kPotentialBlock * kPotentialBlock);
  CompensatedSum row;
  for (int tile_start = first_tile; tile_start < chunk_end; tile_start += kPotentialBlock) {
    const int load = tile_start + static_cast<int>(threadIdx.x);
    tile[threadIdx.x] = load < chunk_end ? promoted(load) : Body<double>{0, 0, 0, 0};
    __syncthreads();
    const int tile_size = min(kPotentialBlock, chunk_end - tile_start);
    for (int k = 0; k < tile_size; ++k) {
      if (tile_start + k > i) {
        const Body<double>& bj = tile[k];
        row.add(pair_potential<double, DeviceInvSqrt>(bi.x, bi.y, bi.z, bi.m, bj.x, bj.y, bj.z,
                                                      bj.m, softening_squared));
      }
    }
    __syncthreads();  // the tile is overwritten next
  }
  if (i < count) partials[static_cast<std::size_t>(chunk) * count + i] = row.value();
}

// rows[i] = the compensated sum of row i's chunk sums, in chunk order.
__global__ void potential_rows(const double* partials, int count, int chunk_length, int chunks,
                               double* rows) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  CompensatedSum row;
  for (int chunk = (i + 1) / chunk_length; chunk < chunks; ++chunk) {
    row.add(partials[static_cast<std::size_t>(chunk) * count + i]);
  }
  rows[i] = row.value();
}

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
        potential_partials_(static_cast<std::size_t>(potential_chunks(plan_.count())) *
                            static_cast<std::size_t>(plan_.count())),
        potential_rows_(static_cast<std::size_t>(plan_.count())),
        host_potential_rows_(static_cast<std::size_t>(plan_.count())) {
    for (std::size_t i = 0; i < host_velocities_.size(); ++i) {
      const Vec3<double>& v = setup.velocities[i];
      host_velocities_[i] = {static_cast<T>(v.x), static_cast<T>(v.y), static_cast<T>(v.z)};
    }
    check_cuda(cudaMemcpyAsync(device_velocities_.data(), host_velocities_.data(),
                               host_velocities_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    plan_.kernel().enqueue(arguments(current_), stream_.get());  // the first opening kick's
    // CUDA loads a kernel at its first use: load the potential's here, in setup, not in the first
    // conservation check (it made that check several times the later ones at N = 1K).
    cudaFuncAttributes attributes{};
    check_cuda(cudaFuncGetAttributes(&attributes, potential_partials<T>));
    check_cuda(cudaFuncGetAttributes(&attributes, potential_rows));
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
    const int count = plan_.count();
    const unsigned row_blocks =
        static_cast<unsigned>((count + kPotentialBlock - 1) / kPotentialBlock);
    const int chunk_length = potential_chunk_length(count);
    const int chunks = potential_chunks(count);
    const dim3 grid(row_blocks, static_cast<unsigned>(chunks));
    potential_partials<T><<<grid, kPotentialBlock, 0, stream_.get()>>>(
        bodies_[current_].data(), count, chunk_length, softening_ * softening_,
        potential_partials_.data());
    check_launch();
    potential_rows<<<row_blocks, kPotentialBlock, 0, stream_.get()>>>(
        potential_partials_.data(), count, chunk_length, chunks, potential_rows_.data());
    check_launch();
    check_cuda(cudaMemcpyAsync(host_potential_rows_.data(), potential_rows_.data(),
                               potential_rows_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    return potential_from_rows(
        std::span<const double>(host_potential_rows_.data(), host_potential_rows_.size()));
  }

  std::map<std::string, std::string> details() const override {
    std::map<std::string, std::string> details = plan_.details();
    details["potential_energy"] =
        "on the device: float64 terms (device rsqrt), compensated sums of pairs j > i in at most "
        "32 chunks of j, then per row, then (on the host) over "
        "rows";
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
  // Made here, not in a timed diagnostic.
  DeviceBuffer<double> potential_partials_;  // a row's sum per chunk of j (potential_partials)
  DeviceBuffer<double> potential_rows_;
  PinnedBuffer<double> host_potential_rows_;
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
