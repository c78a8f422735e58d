#pragma once
// Hardware counters and measured ceilings (FAIRNESS.md rules 4 and 6). The runner reads counters
// through CounterSource in a separate pass after timing, since profiling perturbs time.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nbody/registry.hpp"

namespace nbody {

struct CounterReadout {
  std::string source;                     // e.g. "cupti-range-profiler", "disassembly"
  std::string unavailable_reason;         // empty when counters were read
  std::map<std::string, double> metrics;  // raw counter name -> value
  std::map<std::string, double> derived;  // counted flops per interaction, fraction of peak, ...
};

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  virtual bool applies_to(const ImplementationInfo& info) const = 0;
  // Reads counters over one kernel-scope evaluation of `run` on `n` bodies. Never throws: a
  // failure (no permission, no library, MIG, ...) becomes unavailable_reason.
  virtual CounterReadout read(PreparedRun& run, const ImplementationInfo& info, std::size_t n,
                              const nlohmann::json& ceilings) = 0;
};

// The counter sources this build has (CUPTI when built with CUDA, static counts for CPU kernels).
std::vector<std::unique_ptr<CounterSource>> make_counter_sources();

// The CUDA devices present (name, SMs, clocks, memory, driver and runtime versions); an empty
// array on a build without CUDA or a machine without a GPU.
nlohmann::json describe_gpus();

// Ceilings measured on this machine (cached per machine), as JSON for results.json; `null` when
// none could be measured. `remeasure` ignores the cache.
nlohmann::json measure_ceilings(bool remeasure);

}  // namespace nbody
