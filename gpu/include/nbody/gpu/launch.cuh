#pragma once
// The one launch wrapper of the GPU formulations: a formulation file holds its __global__ kernel
// and its LaunchShape, and `launch(kernel, shape)` turns them into the ForceKernelFactory that
// make_gpu_implementation takes. (gpu.tuned, which plans split-j and a reduction per size, keeps a
// ForceKernel of its own.)
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "nbody/gpu/gpu_run.hpp"

namespace nbody::gpu {

template <class T>
using ForceKernelFunction = void (*)(ForceArgs<T>);

struct LaunchShape {
  int block_size = 256;
  int padding_multiple = 1;               // bodies are padded to a multiple of this
  std::size_t shared_memory_bytes = 0;    // static shared memory per block, for the record
  bool zero_accelerations_first = false;  // kernels that accumulate (atomics) start from zero,
                                          // inside the timed region: part of their cost
  // The grid for `count` bodies (symmetric formulations, which compute every body); empty: one
  // thread per padded target, 1-D. May throw std::invalid_argument for a count the formulation
  // cannot launch.
  std::function<dim3(int count)> grid;
  // Facts particular to the formulation for `count` bodies, for the run's details().
  std::function<std::map<std::string, std::string>(int count)> extra;
};

template <class T>
class LaunchedKernel final : public ForceKernel<T> {
 public:
  LaunchedKernel(ForceKernelFunction<T> kernel, LaunchShape shape, int count, int target_count)
      : kernel_(kernel),
        shape_(std::move(shape)),
        count_(count),
        grid_(shape_.grid
                  ? shape_.grid(count)
                  : dim3(static_cast<unsigned>(
                        (round_up(target_count, shape_.padding_multiple) + shape_.block_size - 1) /
                        shape_.block_size))) {}

  int padding_multiple() const override { return shape_.padding_multiple; }

  void enqueue(const ForceArgs<T>& args, cudaStream_t stream) override {
    if (shape_.zero_accelerations_first) {
      check_cuda(cudaMemsetAsync(
          args.accelerations, 0,
          static_cast<std::size_t>(args.padded_target_count) * sizeof(Vec3<T>), stream));
    }
    kernel_<<<grid_, shape_.block_size, 0, stream>>>(args);
    check_launch();
  }

  LaunchDescription describe() const override {
    LaunchDescription launch;
    launch.grid = grid_;
    launch.block = dim3(static_cast<unsigned>(shape_.block_size));
    launch.shared_memory_bytes = shape_.shared_memory_bytes;
    if (shape_.extra) launch.extra = shape_.extra(count_);
    return launch;
  }

 private:
  ForceKernelFunction<T> kernel_;
  LaunchShape shape_;
  int count_;
  dim3 grid_;
};

template <class T>
ForceKernelFactory<T> launch(ForceKernelFunction<T> kernel, LaunchShape shape) {
  return [kernel, shape = std::move(shape)](const DeviceContext&, int count, int target_count) {
    return std::unique_ptr<ForceKernel<T>>(
        std::make_unique<LaunchedKernel<T>>(kernel, shape, count, target_count));
  };
}

}  // namespace nbody::gpu
