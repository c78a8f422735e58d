#pragma once
// The ceilings of this machine (FAIRNESS.md rule 6): cpu/ and gpu/ measure their own entries,
// assembled here into one document and cached per machine.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

#include "nbody/ceilings.hpp"

namespace nbody {

struct CeilingOptions {
  bool remeasure = false;
  // Where the per-machine cache lives; empty: $NBODY_FAIR_CACHE_DIR, else
  // $XDG_CACHE_HOME/nbody-fair, else ~/.cache/nbody-fair. A cache that cannot be written is
  // skipped.
  std::filesystem::path cache_directory;
  bool measure_cpu = true;
  bool measure_gpu = true;
  double seconds_per_fma_run = 0.1;       // one timed run of the FMA kernel, per ISA and width
  std::size_t triad_bytes_per_array = 0;  // 0: peaks::default_triad_bytes_per_array()
  int gpu_device = 0;
  // The GPUs a run drives together (--gpus): with two or more, NCCL's all-gather between them is
  // measured too (gpu.all_gather.*), each time: it depends on the set, so it is never cached.
  std::vector<int> gpu_devices;
};

// Measures (or reads from the cache) the ceilings; empty when nothing could be measured. Ceilings
// with warnings are used for their run only, never cached. Never throws.
std::optional<Ceilings> measure_ceilings(const CeilingOptions& options);

// The same with the default options.
std::optional<Ceilings> measure_ceilings(bool remeasure);

// NCCL's all-gather between `gpu_devices` alone, as a document of its own entries (or their
// reasons), for a run on several GPUs that measures no other ceiling (--no-counters, simulate):
// the scaling study's model reads it. Empty for fewer than two GPUs. Never throws.
std::optional<Ceilings> measure_exchange_ceilings(const std::vector<int>& gpu_devices);

}  // namespace nbody
