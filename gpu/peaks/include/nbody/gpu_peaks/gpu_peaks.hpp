#pragma once
// GPU ceilings measured on the device itself (FAIRNESS.md rule 6): float32 and float64 FMA
// throughput, MUFU reciprocal-square-root throughput, device memory bandwidth. Host-only header.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "nbody/ceilings.hpp"

namespace nbody::peaks {

struct GpuPeaks {
  std::string unavailable_reason;  // empty when measured
  int ordinal = 0;
  std::string device_name;
  int sm_count = 0;
  int compute_capability = 0;  // 90 for sm_90
  double max_sm_clock_hz = 0;  // cudaDevAttrClockRate
  double memory_clock_hz = 0;  // cudaDevAttrMemoryClockRate
  int memory_bus_bits = 0;
  double fp32_flops = 0;             // 2 per FFMA
  double fp64_flops = 0;             // 2 per DFMA
  double rsqrt_per_second = 0;       // MUFU.RSQ thread results
  double copy_bytes_per_second = 0;  // read + write
  std::size_t copy_bytes = 0;        // size of one copy
  // Interactions per second of the interaction's instruction mix alone (kInteractionMixFp32 FFMA +
  // one MUFU.RSQ each, register operands, no loads): what the issue slots allow once the rsqrt
  // shares them with the FP32 work.
  double interaction_mix_per_second = 0;
  std::string fma_method, rsqrt_method, copy_method, interaction_mix_method;
};

// Never throws; a failure (no device, no driver) becomes unavailable_reason.
GpuPeaks measure_gpu_peaks(int ordinal);

// The GPU's ceiling entries (gpu.fp32_flops.fma, gpu.fp64_flops.fma, gpu.mufu_rsqrt,
// gpu.fp32_interaction_mix, gpu.memory_bandwidth.d2d_copy) with their theoretical and datasheet
// figures, warnings where one reads far below its theoretical figure. Never throws.
CeilingMeasurement measure_gpu_ceilings(int ordinal);

// Published figures of a GPU known by its device name (H100 SXM / PCIe / NVL, H200).
struct GpuDatasheet {
  double fp32_flops = 0, fp64_flops = 0, memory_bandwidth = 0;
  const char* source = "";
};
std::optional<GpuDatasheet> gpu_datasheet(std::string_view device_name);

// Work with a known instruction count, to check counters against: one launch of the float32 FMA
// kernel of the ceiling with `blocks` x `threads` threads, each running kFmaChains chains for
// `iterations` steps, i.e. exactly blocks * threads * kFmaChains * iterations FFMA instructions
// (checked in the SASS: docs/perf-notes.md).
inline constexpr int kFmaChains = 8;
// FP32 instructions of one interaction in the fewest-instruction form (physics.hpp): 3 FADD +
// 3 FFMA + 3 FMUL + 3 FFMA; with its MUFU.RSQ, 13 issue slots.
inline constexpr int kInteractionMixFp32 = 12;
struct KnownWork {
  std::string error;  // empty on success
  double ffma_thread_instructions = 0;
  double seconds = 0;
};
KnownWork run_known_fma_work(int ordinal, int blocks, int threads, int iterations);

// Memory traffic with a known size, to check DRAM counters against: one launch of a copy kernel
// that reads `bytes` from one device buffer and writes them to another (each 16-byte word once).
// The buffers are allocated and filled first; `observe` then gets a function that launches the
// copy and waits for it (a test wraps it in the profiler). With `bytes` far above the L2 size,
// DRAM reads and writes are each close to `bytes`.
struct KnownTraffic {
  std::string error;  // empty on success
  double bytes = 0;
  double l2_bytes = 0;  // cudaDevAttrL2CacheSize
};
KnownTraffic run_known_copy_work(int ordinal, std::size_t bytes,
                                 const std::function<void(const std::function<void()>&)>& observe);

}  // namespace nbody::peaks
