// FMA chains compiled for avx2 only (256-bit FMA3). Called only after a run-time ISA check.
#include "fma_chains.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"

namespace nbody::peaks::detail {

float fma_chains_avx2(long iterations) {
  return run_fma_chains<float, xsimd::fma3<xsimd::avx2>, kChainsSixteenRegisters>(iterations, 0.5f,
                                                                                  0.25f);
}

double fma_chains_f64_avx2(long iterations) {
  return run_fma_chains<double, xsimd::fma3<xsimd::avx2>, kChainsSixteenRegisters>(iterations, 0.5,
                                                                                   0.25);
}

}  // namespace nbody::peaks::detail
