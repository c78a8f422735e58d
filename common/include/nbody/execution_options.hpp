#pragma once
#include <optional>
#include <string>
#include <vector>

#include "nbody/target_range.hpp"

namespace nbody {

// Options a user can set for a run; each implementation uses those that apply to it.
struct ExecutionOptions {
  int threads = 0;     // CPU threads; 0 = all the machine has
  std::string isa;     // CPU SIMD ISA to force ("sse4.2", "avx2", "avx512f"); empty = widest
  int gpu_device = 0;  // CUDA device ordinal
  // Several GPUs driven by this process (`--gpus`, issue 15), each computing a slice of the
  // targets, NCCL all-gathering between them. Empty: gpu_device alone.
  std::vector<int> gpu_devices;
  // The bodies whose accelerations a run computes, from all N sources: a rank's or a device's
  // slice when the bodies are decomposed by target range (issue 15). Empty: all of them.
  std::optional<TargetRange> targets;
};

}  // namespace nbody
