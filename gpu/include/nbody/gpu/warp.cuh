#pragma once
// Warp-level helpers shared by the shuffle-based kernels.
#include <cuda_runtime.h>

#include "nbody/bodies.hpp"

namespace nbody::gpu {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned kFullWarpMask = 0xffffffffu;

// Body `lane`'s copy of `body`, for every lane of a full warp.
template <class T>
__device__ __forceinline__ Body<T> shuffle_body(const Body<T>& body, int lane) {
  return {__shfl_sync(kFullWarpMask, body.x, lane), __shfl_sync(kFullWarpMask, body.y, lane),
          __shfl_sync(kFullWarpMask, body.z, lane), __shfl_sync(kFullWarpMask, body.m, lane)};
}

}  // namespace nbody::gpu
