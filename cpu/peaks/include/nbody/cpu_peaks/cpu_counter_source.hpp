#pragma once
// Counters of the CPU kernels: the instruction census of each kernel's hot loop, found by sampling
// and read from the disassembly of the running binary (nbody/cpu_peaks/hot_loop.hpp). Raw counts go
// into CounterReadout::metrics, the figures derived from them
// (nbody/cpu_peaks/cpu_counter_figures.hpp) into CounterReadout::derived.
#include <memory>

#include "nbody/counters.hpp"

namespace nbody::peaks {

std::unique_ptr<CounterSource> make_cpu_disassembly_counter_source();

}  // namespace nbody::peaks
