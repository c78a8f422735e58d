// Stand-in for the CUDA samples' helper_cuda.h: the two macros bodysystemcuda.cu uses.
#pragma once
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define checkCudaErrors(call)                                                                 \
  do {                                                                                        \
    const cudaError_t status_ = (call);                                                       \
    if (status_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(status_), __FILE__, \
                   __LINE__);                                                                 \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define getLastCudaError(message) checkCudaErrors(cudaGetLastError())
