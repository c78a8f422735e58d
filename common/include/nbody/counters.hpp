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

}  // namespace nbody
