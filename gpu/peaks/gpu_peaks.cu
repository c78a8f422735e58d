#include <algorithm>
#include <cstdio>
#include <string>

#include <cuda_runtime.h>

#include "nbody/gpu_peaks/gpu_peaks.hpp"

namespace nbody::peaks {
namespace {

// Failures travel as this exception inside this file only; the public functions catch it.
struct CudaFailure {
  std::string what;
};

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw CudaFailure{std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) + ")"};
  }
}

__device__ __forceinline__ float fused_multiply_add(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fused_multiply_add(double a, double b, double c) {
  return __fma_rn(a, b, c);
}

// The chains' start values come from a conversion, not an FMA, so instruction counts stay exact.
template <class T>
__device__ __forceinline__ void start_chains(T (&x)[kFmaChains], int offset) {
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) x[k] = static_cast<T>(threadIdx.x + k + offset);
}

// The sum is stored so that the compiler keeps every chain.
template <class T>
__device__ __forceinline__ void store_sum(T* out, const T (&x)[kFmaChains]) {
  T sum = x[0];
#pragma unroll
  for (int k = 1; k < kFmaChains; ++k) sum += x[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// MUFU.RSQ alone: the flush-to-zero PTX instruction has no denormal fix-up around it.
__device__ __forceinline__ void rsqrt_in_place(float& x) {
  asm("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x));
}

// kFmaChains independent chains per thread; acc = acc * a + b converges to b / (1 - a), so values
// stay normal.
template <class T>
__global__ void fma_chains_kernel(T* out, T a, T b, int iterations) {
  T acc[kFmaChains];
  start_chains(acc, 0);
#pragma unroll 16
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) acc[k] = fused_multiply_add(acc[k], a, b);
  }
  store_sum(out, acc);
}

// MUFU.RSQ alone. x converges to 1 (a fixed point of 1/sqrt), so inputs stay normal.
__global__ void rsqrt_chains_kernel(float* out, int iterations) {
  float x[kFmaChains];
  start_chains(x, 1);
#pragma unroll 16
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) rsqrt_in_place(x[k]);
  }
  store_sum(out, x);
}

// The interaction's arithmetic with nothing else: per step and chain, kInteractionMixFp32 FFMAs and
// one MUFU.RSQ (the 12 FP32 instructions and the rsqrt of one interaction), operands in registers
// and constants only, no loads. Its rate is the most interactions per second this GPU issues with
// the interaction's instruction mix; the nbody kernels add loads, loop overhead and register-bank
// conflicts. Where the rsqrt sits matters: with kSpread, chain k takes its rsqrt before its
// (12 k / 8)-th FFMA, so the 8 rsqrts of a step are spread over it; without, all 8 come after the
// FFMAs, as in an nbody loop whose bodies are in step. x -> a x + b pulls x towards
// b / (1 - a) = 0.5 and rsqrt keeps it positive: values stay normal.
template <bool kSpread>
__global__ void interaction_mix_kernel(float* out, float a, float b, int iterations) {
  float x[kFmaChains];
  start_chains(x, 1);
#pragma unroll 2
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int f = 0; f < kInteractionMixFp32; ++f) {
#pragma unroll
      for (int k = 0; k < kFmaChains; ++k) {
        if (kSpread && f == k * kInteractionMixFp32 / kFmaChains) rsqrt_in_place(x[k]);
        x[k] = fused_multiply_add(x[k], a, b);
      }
    }
    if constexpr (!kSpread) {
#pragma unroll
      for (int k = 0; k < kFmaChains; ++k) rsqrt_in_place(x[k]);
    }
  }
  store_sum(out, x);
}

// One 16-byte word per thread (a grid-stride loop): the copy of run_known_copy_work.
__global__ void copy_words_kernel(const float4* __restrict__ source, float4* destination,
                                  std::size_t words) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += stride) {
    destination[i] = source[i];
  }
}

