#pragma once
// The CPU packages' energy, and their DRAM's, from RAPL: read through powercap
// (/sys/class/powercap/intel-rapl:N) where it is readable, else through the perf power PMU. AMD
// processors on recent kernels show the same interfaces.
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "nbody/energy_meter.hpp"

namespace nbody::peaks {

// Where RAPL is looked for: the powercap tree first, the perf power PMU second. Defaults are the
// system's; NBODY_FAIR_POWERCAP_ROOT and NBODY_FAIR_PERF_POWER_ROOT (environment) replace them, so
// tests can use a fake tree.
struct RaplPaths {
  std::filesystem::path powercap = "/sys/class/powercap";
  std::filesystem::path perf_power = "/sys/bus/event_source/devices/power";
  static RaplPaths from_environment();
};

// The CPU packages (physical_package_id) of the CPUs this process may run on (sched_getaffinity
// and /sys/devices/system/cpu/cpuN/topology/physical_package_id); {0} when unreadable.
std::set<int> packages_of_this_process();

// A meter over the packages given and their DRAM where it has a counter of its own; domains
// "package-N" and "package-N dram", in the order of the packages. Null, with `why_not` set to one
// line saying what was looked for and not found, where neither interface can read every package
// given (a meter over only some packages would undercount). Never throws.
std::unique_ptr<EnergyMeter> make_rapl_meter(const RaplPaths& paths, const std::set<int>& packages,
                                             std::string& why_not);

}  // namespace nbody::peaks
