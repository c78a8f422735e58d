#pragma once
// The device's leapfrog updates: the kick and kick+drift kernels of the simulation, and the store
// a force kernel that fuses the leapfrog (ForceKernel::fuses_leapfrog) ends with. One arithmetic
// (nbody/leapfrog_updates.hpp) for both, so a fused step rounds as the separate kernels do.
#include "nbody/gpu/gpu_run.hpp"
#include "nbody/leapfrog_updates.hpp"

namespace nbody::gpu {

// Stores the i-th target's final acceleration `a` and, where `leapfrog` asks for it (real targets
// only), integrates: v += a dt/2 closes this step; unless it is the last one, v += a dt/2 and
// x' = x + v dt open the next, into leapfrog.next_bodies (indexed by body, like args.bodies).
template <class T>
__device__ __forceinline__ void store_with_leapfrog(const ForceArgs<T>& args,
                                                    const LeapfrogArgs<T>& leapfrog, int i,
                                                    const Vec3<T>& a) {
  args.accelerations[i] = a;
  if (leapfrog.velocities == nullptr || i >= args.target_count) return;
  Vec3<T> v = kicked(leapfrog.velocities[i], a, leapfrog.half_dt);
  if (leapfrog.next_bodies != nullptr) {
    v = kicked(v, a, leapfrog.half_dt);
    const int body = args.first_target + i;
    leapfrog.next_bodies[body] = drifted(args.bodies[body], v, leapfrog.dt);
  }
  leapfrog.velocities[i] = v;
}

// The separate kernels of a step, for force kernels that do not fuse the leapfrog: the opening
// kick and drift, and the closing kick, of bodies[0, count) (a slice's, offset by its caller).
inline constexpr int kIntegrationBlock = 256;

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

}  // namespace nbody::gpu
