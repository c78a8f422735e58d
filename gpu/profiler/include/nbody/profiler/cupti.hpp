#pragma once
// GPU hardware counters through the CUPTI Range Profiler (CUDA 13: cupti_range_profiler.h with
// cupti_profiler_host.h): kernel replay, one range per kernel launch (auto range). Host-only
// header; without CUPTI in the build every call reports why counters are unavailable.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/counters.hpp"

namespace nbody::profiler {

// The counters read for every GPU kernel (raw metric names).
std::vector<std::string> kernel_metrics();

// Why this build cannot read counters with CUPTI (no CUPTI, or a sanitizer that cannot load it);
// empty where it can.
std::optional<std::string> cupti_refusal_in_build();

struct MetricCheck {
  std::string name;
  bool valid = false;
  std::string description, unit;
};

struct MetricValidation {
  std::string error;  // the host API itself failed (no CUPTI, no libnvperf_host)
  std::vector<MetricCheck> metrics;
  std::size_t passes = 0;  // replay passes the valid metrics need together
};

// Checks metric names for a chip ("GH100") on the host alone, through cuptiProfilerHost*: no GPU,
// driver or privilege needed.
MetricValidation validate_metrics(const std::string& chip, const std::vector<std::string>& metrics);

struct RangeValues {
  std::string name;  // CUPTI's range name: the launch index in auto-range mode
  std::map<std::string, double> values;
};

struct KernelProfile {
  std::string unavailable_reason;  // empty on success
  std::string chip;
  std::size_t passes = 0;
  std::vector<std::string> metrics_not_supported;  // dropped before profiling
  std::vector<RangeValues> ranges;                 // one per kernel launch
};

// Runs `work` under the range profiler on CUDA device `ordinal`: every kernel it launches is one
// range, replayed as often as the metrics need. Never throws.
KernelProfile profile_kernels(int ordinal, const std::function<void()>& work,
                              const std::vector<std::string>& metrics);

// One set of values for several launches: counters (".sum") add up, everything else (ratios,
// averages, rates) is weighted by each launch's gpu__time_duration.sum.
std::map<std::string, double> combine_ranges(const std::vector<RangeValues>& ranges);

// CounterSource for DeviceKind::gpu implementations: one kernel-scope evaluation, profiled, its
// figures derived (nbody/profiler/gpu_counter_figures.hpp).
std::unique_ptr<CounterSource> make_cupti_counter_source();

}  // namespace nbody::profiler
