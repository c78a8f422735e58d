#pragma once
// The one place CUDA errors become exceptions: every runtime call and every launch goes through
// check_cuda, which throws std::runtime_error naming the CUDA error and where in the repository it
// was met (the build maps source paths to the repository's, -fmacro-prefix-map: no build
// machine's folder reaches a user).
#include <source_location>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace nbody::gpu {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t status,
                       std::source_location where = std::source_location::current()) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(status) + ": " +
                  cudaGetErrorString(status) + " (at " + where.file_name() + ":" +
                  std::to_string(where.line()) + ")");
}

// After each kernel launch: a bad configuration is reported by cudaGetLastError, not the launch.
inline void check_launch(std::source_location where = std::source_location::current()) {
  check_cuda(cudaGetLastError(), where);
}

}  // namespace nbody::gpu
