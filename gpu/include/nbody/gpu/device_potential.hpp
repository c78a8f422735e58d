#pragma once
// The softened potential energy of bodies in device memory, summed on the device in float64 with
// compensated sums (Simulation::potential_energy of the GPU simulations): the host's O(N^2) sum
// would cost hundreds of steps.
#include "nbody/bodies.hpp"
#include "nbody/gpu/cuda_resources.hpp"

namespace nbody::gpu {

inline constexpr const char* kDevicePotentialDescription =
    "on the device: float64 terms (device rsqrt), compensated sums of pairs j > i in at most 32 "
    "chunks of j, then per row, then (on the host) over rows";

// Its scratch for `count` bodies, made on the current device with the simulation (not in a timed
// diagnostic), and its kernels loaded then too.
template <class T>
class DevicePotential {
 public:
  explicit DevicePotential(int count);
  // The potential of bodies[0, count), as conserved_quantities sums it (to about 1e-16); waits for
  // `stream`, on which it runs.
  double sum(const Body<T>* bodies, double softening, const Stream& stream);

 private:
  int count_;
  DeviceBuffer<double> partials_;  // a row's sum per chunk of j
  DeviceBuffer<double> rows_;
  PinnedBuffer<double> host_rows_;
};

extern template class DevicePotential<float>;
extern template class DevicePotential<double>;

}  // namespace nbody::gpu
