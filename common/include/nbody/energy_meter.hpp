#pragma once
// Energy counters a measurement reads around its timed repetitions (FAIRNESS.md rule 10): a GPU
// board's (NVML's total energy), or the CPU packages' and their DRAM's (RAPL, through powercap or
// the perf power PMU). A meter only reads; what a run makes of the readings (its idle power, the
// counter's update period, joules per evaluation) is measured here, alike for every meter.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/properties.hpp"
#include "nbody/results.hpp"

namespace nbody {

// A counter that could not be read mid-run (a file gone, a driver error): the measurement keeps
// its time and records no energy.
class EnergyReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  // How the counters are read: "nvml", "powercap" or "perf_power".
  virtual std::string source() const = 0;
  // What each counter covers, in the order joules() returns them: "GPU 0 board",
  // "package-0", "package-0 dram".
  virtual std::vector<std::string> domains() const = 0;
  // The joules each counter has accumulated since the meter was made, its wrap-around undone (a
  // counter must be read at least once per wrap: minutes at full load). Throws EnergyReadError.
  virtual std::vector<double> joules() = 0;
  // The counter's smallest step in joules: 1e-3 for NVML's millijoules, 1e-6 for powercap's
  // microjoules, the perf event's scale.
  virtual double unit_j() const = 0;
  // The sum of the domains' power limits (the GPU boards' enforced limits), where known.
  virtual std::optional<double> limit_watts() const { return std::nullopt; }
};

// The sum over domains of one reading.
double total_joules(const std::vector<double>& reading);

// Seconds between the counters' updates: the median interval between changes of each counter, the
// longest of them, polled for up to `max_seconds` (0 when none changed). NVML's board counter moves
// about every 100 ms, RAPL's about every 1 ms.
double measure_update_period(EnergyMeter& meter, double max_seconds);

// How one device's energy is read in this run, described as results.json records it: the meter's
// domains, the counter's update period and the idle power over `idle_seconds` (nothing of the
// suite running), or, with `meter` null, why there is none. Never throws: a meter that fails here
// is recorded as unavailable with the error.
EnergyMeterRecord describe_energy_meter(EnergyMeter* meter, DeviceKind device,
                                        std::string unavailable_reason, double idle_seconds);

// A timing spans at least this many of its counter's update periods for its energy to be
// resolved: the lag of two reads is under one period, so even unaligned their error is under
// 1 / kMinEnergyPeriods of the energy (the window's reads, aligned to updates, measured within 2%
// at 5 periods: docs/perf-notes.md, Energy). Five of NVML's 100 ms updates are the 5 x 0.1 s a
// GPU timing spans by default, so reading energy costs a default run no time.
inline constexpr double kMinEnergyPeriods = 5;

// The energy of a stretch of work on one device: opened just after a counter update, closed at the
// first update after the work, the idle tail between the work's end and that update taken off at
// the record's idle power. Both reads then lag their updates alike; what is left is the counter's
// own smoothing, which the interval of one update period bounds. Throws EnergyReadError.
class EnergyWindow {
 public:
  EnergyWindow(EnergyMeter& meter, const EnergyMeterRecord& record);
  // Where the work starts later than the window opened (processes decomposed over ranks wait for
  // each other first): the head before it is taken off at idle power, as the tail is.
  void work_starts();
  // Since the work started.
  double seconds_working() const;
  // How much longer the work must go on for the window to be resolved (kMinEnergyPeriods of the
  // counter's updates); 0 once it is.
  double seconds_short() const;
  // Call as soon as the work is done: `evaluations` of it ran in the window.
  EnergyStatistics close(std::int64_t evaluations);

 private:
  EnergyMeter& meter_;
  const EnergyMeterRecord& record_;
  std::vector<double> start_;
  std::chrono::steady_clock::time_point opened_, work_started_;
};

// Decomposed over processes, each reading its own devices' counters around the same work: the
// work's energy from every process's figure, in process order. A process whose device another one
// meters (a GPU two ranks share, a package of a host's lower rank) brings a figure without
// domains. Joules and domains add up, seconds are the longest, the interval widens by each
// process's, and the sum is resolved where every metered figure is. None where any process's
// figure is missing (its counter failed) or none metered.
std::optional<EnergyStatistics> sum_energy(std::span<const std::optional<EnergyStatistics>> parts);

// The run's record of a device read by several processes, from each one's record in process order
// and its label ("rank 1"): the metered domains labelled, their idle power beside, the longest
// update period. Unavailable where any process's is, with the first one's reason (labelled beyond
// the first process). A record available without domains is a process whose device another one
// meters.
EnergyMeterRecord combine_energy_records(std::span<const EnergyMeterRecord> parts,
                                         std::span<const std::string> labels);

// One device's meter and its record, for the run's measurements of that device.
struct DeviceEnergy {
  // Null: not measured (record.unavailable_reason says why), or, where the record is available
  // without domains, measured by another process (metered_by_another_process).
  std::unique_ptr<EnergyMeter> meter;
  EnergyMeterRecord record;
};

// A process's part where another process of the run meters its device: no meter, and a record
// available without domains, which combine_energy_records and sum_energy pass over.
DeviceEnergy metered_by_another_process(DeviceKind device);

// Decomposed over processes, which packages process `process` meters: those of its `packages`
// that no lower process on its host (`hosts`, each process's, in process order) may run on too, so
// that every package of every host is counted once.
std::set<int> packages_first_used(std::size_t process, std::span<const std::string> hosts,
                                  std::span<const std::set<int>> packages);

}  // namespace nbody
