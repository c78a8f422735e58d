#pragma once
// CPU ceilings measured on the machine itself (FAIRNESS.md rule 6): float32 and float64 FMA
// throughput of each SIMD ISA on one core and on all cores, and memory bandwidth by a STREAM-style
// triad.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nbody/ceilings.hpp"

namespace nbody::peaks {

// The ISAs the suite's SIMD kernels choose between, narrowest first (ExecutionOptions::isa names).
std::vector<std::string> cpu_isa_names();
// Whether this CPU (and this build) can run `isa`.
bool cpu_isa_available(const std::string& isa);

struct FmaPeak {
  std::string isa;
  int threads = 0;
  Precision precision = Precision::f32;
  int lanes = 0;                          // lanes of `precision` per vector
  double flops_per_second = 0;            // 2 per lane per FMA (mul + add on SSE)
  double fp_instructions_per_second = 0;  // arithmetic instructions (SSE: muls and adds)
  std::string method;
};

// Best of a few timed runs of independent FMA chains in `precision`. `threads` = 1 or more (oneTBB
// arena); `seconds` is the target duration of one run. Empty when the ISA is not available.
std::optional<FmaPeak> measure_fma_peak(const std::string& isa, int threads, double seconds,
                                        Precision precision = Precision::f32);

struct BandwidthPeak {
  int threads = 0;
  std::size_t bytes_per_array = 0;
  double bytes_per_second = 0;
  std::string method;
};

// a[i] = b[i] + s * c[i] over three float64 arrays of `bytes_per_array` each, 24 bytes counted per
// element (STREAM convention: write-allocate traffic not counted). Best of `repetitions`.
BandwidthPeak measure_triad_bandwidth(int threads, std::size_t bytes_per_array, int repetitions);

// STREAM's rule, each array at least 4 times the last-level cache: 4 x L3 (as sysconf reports it),
// at least 64 MiB, at most 256 MiB (768 MiB in all: CI machines run tests side by side; virtual
// machines report the whole host's L3); 256 MiB when the cache size is unknown.
std::size_t default_triad_bytes_per_array();

// Logical CPUs oneTBB uses by default: "all cores" in the ceilings.
int all_cores_threads();

// The CPU's ceiling entries: cpu.fp32_flops.<isa>.{one_core,all_cores} and cpu.fp64_flops.<isa>...
// for every ISA this CPU has (`seconds_per_fma_run` per timed run) and cpu.memory_bandwidth.triad
// (`triad_bytes_per_array` per array, 0: the default), with warnings where the machine was busy
// meanwhile.
CeilingMeasurement measure_cpu_ceilings(double seconds_per_fma_run,
                                        std::size_t triad_bytes_per_array);

namespace detail {
// Chains per thread: 16 vector registers (SSE, AVX2) hold 14 besides the two operands, 32
// (AVX-512, NEON) 24.
inline constexpr int kChainsSixteenRegisters = 14;
inline constexpr int kChainsThirtyTwoRegisters = 24;
// One run of `chains` independent FMA chains per thread for `iterations` steps, per ISA of the
// list (nbody/isas.hpp); each is defined in its own translation unit, fma_chains_<id>.cpp,
// compiled for that ISA. Returns a value that depends on every chain so the work cannot be
// removed.
#define NBODY_ISA(id, ...)                \
  float fma_chains_##id(long iterations); \
  double fma_chains_f64_##id(long iterations);
#include NBODY_ISAS_INC
#undef NBODY_ISA
// FMA instructions (without FMA: mul + add pairs) one call of the above executes per iteration.
int fma_chains_per_iteration(const std::string& isa);
}  // namespace detail

}  // namespace nbody::peaks
