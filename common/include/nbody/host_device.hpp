#pragma once
// Lets one function body serve host code (g++) and device code (nvcc).
#if defined(__CUDACC__)
#define NBODY_HOST_DEVICE __host__ __device__
#define NBODY_FORCE_INLINE __forceinline__
#else
#define NBODY_HOST_DEVICE
#define NBODY_FORCE_INLINE inline __attribute__((always_inline))
#endif
