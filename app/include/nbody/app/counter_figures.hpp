#pragma once
// Figures derived from raw counters (FAIRNESS.md rules 4 and 6): counted flops per interaction,
// GFLOP/s counted and at 20 flops per interaction, fraction of the measured (and datasheet) peak,
// memory throughput and arithmetic intensity (GPU), instructions per interaction and the kernel's
// own instruction-bound limit. Pure arithmetic over a CounterReadout's metrics and the ceilings
// (nbody/ceilings.hpp), so it is tested without any hardware.
#include <cstddef>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "nbody/registry.hpp"

namespace nbody {

// Pairs a kernel evaluates for N bodies: N^2, or N(N-1)/2 for symmetric kernels.
double pairs_evaluated(const ImplementationInfo& info, std::size_t n);

// From CUPTI metrics (nbody/profiler/cupti.hpp kernel_metrics(), plus "sm_count").
std::map<std::string, double> derive_gpu_figures(const std::map<std::string, double>& metrics,
                                                 const ImplementationInfo& info, std::size_t n,
                                                 const nlohmann::json& ceilings);

// From a hot-loop census ("loop.*" metrics of the disassembly counter source).
std::map<std::string, double> derive_cpu_figures(const std::map<std::string, double>& metrics,
                                                 const ImplementationInfo& info, std::size_t n,
                                                 const nlohmann::json& ceilings);

}  // namespace nbody
