#pragma once
// The GPU boards' energy, read through NVML's total-energy counter (FAIRNESS.md rule 10): the
// whole board (GPU, memory, regulators), in millijoules, updated about every 100 ms on an H100 or
// H200 (docs/perf-notes.md, Energy).
#include <memory>
#include <string>
#include <vector>

#include "nbody/energy_meter.hpp"

namespace nbody::gpu {

// A meter over the boards of CUDA devices `ordinals` (one domain each, "GPU <ordinal> board"), or
// null with `why_not` saying why (no NVML, a driver without the counter, a device NVML does not
// know). Never throws.
std::unique_ptr<EnergyMeter> make_gpu_energy_meter(const std::vector<int>& ordinals,
                                                   std::string& why_not);

}  // namespace nbody::gpu
