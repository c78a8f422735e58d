// The GPU's float64 x^(-3/2) (DeviceInvSqrt::cubed, nbody/gpu/device_math.cuh) against long double
// on the host, over the whole range a softened squared distance can take (normal doubles from
// kSmallestSoftening^2 up), and the rough rsqrt it starts from: the one-Newton-step argument needs
// that rough value's relative error far below 2^-18. Skips where no CUDA device is present.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "nbody/gpu/device_math.cuh"
#include "nbody/physics.hpp"

namespace nbody {
namespace {

__global__ void evaluate(const double* x, double* cubed, double* rough, int count) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= count) return;
  cubed[k] = inv_sqrt_cubed(x[k], DeviceInvSqrt{});
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x[k]));
  rough[k] = y;
}

// x from kSmallestSoftening^2 to 1e200 (beyond about 1e205, x^(-3/2) is no longer a normal double),
// log-uniform, plus every power of two and its neighbours (the rough rsqrt works on the exponent's
// parity and the high mantissa bits).
std::vector<double> arguments() {
  std::vector<double> x;
  std::mt19937_64 generator(20261124);
  const double lo = std::log(kSmallestSoftening * kSmallestSoftening);
  std::uniform_real_distribution<double> exponent(lo, std::log(1e200));
  for (int k = 0; k < (1 << 20); ++k) x.push_back(std::exp(exponent(generator)));
  for (int e = -125; e <= 664; ++e) {
    const double p = std::ldexp(1.0, e);
    x.insert(x.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, 1e308)});
  }
  return x;
}

template <class T>
struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t n) { cudaMalloc(&data, n * sizeof(T)); }
  ~DeviceBuffer() { cudaFree(data); }
  T* data = nullptr;
};

TEST(DeviceMath, Float64InvSqrtCubedIsWithinTwoUlpOverTheWholeRange) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no CUDA device";
  }
  const std::vector<double> x = arguments();
  const int n = static_cast<int>(x.size());
  DeviceBuffer<double> x_d(x.size()), cubed_d(x.size()), rough_d(x.size());
  ASSERT_EQ(cudaMemcpy(x_d.data, x.data(), n * sizeof(double), cudaMemcpyHostToDevice),
            cudaSuccess);
  evaluate<<<(n + 255) / 256, 256>>>(x_d.data, cubed_d.data, rough_d.data, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<double> cubed(x.size()), rough(x.size());
  ASSERT_EQ(cudaMemcpy(cubed.data(), cubed_d.data, n * sizeof(double), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(rough.data(), rough_d.data, n * sizeof(double), cudaMemcpyDeviceToHost),
            cudaSuccess);

  constexpr long double u = std::numeric_limits<double>::epsilon() / 2;  // 2^-53
  long double worst_cubed = 0, worst_rough = 0;
  for (int k = 0; k < n; ++k) {
    const long double s = 1.0L / std::sqrt(static_cast<long double>(x[k]));
    worst_cubed = std::max(worst_cubed, std::fabs(cubed[k] / (s * s * s) - 1.0L) / u);
    worst_rough = std::max(worst_rough, std::fabs(rough[k] / s - 1.0L));
  }
  std::printf("x^(-3/2): largest relative error %.3Lf u (u = 2^-53); rough rsqrt: 2^%.2Lf\n",
              worst_cubed, std::log2(worst_rough));
  RecordProperty("largest_error_in_u", static_cast<double>(worst_cubed));
  EXPECT_LT(worst_rough, std::ldexp(1.0L, -18)) << "one Newton step is not enough from it";
  EXPECT_LE(worst_cubed, 4.0L) << "4 u: 2 ulp";
}

}  // namespace
}  // namespace nbody
