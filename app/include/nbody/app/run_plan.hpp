#pragma once
// A run within a time budget (`run --budget`): each formulation's evaluation time estimated from
// probes before anything is measured, every (formulation, N) given an estimated cost, and those
// that do not fit what the budget has left left out, with why, before the first measurement.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nbody/app/runner.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// One evaluation's seconds at a probe size: (N, seconds).
using EvaluationEstimate = std::pair<std::size_t, double>;

struct PlannedMeasurement {
  std::string implementation;
  std::size_t n = 0;
  double estimated_s = 0;  // validation, warm-up, timing and counters
  bool included = true;
  std::string left_out_because;  // where not included
};

struct RunPlan {
  double budget_s = 0;
  double planned_s = 0;  // the included measurements' estimated seconds
  std::map<std::string, EvaluationEstimate> estimates;  // the probes', per formulation
  std::vector<PlannedMeasurement> measurements;         // in the run's order

  // Why the plan leaves (implementation, N) out, or empty.
  std::optional<std::string> left_out(const std::string& implementation, std::size_t n) const;
  // Why a planned (implementation, N) no longer fits after `elapsed_s` of the run (timings taken
  // again on a disturbed machine, estimates that read low), or empty: the run keeps its budget
  // whatever its estimates were.
  std::optional<std::string> no_longer_fits(const std::string& implementation, std::size_t n,
                                            double elapsed_s) const;
  // "plan: 48 of 60 measurements within the budget of 150 s (estimated 141 s); left out: …".
  std::string describe() const;
};

// The estimated seconds of one measurement whose evaluation takes `evaluation_s` (calibrated on
// the H100 host's and the 2-core machine's default runs: docs/perf-notes.md, "A run within its
// budget").
double estimated_measurement_seconds(const ImplementationInfo& info, double evaluation_s,
                                     const RepetitionSettings& timing, bool counters_here);

// The plan of a run of `selected` at `sizes` within `budget_s`, from `probe` (one formulation's
// evaluation time at a probe size, empty where it failed) called once per available formulation.
// Measurements are taken in the run's order (sizes ascending, formulations in turn) while they
// fit what is left; one that does not is left out, and the next ones are still tried.
RunPlan plan_run(
    std::span<const Implementation* const> selected, const SuiteOptions& options,
    const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& counter_sizes,
    double budget_s,
    const std::function<std::optional<EvaluationEstimate>(const Implementation&)>& probe);

}  // namespace nbody