class EventPair {
 public:
  EventPair() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  template <class F>
  double seconds(F&& enqueue) {
    check(cudaEventRecord(start_), "cudaEventRecord");
    enqueue();
    check(cudaGetLastError(), "kernel launch");
    check(cudaEventRecord(stop_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes) { check(cudaMalloc(&data_, bytes), "cudaMalloc"); }
  ~DeviceMemory() { cudaFree(data_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

struct Launch {
  int blocks = 0, threads = 256;
};

// Full occupancy: 2048 resident threads per SM on sm_90.
Launch full_device(int sm_count) {
  return {sm_count * 8, 256};
}

// Best time of `runs` launches sized to about `target_s` each, after calibration.
template <class Enqueue>
double best_seconds_for(EventPair& events, Enqueue&& enqueue_iterations, int& iterations,
                        double target_s) {
  iterations = 256;
  double s = 0;
  while ((s = events.seconds([&] { enqueue_iterations(iterations); })) < 0.005 &&
         iterations < (1 << 28)) {
    iterations *= 4;
  }
  iterations = std::max(16, static_cast<int>(std::min(1e9, iterations * target_s / s)));
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double t = events.seconds([&] { enqueue_iterations(iterations); });
    if (run == 0 || t < best) best = t;
  }
  return best;
}

int attribute(cudaDeviceAttr what, int ordinal) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, what, ordinal), "cudaDeviceGetAttribute");
  return value;
}

// The device's name, SM count, compute capability, clocks and bus width, as it reports them.
void describe_device(GpuPeaks& peaks, int ordinal) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties");
  peaks.device_name = properties.name;
  peaks.sm_count = properties.multiProcessorCount;
  peaks.compute_capability = properties.major * 10 + properties.minor;
  peaks.max_sm_clock_hz = 1e3 * attribute(cudaDevAttrClockRate, ordinal);
  peaks.memory_clock_hz = 1e3 * attribute(cudaDevAttrMemoryClockRate, ordinal);
  peaks.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
}

constexpr double kTargetSeconds = 0.05;  // of one timed launch

// The ceiling kernels' launches on the full device, timed: the FMA chains in float32 and float64,
// the MUFU.RSQ chains and the interaction's instruction mix, each the best of 3 launches of about
// kTargetSeconds.
class ComputeTimer {
 public:
  ComputeTimer(int sm_count, EventPair& events)
      : launch_(full_device(sm_count)),
        out_(static_cast<std::size_t>(launch_.blocks) * launch_.threads * sizeof(double)),
        events_(events) {}

  Launch launch() const { return launch_; }
  double threads() const { return static_cast<double>(launch_.blocks) * launch_.threads; }

  template <class T>
  double fma_flops() {
    const double seconds = best_seconds([&](int it) {
      fma_chains_kernel<T><<<launch_.blocks, launch_.threads>>>(out_.as<T>(), T(0.5), T(0.25), it);
    });
    return 2.0 * threads() * kFmaChains * iterations_ / seconds;
  }

  double rsqrt_per_second() {
    const double seconds = best_seconds([&](int it) {
      rsqrt_chains_kernel<<<launch_.blocks, launch_.threads>>>(out_.as<float>(), it);
    });
    return threads() * kFmaChains * iterations_ / seconds;
  }

  // Interactions per second of the instruction mix, launched as `mix_launch`.
  template <bool kSpread>
  double interaction_mix_per_second(Launch mix_launch) {
    const double seconds = best_seconds([&](int it) {
      interaction_mix_kernel<kSpread>
          <<<mix_launch.blocks, mix_launch.threads>>>(out_.as<float>(), 0.5f, 0.25f, it);
    });
    return static_cast<double>(mix_launch.blocks) * mix_launch.threads * kFmaChains * iterations_ /
           seconds;
  }

 private:
  template <class Enqueue>
  double best_seconds(Enqueue&& enqueue_iterations) {
    return best_seconds_for(events_, enqueue_iterations, iterations_, kTargetSeconds);
  }

  Launch launch_;
  DeviceMemory out_;  // every thread's sum, stored so that the chains are kept
  EventPair& events_;
  int iterations_ = 0;  // of the launches just timed
};

// FMA (float32, float64), MUFU.RSQ and interaction-mix rates on the full device, and their methods.
void measure_compute_peaks(GpuPeaks& peaks, ComputeTimer& timer) {
  const Launch launch = timer.launch();
  peaks.fp32_flops = timer.fma_flops<float>();
  peaks.fp64_flops = timer.fma_flops<double>();
  peaks.rsqrt_per_second = timer.rsqrt_per_second();
  const double mix_in_step = timer.interaction_mix_per_second<false>(launch);
  const double mix_spread = timer.interaction_mix_per_second<true>(launch);
  // 4 warps per scheduler, the occupancy of gpu.tuned: does the mix need more to hide latency?
  const double mix_spread_16 = timer.interaction_mix_per_second<true>({peaks.sm_count * 4, 128});
  peaks.interaction_mix_per_second = std::max(mix_in_step, mix_spread);

  char buffer[512];
  std::snprintf(buffer, sizeof buffer,
                "%d x %d threads, %d independent FMA chains each, unrolled 16; best of 3 "
                "launches of about %.0f ms (device events)",
                launch.blocks, launch.threads, kFmaChains, 1e3 * kTargetSeconds);
  peaks.fma_method = buffer;
  std::snprintf(buffer, sizeof buffer,
                "%d x %d threads, %d independent rsqrt.approx.ftz.f32 (MUFU.RSQ) chains each; "
                "best of 3 launches of about %.0f ms",
                launch.blocks, launch.threads, kFmaChains, 1e3 * kTargetSeconds);
  peaks.rsqrt_method = buffer;
  std::snprintf(buffer, sizeof buffer,
                "%d x %d threads, %d independent chains each of %d FFMA + 1 MUFU.RSQ per "
                "interaction, register operands, no loads; the better of rsqrts spread over "
                "the step (%.3g /s; %.3g /s at 16 warps per SM) and all after it (%.3g /s); "
                "best of 3 launches of about %.0f ms",
                launch.blocks, launch.threads, kFmaChains, kInteractionMixFp32, mix_spread,
                mix_spread_16, mix_in_step, 1e3 * kTargetSeconds);
  peaks.interaction_mix_method = buffer;
}

