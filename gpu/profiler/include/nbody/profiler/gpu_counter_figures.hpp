#pragma once
// Figures derived from CUPTI metrics (nbody/profiler/cupti.hpp kernel_metrics(), plus "sm_count")
// and the measured ceilings: counted flops per interaction, GFLOP/s counted and at 20 flops per
// interaction, fraction of the measured (and datasheet) peak, pipe utilisation, memory throughput
// and arithmetic intensity, instructions per interaction and the kernel's own instruction-bound
// limit (FAIRNESS.md rules 4 and 6). Pure arithmetic, tested without any hardware.
#include <cstddef>
#include <map>
#include <string>

#include "nbody/counters.hpp"

namespace nbody::profiler {

DerivedFigures derive_gpu_figures(const std::map<std::string, double>& metrics,
                                  const ImplementationInfo& info, std::size_t n,
                                  const Ceilings& ceilings);

}  // namespace nbody::profiler
