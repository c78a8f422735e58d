// FMA chains compiled for sse4_2 only (no FMA instruction: xsimd::fma is a multiply and an add, the
// SSE peak). Called only after a run-time ISA check.
#include "fma_chains.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"

namespace nbody::peaks::detail {

float fma_chains_sse4_2(long iterations) {
  return run_fma_chains<float, xsimd::sse4_2, kChainsSixteenRegisters>(iterations, 0.5f, 0.25f);
}

double fma_chains_f64_sse4_2(long iterations) {
  return run_fma_chains<double, xsimd::sse4_2, kChainsSixteenRegisters>(iterations, 0.5, 0.25);
}

}  // namespace nbody::peaks::detail
