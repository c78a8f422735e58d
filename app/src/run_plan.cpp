// A run planned within its time budget before its first measurement.
#include "nbody/app/run_plan.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "nbody/sizes.hpp"

namespace nbody {
namespace {

// The timing of a short kernel still lasts about this long: warm-up, the repetitions' minimum
// time, and on the GPU the kernel timed alone besides its end-to-end timing (default runs: about
// 1 s for the CPU, 1.7 to 3.4 s for the GPU at N = 1K to 16K).
constexpr double kShortestCpuTiming = 1.0;
constexpr double kShortestGpuTiming = 2.5;
// A counter pass: about one evaluation on the CPU (perf), a few replays and CUPTI's set-up on the
// GPU (0.5 to 1.4 s at 64K on the H100).
constexpr double kCounterPassOverhead = 0.5;

double scaled(const ImplementationInfo& info, const EvaluationEstimate& estimate, std::size_t n) {
  return seconds_scaled_to(info.algorithm, n, estimate.first, estimate.second);
}

// Which measurements the budget keeps first: the best of each side (full-accuracy optimized
// formulations, the headline's best against best), then the naive baselines (its naive against
// naive), then the rest (approximate ones, tuning variants).
int priority(const ImplementationInfo& info) {
  if (info.role == Role::optimized && info.accuracy_class == AccuracyClass::full) return 0;
  return info.role == Role::naive_baseline ? 1 : 2;
}

}  // namespace

double estimated_measurement_seconds(const ImplementationInfo& info, double evaluation_s,
                                     const RepetitionSettings& timing, bool counters_here) {
  const double shortest = info.device == DeviceKind::gpu ? kShortestGpuTiming : kShortestCpuTiming;
  const double repetitions = std::max(1, timing.repetitions);
  const double timed = std::max(shortest, repetitions * std::max(timing.min_time_s, evaluation_s));
  const double counters = counters_here ? evaluation_s + kCounterPassOverhead : 0;
  return evaluation_s + timed + counters;  // the validation evaluation, the timing, the counters
}

std::optional<std::string> RunPlan::left_out(const std::string& implementation,
                                             std::size_t n) const {
  for (const PlannedMeasurement& m : measurements) {
    if (m.implementation == implementation && m.n == n && !m.included) return m.left_out_because;
  }
  return std::nullopt;
}

std::optional<std::string> RunPlan::no_longer_fits(const std::string& implementation, std::size_t n,
                                                   double elapsed_s) const {
  for (const PlannedMeasurement& m : measurements) {
    if (m.implementation != implementation || m.n != n || !m.included) continue;
    if (elapsed_s + m.estimated_s <= budget_s) return std::nullopt;
    return fmt::format(
        "left out as the run fell behind its plan: about {:.0f} s where {:.0f} s of the --budget "
        "of {:.0f} s were left (disturbed timings are taken again)",
        m.estimated_s, std::max(0.0, budget_s - elapsed_s), budget_s);
  }
  return std::nullopt;
}

std::string RunPlan::describe() const {
  std::size_t included = 0;
  std::vector<std::string> left;
  for (const PlannedMeasurement& m : measurements) {
    if (m.included) {
      ++included;
    } else {
      left.push_back(fmt::format("{} at {}", m.implementation, format_size(m.n)));
    }
  }
  std::string text =
      fmt::format("plan: {} of {} measurements within the budget of {:.0f} s (estimated {:.0f} s)",
                  included, measurements.size(), budget_s, planned_s);
  if (left.empty()) return text;
  const std::size_t shown = std::min<std::size_t>(left.size(), 8);
  text += fmt::format("; left out: {}",
                      fmt::join(left.begin(), left.begin() + static_cast<long>(shown), ", "));
  if (left.size() > shown) text += fmt::format(" and {} more", left.size() - shown);
  return text + " (--budget sets it; 0 for none)";
}

RunPlan plan_run(
    std::span<const Implementation* const> selected, const SuiteOptions& options,
    const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& counter_sizes,
    double budget_s,
    const std::function<std::optional<EvaluationEstimate>(const Implementation&)>& probe) {
  RunPlan plan{.budget_s = budget_s};
  for (const Implementation* impl : selected) {
    if (impl->unavailable_reason()) continue;
    if (auto estimate = probe(*impl)) plan.estimates[impl->info.name] = *estimate;
  }
  std::vector<int> priorities;
  for (const std::size_t n : sizes) {
    const bool counters_here =
        options.counters &&
        std::find(counter_sizes.begin(), counter_sizes.end(), n) != counter_sizes.end();
    for (const Implementation* impl : selected) {
      const auto estimate = plan.estimates.find(impl->info.name);
      if (estimate == plan.estimates.end()) continue;  // unavailable, or its probe failed
      const double evaluation = scaled(impl->info, estimate->second, n);
      if (evaluation > options.max_eval_seconds) continue;  // the run skips it, saying why
      plan.measurements.push_back({.implementation = impl->info.name,
                                   .n = n,
                                   .estimated_s = estimated_measurement_seconds(
                                       impl->info, evaluation, options.timing, counters_here)});
      priorities.push_back(priority(impl->info));
    }
  }
  // Kept by priority, then in the run's order, while they fit what is left.
  std::vector<std::size_t> order(plan.measurements.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return priorities[a] < priorities[b]; });
  for (const std::size_t i : order) {
    PlannedMeasurement& m = plan.measurements[i];
    if (plan.planned_s + m.estimated_s <= budget_s) {
      plan.planned_s += m.estimated_s;
      continue;
    }
    m.included = false;
    m.left_out_because = fmt::format(
        "left out by the plan: about {:.0f} s where {:.0f} s of the --budget of {:.0f} s were "
        "left after the best and naive formulations' measurements it keeps first",
        m.estimated_s, budget_s - plan.planned_s, budget_s);
  }
  return plan;
}

}  // namespace nbody
