// FMA chains in NEON (aarch64, 128-bit FMLA, 32 vector registers). Every ARMv8-A core has NEON.
#include "fma_chains.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"

namespace nbody::peaks::detail {

float fma_chains_neon64(long iterations) {
  return run_fma_chains<float, xsimd::neon64, kChainsThirtyTwoRegisters>(iterations, 0.5f, 0.25f);
}

double fma_chains_f64_neon64(long iterations) {
  return run_fma_chains<double, xsimd::neon64, kChainsThirtyTwoRegisters>(iterations, 0.5, 0.25);
}

}  // namespace nbody::peaks::detail
