#pragma once
// The FMA-throughput kernel, included by one translation unit per ISA (each compiled with that
// ISA's flags, so no other code of the suite is built for a wider ISA than the CPU may have).
// Enough independent chains to cover FMA latency on every port: 4 cycles x 2 pipes needs 8;
// the chain count is as many as the ISA's registers allow besides the two operands.
#include <array>

#include <xsimd/xsimd.hpp>

#include "nbody/cpu_peaks/cpu_peaks.hpp"

namespace nbody::peaks::detail {

template <class T, class Arch, int kChains>
T run_fma_chains(long iterations, T multiplier, T addend) {
  using Batch = xsimd::batch<T, Arch>;
  std::array<Batch, kChains> acc;
  for (int k = 0; k < kChains; ++k) acc[k] = Batch(T(1) + T(0.125) * static_cast<T>(k));
  const Batch a(multiplier);
  const Batch b(addend);
  // acc = acc * a + b converges to b / (1 - a): values stay normal, so timing is data-independent.
  for (long i = 0; i < iterations; ++i) {
    // Fully unrolled, so every chain lives in a register (GCC stops at 16 on its own).
#pragma GCC unroll 32
    for (int k = 0; k < kChains; ++k) acc[k] = xsimd::fma(acc[k], a, b);
  }
  Batch sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum += acc[k];
  // Stored and summed in scalar: xsimd 8.1's AVX-512 horizontal add needs AVX-512DQ.
  alignas(64) std::array<T, Batch::size> lanes{};
  sum.store_aligned(lanes.data());
  T total = 0;
  for (const T lane : lanes) total += lane;
  return total;
}

}  // namespace nbody::peaks::detail
