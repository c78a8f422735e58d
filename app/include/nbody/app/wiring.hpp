#pragma once
// The program's wiring: what this build contains, from cpu/ and gpu/ (the only place that knows
// both, and whether CUDA was built).
#include <memory>
#include <vector>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/counters.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"

namespace nbody {

// Every formulation this build has.
Registry make_default_registry();

// The counter sources this build has (CUPTI when built with CUDA, the hot loop's disassembly for
// CPU kernels).
std::vector<std::unique_ptr<CounterSource>> make_counter_sources();

// The CUDA devices present (name, SMs, clocks, memory, driver and runtime versions); none on a
// build without CUDA or a machine without a GPU.
std::vector<GpuDescription> describe_gpus();

// How GPU timings on CUDA device `ordinal` observe the GPU's state (NVML), or why they cannot.
GpuObservation observe_gpu(int ordinal);

}  // namespace nbody
