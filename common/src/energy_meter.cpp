#include "nbody/energy_meter.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace nbody {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The meter's reading just after its counters next change, and when: two such readings lag their
// updates alike, so the energy between them belongs to the time between them.
std::pair<std::vector<double>, std::chrono::steady_clock::time_point> read_after_update(
    EnergyMeter& meter, double max_wait_s) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> first = meter.joules();
  while (seconds_since(start) < max_wait_s) {
    std::vector<double> now = meter.joules();
    if (total_joules(now) != total_joules(first)) return {now, std::chrono::steady_clock::now()};
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return {first, std::chrono::steady_clock::now()};
}

}  // namespace

double total_joules(const std::vector<double>& reading) {
  double sum = 0;
  for (const double j : reading) sum += j;
  return sum;
}

double measure_update_period(EnergyMeter& meter, double max_seconds) {
  // Enough changes for a median; a read of NVML's counter takes a few milliseconds itself.
  constexpr std::size_t kChanges = 8;
  const auto start = std::chrono::steady_clock::now();
  double last = total_joules(meter.joules());
  std::optional<double> last_change_s;
  std::vector<double> intervals;
  while (intervals.size() < kChanges && seconds_since(start) < max_seconds) {
    const double now = total_joules(meter.joules());
    if (now == last) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    const double at = seconds_since(start);
    if (last_change_s) intervals.push_back(at - *last_change_s);
    last_change_s = at;
    last = now;
  }
  if (intervals.empty()) return 0;
  std::nth_element(intervals.begin(), intervals.begin() + static_cast<long>(intervals.size() / 2),
                   intervals.end());
  return intervals[intervals.size() / 2];
}

EnergyMeterRecord describe_energy_meter(EnergyMeter* meter, DeviceKind device,
                                        std::string unavailable_reason, double idle_seconds) {
  EnergyMeterRecord record{.device = device};
  if (meter == nullptr) {
    record.unavailable_reason = std::move(unavailable_reason);
    return record;
  }
  try {
    record.source = meter->source();
    record.domains = meter->domains();
    record.unit_j = meter->unit_j();
    record.limit_watts = meter->limit_watts();
    record.update_period_s = measure_update_period(*meter, 1.0);
    // Idle from one update to another, so that the counter's lag does not enter it.
    const double wait_s = 2 * record.update_period_s + 0.01;
    const auto [before, idle_start] = read_after_update(*meter, wait_s);
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
    const auto [after, idle_end] = read_after_update(*meter, wait_s);
    record.idle_seconds = std::chrono::duration<double>(idle_end - idle_start).count();
    for (std::size_t d = 0; d < before.size() && d < after.size(); ++d) {
      record.idle_watts.push_back((after[d] - before[d]) / record.idle_seconds);
    }
    record.available = true;
  } catch (const std::exception& e) {
    record = EnergyMeterRecord{.device = device};
    record.unavailable_reason = fmt::format("its counters could not be read: {}", e.what());
  }
  return record;
}

EnergyWindow::EnergyWindow(EnergyMeter& meter, const EnergyMeterRecord& record)
    : meter_(meter), record_(record) {
  std::tie(start_, started_) = read_after_update(meter_, 2 * record_.update_period_s + 0.01);
}

EnergyStatistics EnergyWindow::close(std::int64_t evaluations) {
  const auto work_end = std::chrono::steady_clock::now();
  const auto [end, updated] = read_after_update(meter_, 2 * record_.update_period_s + 0.01);
  const double tail_s = std::chrono::duration<double>(updated - work_end).count();
  EnergyStatistics e;
  e.seconds = std::chrono::duration<double>(work_end - started_).count();
  for (std::size_t d = 0; d < start_.size() && d < end.size(); ++d) {
    const double idle_w = d < record_.idle_watts.size() ? record_.idle_watts[d] : 0;
    e.domain_joules.push_back(std::max(0.0, end[d] - start_[d] - idle_w * tail_s));
  }
  e.joules = total_joules(e.domain_joules);
  e.evaluations = evaluations;
  if (evaluations <= 0 || e.seconds <= 0) return e;
  e.per_evaluation_j = e.joules / static_cast<double>(evaluations);
  e.mean_watts = e.joules / e.seconds;
  const double period = record_.update_period_s;
  const double lag_j = std::max(period * e.mean_watts, meter_.unit_j());
  e.ci_low_j = std::max(0.0, e.joules - lag_j) / static_cast<double>(evaluations);
  e.ci_high_j = (e.joules + lag_j) / static_cast<double>(evaluations);
  e.periods_spanned = period > 0 ? e.seconds / period : 0;
  e.resolved = period > 0 && e.periods_spanned >= kMinEnergyPeriods;
  return e;
}

}  // namespace nbody
