// The CUDA samples' nbody kernel (Samples/5_Domain_Specific/nbody/bodysystemcuda.cu, compiled
// unchanged from a cuda-samples checkout; never copied here) timed as its -benchmark mode times it:
// one launch per step (forces and the integration fused), interactions/s = N^2 x steps / time,
// device events, the best of 5 timed batches after 3 warm-up steps. Every block size the sample
// offers is tried, so the anchor is the sample at its best. Uniform bodies in the unit cube,
// masses 1/N, the sample's default softening 0.00125 (as eps^2, as the sample sets it); neither
// changes the instruction stream. Built and run by gpu/bench/cuda_samples_nbody.sh.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bodysystemcuda.cu"

namespace {

template <class T>
void time_sample(unsigned n, int block_size) {
  std::vector<T> positions(4 * std::size_t{n}), velocities(4 * std::size_t{n}, T(0));
  std::mt19937_64 generator(20261124);
  std::uniform_real_distribution<T> coordinate(-1, 1);
  for (unsigned i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) positions[4 * i + c] = coordinate(generator);
    positions[4 * i + 3] = T(1) / n;
  }
  DeviceData<T> data{};
  const std::size_t bytes = positions.size() * sizeof(T);
  checkCudaErrors(cudaMalloc(&data.dPos[0], bytes));
  checkCudaErrors(cudaMalloc(&data.dPos[1], bytes));
  checkCudaErrors(cudaMalloc(&data.dVel, bytes));
  checkCudaErrors(cudaMemcpy(data.dPos[0], positions.data(), bytes, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(data.dVel, velocities.data(), bytes, cudaMemcpyHostToDevice));
  data.numBodies = n;
  checkCudaErrors(setSofteningSquared(T(0.00125)));
  unsigned current = 0;
  const auto step = [&] {
    integrateNbodySystem<T>(&data, nullptr, current, 0.016f, 1.0f, n, 1, block_size, false);
    current = 1 - current;
  };
  for (int warm_up = 0; warm_up < 3; ++warm_up) step();
  // About a second of steps per batch.
  const int steps = std::max(1, static_cast<int>(0.5e12 / (double(n) * n)));
  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    checkCudaErrors(cudaEventRecord(start));
    for (int s = 0; s < steps; ++s) step();
    checkCudaErrors(cudaEventRecord(stop));
    checkCudaErrors(cudaEventSynchronize(stop));
    float ms = 0;
    checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms * 1e-3 / steps);
  }
  std::printf("cuda-samples nbody %s N=%u block=%d: %.4g s per step, %.4g x10^12 interactions/s\n",
              sizeof(T) == 8 ? "fp64" : "fp32", n, block_size, best, double(n) * n / best / 1e12);
  checkCudaErrors(cudaEventDestroy(start));
  checkCudaErrors(cudaEventDestroy(stop));
  checkCudaErrors(cudaFree(data.dPos[0]));
  checkCudaErrors(cudaFree(data.dPos[1]));
  checkCudaErrors(cudaFree(data.dVel));
}

}  // namespace

// harness fp32|fp64 N...
int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s fp32|fp64 N...\n", argv[0]);
    return 2;
  }
  const std::string precision = argv[1];
  for (int a = 2; a < argc; ++a) {
    const unsigned n = static_cast<unsigned>(std::strtoul(argv[a], nullptr, 10));
    for (const int block_size : {128, 256, 512}) {
      // The sample's kernel needs N to be a multiple of the block size (its tiles are whole).
      if (n % block_size != 0) continue;
      if (precision == "fp64") {
        time_sample<double>(n, block_size);
      } else {
        time_sample<float>(n, block_size);
      }
    }
  }
}
