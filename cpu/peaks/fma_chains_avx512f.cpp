// FMA chains compiled for avx512f only (512-bit FMA). Called only after a run-time ISA check.
#include "fma_chains.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"

namespace nbody::peaks::detail {

float fma_chains_avx512f(long iterations) {
  return run_fma_chains<float, xsimd::avx512f, kChainsThirtyTwoRegisters>(iterations, 0.5f, 0.25f);
}

double fma_chains_f64_avx512f(long iterations) {
  return run_fma_chains<double, xsimd::avx512f, kChainsThirtyTwoRegisters>(iterations, 0.5, 0.25);
}

}  // namespace nbody::peaks::detail