// Device-to-device copy: as large as memory allows up to 1 GiB per buffer.
void measure_copy_bandwidth(GpuPeaks& peaks, EventPair& events) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const std::size_t copy_bytes =
      std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4) & ~std::size_t{0xFFFFF};
  DeviceMemory source(copy_bytes), destination(copy_bytes);
  check(cudaMemset(source.as<char>(), 1, copy_bytes), "cudaMemset");
  double best_copy = 0;
  for (int run = 0; run < 6; ++run) {  // the first is a warm-up
    const double t = events.seconds([&] {
      check(cudaMemcpyAsync(destination.as<char>(), source.as<char>(), copy_bytes,
                            cudaMemcpyDeviceToDevice),
            "cudaMemcpyAsync");
    });
    if (run == 1 || (run > 1 && t < best_copy)) best_copy = t;
  }
  peaks.copy_bytes = copy_bytes;
  peaks.copy_bytes_per_second = 2.0 * static_cast<double>(copy_bytes) / best_copy;
  char buffer[512];
  std::snprintf(buffer, sizeof buffer,
                "cudaMemcpy device to device of %zu MiB, bytes read + written, best of 5 "
                "(device events)",
                copy_bytes >> 20);
  peaks.copy_method = buffer;
}

}  // namespace

GpuPeaks measure_gpu_peaks(int ordinal) {
  GpuPeaks peaks;
  peaks.ordinal = ordinal;
  try {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (ordinal < 0 || ordinal >= count) {
      peaks.unavailable_reason = "no CUDA device " + std::to_string(ordinal);
      return peaks;
    }
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    describe_device(peaks, ordinal);
    EventPair events;
    // Its buffer stays allocated through the copy, whose size depends on the memory left.
    ComputeTimer timer(peaks.sm_count, events);
    measure_compute_peaks(peaks, timer);
    measure_copy_bandwidth(peaks, events);
  } catch (const CudaFailure& failure) {
    peaks.unavailable_reason = failure.what;
  }
  return peaks;
}

KnownWork run_known_fma_work(int ordinal, int blocks, int threads, int iterations) {
  KnownWork work;
  try {
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    DeviceMemory out(static_cast<std::size_t>(blocks) * threads * sizeof(float));
    EventPair events;
    work.seconds = events.seconds([&] {
      fma_chains_kernel<float><<<blocks, threads>>>(out.as<float>(), 0.5f, 0.25f, iterations);
    });
    work.ffma_thread_instructions =
        static_cast<double>(blocks) * threads * kFmaChains * static_cast<double>(iterations);
  } catch (const CudaFailure& failure) {
    work.error = failure.what;
  }
  return work;
}

KnownTraffic run_known_copy_work(int ordinal, std::size_t bytes,
                                 const std::function<void(const std::function<void()>&)>& observe) {
  KnownTraffic traffic;
  try {
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    int l2_bytes = 0, sm_count = 0;
    check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ordinal), "L2 size");
    check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal), "SM count");
    const std::size_t words = bytes / sizeof(float4);
    DeviceMemory source(words * sizeof(float4)), destination(words * sizeof(float4));
    check(cudaMemset(source.as<char>(), 1, words * sizeof(float4)), "cudaMemset");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const Launch launch = full_device(sm_count);
    observe([&] {
      copy_words_kernel<<<launch.blocks, launch.threads>>>(source.as<float4>(),
                                                           destination.as<float4>(), words);
      check(cudaGetLastError(), "kernel launch");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    });
    traffic.bytes = static_cast<double>(words * sizeof(float4));
    traffic.l2_bytes = l2_bytes;
  } catch (const CudaFailure& failure) {
    traffic.error = failure.what;
  }
  return traffic;
}

}  // namespace nbody::peaks
