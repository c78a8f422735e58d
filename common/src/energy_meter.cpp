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
// updates alike, so the energy between them belongs to the time between them. Where the counters
// do not change in time, the last reading and when it was taken: a thread woken late past the
// wait (a busy host) would otherwise set an early reading beside a late time.
std::pair<std::vector<double>, std::chrono::steady_clock::time_point> read_after_update(
    EnergyMeter& meter, double max_wait_s) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> last = meter.joules();
  auto last_at = std::chrono::steady_clock::now();
  const double first_total = total_joules(last);
  while (seconds_since(start) < max_wait_s) {
    std::vector<double> now = meter.joules();
    const auto now_at = std::chrono::steady_clock::now();
    if (total_joules(now) != first_total) return {now, now_at};
    last = std::move(now);
    last_at = now_at;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return {last, last_at};
}

}  // namespace

double total_joules(const std::vector<double>& reading) {
  double sum = 0;
  for (const double j : reading) sum += j;
  return sum;
}

double measure_update_period(EnergyMeter& meter, double max_seconds) {
  // Enough changes for a median; a read of NVML's counter takes a few milliseconds itself. Each
  // counter apart: several boards' counters move at offsets, their sum more often than any.
  constexpr std::size_t kChanges = 8;
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> last = meter.joules();
  std::vector<std::optional<double>> last_change_s(last.size());
  std::vector<std::vector<double>> intervals(last.size());
  const auto enough = [&] {
    return std::all_of(intervals.begin(), intervals.end(),
                       [](const std::vector<double>& i) { return i.size() >= kChanges; });
  };
  while (!enough() && seconds_since(start) < max_seconds) {
    const std::vector<double> now = meter.joules();
    const double at = seconds_since(start);
    for (std::size_t d = 0; d < now.size() && d < last.size(); ++d) {
      if (now[d] == last[d]) continue;
      if (last_change_s[d]) intervals[d].push_back(at - *last_change_s[d]);
      last_change_s[d] = at;
      last[d] = now[d];
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  double period = 0;
  for (std::vector<double>& i : intervals) {
    if (i.empty()) continue;
    std::nth_element(i.begin(), i.begin() + static_cast<long>(i.size() / 2), i.end());
    period = std::max(period, i[i.size() / 2]);
  }
  return period;
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
  std::tie(start_, opened_) = read_after_update(meter_, 2 * record_.update_period_s + 0.01);
  work_started_ = opened_;
}

void EnergyWindow::work_starts() {
  work_started_ = std::chrono::steady_clock::now();
}

double EnergyWindow::seconds_working() const {
  return seconds_since(work_started_);
}

double EnergyWindow::seconds_short() const {
  return std::max(0.0, kMinEnergyPeriods * record_.update_period_s - seconds_working());
}

EnergyStatistics EnergyWindow::close(std::int64_t evaluations) {
  const auto work_end = std::chrono::steady_clock::now();
  const auto [end, updated] = read_after_update(meter_, 2 * record_.update_period_s + 0.01);
  const double idle_s = std::chrono::duration<double>(updated - work_end).count() +
                        std::chrono::duration<double>(work_started_ - opened_).count();
  EnergyStatistics e;
  e.seconds = std::chrono::duration<double>(work_end - work_started_).count();
  for (std::size_t d = 0; d < start_.size() && d < end.size(); ++d) {
    const double idle_w = d < record_.idle_watts.size() ? record_.idle_watts[d] : 0;
    e.domain_joules.push_back(std::max(0.0, end[d] - start_[d] - idle_w * idle_s));
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

namespace {

// The energy of a figure's interval beyond its joules (every evaluation's).
double lag_joules(const EnergyStatistics& e) {
  return e.ci_high_j * static_cast<double>(e.evaluations) - e.joules;
}

}  // namespace

std::optional<EnergyStatistics> sum_energy(std::span<const std::optional<EnergyStatistics>> parts) {
  EnergyStatistics sum;
  double lag_j = 0;
  bool metered = false;
  sum.resolved = true;
  for (const std::optional<EnergyStatistics>& part : parts) {
    if (!part) return std::nullopt;
    sum.evaluations = std::max(sum.evaluations, part->evaluations);
    if (part->domain_joules.empty()) continue;
    sum.periods_spanned =
        metered ? std::min(sum.periods_spanned, part->periods_spanned) : part->periods_spanned;
    metered = true;
    sum.joules += part->joules;
    sum.domain_joules.insert(sum.domain_joules.end(), part->domain_joules.begin(),
                             part->domain_joules.end());
    sum.seconds = std::max(sum.seconds, part->seconds);
    lag_j += lag_joules(*part);
    sum.resolved = sum.resolved && part->resolved;
  }
  if (!metered) return std::nullopt;
  if (sum.evaluations <= 0 || sum.seconds <= 0) {
    sum.resolved = false;
    return sum;
  }
  const auto evaluations = static_cast<double>(sum.evaluations);
  sum.per_evaluation_j = sum.joules / evaluations;
  sum.mean_watts = sum.joules / sum.seconds;
  sum.ci_low_j = std::max(0.0, sum.joules - lag_j) / evaluations;
  sum.ci_high_j = (sum.joules + lag_j) / evaluations;
  return sum;
}

EnergyMeterRecord combine_energy_records(std::span<const EnergyMeterRecord> parts,
                                         std::span<const std::string> labels) {
  const DeviceKind device = parts.empty() ? DeviceKind::cpu : parts.front().device;
  EnergyMeterRecord combined{.device = device};
  double limit_w = 0;
  bool every_limit = true;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const EnergyMeterRecord& part = parts[p];
    const std::string label = p < labels.size() ? labels[p] : fmt::format("process {}", p);
    if (!part.available) {
      combined = EnergyMeterRecord{.device = device};
      combined.unavailable_reason =
          p == 0 ? part.unavailable_reason : label + ": " + part.unavailable_reason;
      return combined;
    }
    if (part.domains.empty()) continue;
    if (!combined.source.empty() && part.source != combined.source) {
      const std::string why =
          fmt::format("the processes read different counters ({}, and {} on {}): not added",
                      combined.source, part.source, label);
      combined = EnergyMeterRecord{.device = device};
      combined.unavailable_reason = why;
      return combined;
    }
    combined.source = part.source;
    for (const std::string& domain : part.domains)
      combined.domains.push_back(label + ": " + domain);
    combined.idle_watts.insert(combined.idle_watts.end(), part.idle_watts.begin(),
                               part.idle_watts.end());
    combined.unit_j = std::max(combined.unit_j, part.unit_j);
    combined.update_period_s = std::max(combined.update_period_s, part.update_period_s);
    combined.idle_seconds = std::max(combined.idle_seconds, part.idle_seconds);
    every_limit = every_limit && part.limit_watts.has_value();
    limit_w += part.limit_watts.value_or(0);
  }
  combined.available = !combined.domains.empty();
  if (!combined.available) {
    combined.unavailable_reason = "no process read its counters";
    return combined;
  }
  if (every_limit) combined.limit_watts = limit_w;
  return combined;
}

DeviceEnergy metered_by_another_process(DeviceKind device) {
  return {.meter = nullptr, .record = {.device = device, .available = true}};
}

std::set<int> packages_first_used(std::size_t process, std::span<const std::string> hosts,
                                  std::span<const std::set<int>> packages) {
  std::set<int> first;
  if (process >= hosts.size() || process >= packages.size()) return first;
  for (const int package : packages[process]) {
    bool earlier = false;
    for (std::size_t p = 0; p < process && !earlier; ++p) {
      earlier = hosts[p] == hosts[process] && packages[p].contains(package);
    }
    if (!earlier) first.insert(package);
  }
  return first;
}

}  // namespace nbody
