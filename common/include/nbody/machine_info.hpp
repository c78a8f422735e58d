#pragma once
// What the run ran on (FAIRNESS.md rule 7), and what the machine's CPUs did meanwhile (rule 5).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nbody/results.hpp"

namespace nbody {

MachineRecord describe_machine();
// Bytes of memory available for new allocations (MemAvailable), 0 if unknown.
std::uint64_t available_memory_bytes();
// The current UTC time as ISO 8601.
std::string utc_timestamp();

// CPU time of the whole machine since boot (/proc/stat, every online CPU) and of this process (all
// its threads), at one instant: two samples bracket a measurement (conditions_between).
struct CpuActivity {
  double busy_seconds = 0;   // user, nice, system, irq, softirq: not idle, iowait or steal
  double steal_seconds = 0;  // taken by the hypervisor for other guests
  double own_seconds = 0;    // this process
  double wall_seconds = 0;   // a steady clock
  int online_cpus = 0;
  std::optional<double> clock_mhz;  // mean "cpu MHz" of /proc/cpuinfo, where the machine shows it
};
// Empty where /proc/stat cannot be read.
std::optional<CpuActivity> sample_cpu_activity();

// Above this share of the machine's CPU time taken by other processes and the hypervisor, a
// measurement (or a ceiling) is flagged as disturbed: a tenth of a 16-core machine is more than
// one core, of a 2-core machine a fifth of one.
inline constexpr double kMaxOtherCpuShare = 0.10;

// What other processes and the hypervisor took of the machine's CPU time between two samples.
MeasurementConditions conditions_between(const CpuActivity& before, const CpuActivity& after);

}  // namespace nbody
