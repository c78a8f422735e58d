#pragma once
// Figures derived from a hot-loop census (the "loop.*" metrics of the disassembly counter source)
// and the measured ceilings: counted flops per interaction, GFLOP/s counted and at 20 flops per
// interaction, fraction of the measured peak, instructions per interaction and the kernel's own
// instruction-bound limit (FAIRNESS.md rules 4 and 6). Pure arithmetic, tested without hardware.
#include <cstddef>
#include <map>
#include <string>

#include "nbody/counters.hpp"

namespace nbody::peaks {

DerivedFigures derive_cpu_figures(const std::map<std::string, double>& metrics,
                                  const ImplementationInfo& info, std::size_t n,
                                  const Ceilings& ceilings);

}  // namespace nbody::peaks
