#include "nbody/reports/run_set.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "median.hpp"
#include "nbody/errors.hpp"

namespace nbody::reports {
namespace {

// Device first: each run's shift is its own on each device.
using Key = std::tuple<DeviceKind, std::string, std::size_t, std::string>;

bool timed(const ResultRecord& r) {
  return r.status == Status::ok && r.kernel && r.kernel->median_s > 0;
}

// Each run's measurements timed in every run, by key: the log of their fastest repetitions.
std::map<Key, std::vector<double>> logs_timed_everywhere(std::span<const ResultsDocument> runs) {
  std::map<Key, std::vector<double>> logs;
  for (const ResultsDocument& run : runs) {
    for (const ResultRecord& r : run.results) {
      if (!timed(r)) continue;
      logs[{device_of(run, r.implementation), r.implementation, r.n, r.initial_condition}]
          .push_back(std::log(fastest_s(*r.kernel)));
    }
  }
  std::erase_if(logs, [&](const auto& entry) { return entry.second.size() != runs.size(); });
  return logs;
}

// Run k's shift on each device: the median over that device's measurements of its log time less
// the set's median log time.
using Shifts = std::map<DeviceKind, std::vector<double>>;

Shifts run_shifts(const std::map<Key, std::vector<double>>& logs, std::size_t runs) {
  std::map<DeviceKind, std::vector<std::vector<double>>> offsets;
  for (const auto& [key, values] : logs) {
    auto& device = offsets[std::get<0>(key)];
    device.resize(runs);
    const double center = median_of(values);
    for (std::size_t k = 0; k < runs; ++k) device[k].push_back(values[k] - center);
  }
  Shifts shifts;
  for (const auto& [device, per_run] : offsets) {
    for (const std::vector<double>& run : per_run) shifts[device].push_back(median_of(run));
  }
  return shifts;
}

// The record's timing replaced by the set's: those runs' repetitions, shift removed, as its
// samples (so its fastest is the fastest over the runs) and the median over runs of each run's
// median as its median. Runs whose timing was disturbed are left out where another run's was not.
void combine_record(ResultRecord& record, std::span<const ResultsDocument> runs,
                    const Shifts& all_shifts) {
  const auto device = all_shifts.find(device_of(runs.front(), record.implementation));
  const std::vector<double> none(runs.size(), 0.0);
  const std::vector<double>& shifts = device == all_shifts.end() ? none : device->second;
  struct Timing {
    const TimingStatistics* kernel;
    double scale;
    std::size_t run;
  };
  std::vector<Timing> quiet, disturbed;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const ResultRecord& r : runs[k].results) {
      if (r.implementation == record.implementation && r.n == record.n &&
          r.initial_condition == record.initial_condition && timed(r)) {
        const bool was_disturbed =
            r.kernel->conditions && !r.kernel->conditions->disturbances.empty();
        (was_disturbed ? disturbed : quiet).push_back({&*r.kernel, std::exp(-shifts[k]), k});
        break;
      }
    }
  }
  const std::vector<Timing>& used = quiet.empty() ? disturbed : quiet;
  std::vector<double> medians, samples;
  std::vector<std::string> disturbances;
  for (const Timing& t : used) {
    medians.push_back(t.kernel->median_s * t.scale);
    for (const double s : t.kernel->samples_s) samples.push_back(s * t.scale);
    if (quiet.empty()) {
      for (const std::string& why : t.kernel->conditions->disturbances) {
        disturbances.push_back(fmt::format("run {}: {}", t.run + 1, why));
      }
    }
  }
  const double median = median_of(medians);
  const double factor = median / record.kernel->median_s;
  record.kernel->median_s = median;
  record.kernel->samples_s = samples;
  if (!samples.empty()) {
    record.kernel->min_s = *std::min_element(samples.begin(), samples.end());
    record.kernel->max_s = *std::max_element(samples.begin(), samples.end());
  }
  record.kernel->repetitions = static_cast<int>(samples.size());
  if (record.kernel->conditions) record.kernel->conditions->disturbances = disturbances;
  if (record.kernel_rate) {
    record.kernel_rate->interactions_per_second /= factor;
    record.kernel_rate->interactions_per_second_min /= factor;
    record.kernel_rate->interactions_per_second_max /= factor;
  }
}

}  // namespace

double fastest_s(const TimingStatistics& kernel) {
  if (kernel.samples_s.empty()) return kernel.median_s;
  return *std::min_element(kernel.samples_s.begin(), kernel.samples_s.end());
}

DeviceKind device_of(const ResultsDocument& doc, const std::string& implementation) {
  for (const ImplementationRecord& record : doc.implementations) {
    if (record.name == implementation) return record.device;
  }
  return implementation.starts_with("gpu.") ? DeviceKind::gpu : DeviceKind::cpu;
}

RunSet combine_runs(std::span<const ResultsDocument> runs) {
  if (runs.empty()) throw UsageError("a side of the comparison has no run");
  RunSet set{.combined = runs.front(), .runs = runs.size()};
  if (runs.size() == 1) return set;
  const std::map<Key, std::vector<double>> logs = logs_timed_everywhere(runs);
  const Shifts shifts = run_shifts(logs, runs.size());
  for (const auto& [device, per_run] : shifts) {
    const auto [lowest, highest] = std::minmax_element(per_run.begin(), per_run.end());
    set.run_drift[device] = std::exp(*highest - *lowest);
  }
  std::vector<double> deviations;
  for (const auto& [key, values] : logs) {
    const std::vector<double>& shift = shifts.at(std::get<0>(key));
    std::vector<double> corrected;
    for (std::size_t k = 0; k < values.size(); ++k) corrected.push_back(values[k] - shift[k]);
    const double center = median_of(corrected);
    for (const double v : corrected) deviations.push_back(std::abs(v - center));
  }
  if (!deviations.empty()) set.scatter = 1.4826 * median_of(deviations);
  for (ResultRecord& record : set.combined.results) {
    if (timed(record)) combine_record(record, runs, shifts);
  }
  return set;
}

}  // namespace nbody::reports
