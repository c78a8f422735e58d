#pragma once
// The hand-made version 10 run with energy on both sides
// (tests/data/results-schema-10-energy-hand-made.json), and the same run as a host that cannot
// read its CPU's energy, for the tests of what the reports make of energy.
#include <string>

#include "nbody/results.hpp"

namespace nbody {

inline ResultsDocument energy_run() {
  return load_results(std::string(NBODY_SOURCE_DIR) +
                      "/tests/data/results-schema-10-energy-hand-made.json");
}

// The run as a host without RAPL would have written it: the CPU's meter unavailable with its
// reason, and no CPU timing with energy.
inline ResultsDocument energy_run_without_cpu_energy() {
  ResultsDocument doc = energy_run();
  for (EnergyMeterRecord& m : doc.energy) {
    if (m.device != DeviceKind::cpu) continue;
    m = EnergyMeterRecord{.device = DeviceKind::cpu,
                          .available = false,
                          .unavailable_reason = "no /sys/class/powercap, and no perf power PMU"};
  }
  for (ResultRecord& r : doc.results) {
    if (r.implementation.starts_with("cpu.") && r.kernel) r.kernel->energy.reset();
  }
  return doc;
}

}  // namespace nbody
