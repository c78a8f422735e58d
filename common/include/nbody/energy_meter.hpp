#pragma once
// Energy counters a measurement reads around its timed repetitions (FAIRNESS.md rule 10): a GPU
// board's (NVML's total energy), or the CPU packages' and their DRAM's (RAPL, through powercap or
// the perf power PMU). A meter only reads; what a run makes of the readings (its idle power, the
// counter's update period, joules per evaluation) is measured here, alike for every meter.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
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

// Seconds between the counters' updates: the median interval between changes of their sum, polled
// for up to `max_seconds` (0 when it never changed). NVML's board counter moves about every 100 ms,
// RAPL's about every 1 ms.
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
  // Call as soon as the work is done: `evaluations` of it ran in the window.
  EnergyStatistics close(std::int64_t evaluations);

 private:
  EnergyMeter& meter_;
  const EnergyMeterRecord& record_;
  std::vector<double> start_;
  std::chrono::steady_clock::time_point started_;
};

// One device's meter and its record, for the run's measurements of that device.
struct DeviceEnergy {
  std::unique_ptr<EnergyMeter> meter;  // null: not measured (record.unavailable_reason says why)
  EnergyMeterRecord record;
};

}  // namespace nbody
