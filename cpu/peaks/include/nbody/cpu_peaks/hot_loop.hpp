#pragma once
// Finds the loop a CPU kernel spends its time in, in the code that really runs: the program
// counter of every thread is sampled (SIGPROF, process CPU time) while the kernel runs, the
// hottest function is looked up in the symbol table of the executable or library holding it
// (`nm`), disassembled (`objdump`), and the innermost loop holding most samples is counted.
// Needs binutils at run time and an unstripped binary; says why when it cannot.
#include <cstddef>
#include <functional>
#include <string>

#include "nbody/cpu_peaks/loop_census.hpp"

namespace nbody::peaks {

struct HotLoop {
  std::string unavailable_reason;  // empty on success
  LoopCensus loop;
  std::string binary;       // file holding the loop
  std::size_t samples = 0;  // program-counter samples taken
  std::size_t samples_in_function = 0;
  std::size_t samples_in_loop = 0;
  int evaluations = 0;                // calls of `evaluate` while sampling
  double seconds_per_evaluation = 0;  // mean of what `evaluate` returned
};

// Calls `evaluate` (which returns its own timing in seconds) until `min_seconds` of wall time have
// passed (at least once) while sampling, then analyses the samples. Never throws.
HotLoop find_hot_loop(const std::function<double()>& evaluate, double min_seconds);

}  // namespace nbody::peaks
