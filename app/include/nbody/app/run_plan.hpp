#pragma once
// A run within a time budget (`run --budget`), planned from the question the run answers: each
// formulation probed before anything is measured, every (formulation, N) given an estimated cost,
// and the measurements kept step by step in the order of that question (PlanStep), what does not
// fit left out, with why, before the first measurement.
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nbody/app/runner.hpp"
#include "nbody/properties.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// One evaluation's seconds at a probe size: (N, seconds).
using EvaluationEstimate = std::pair<std::size_t, double>;

// What a probe measured of one formulation at one size, after a warm-up evaluation.
struct ProbeFigures {
  std::size_t n = 0;
  double kernel_s = 0;       // one evaluation, kernel scope, on the run's own clock
  double kernel_wall_s = 0;  // the same on the host's steady clock: launch and wait included
  // The GPU: one end-to-end evaluation (copies included), on both clocks; 0 on the CPU.
  double end_to_end_s = 0;
  double end_to_end_wall_s = 0;
  double prepare_s = 0;  // preparing the run: allocations, copies, the first touch of memory
};

// A formulation's probes, N ascending; the figures at another N are scaled from the largest probe
// at or below it (the smallest where none is).
using ProbeCurve = std::vector<ProbeFigures>;
ProbeFigures probe_figures_at(const ProbeCurve& curve, Algorithm algorithm, std::size_t n);

// What a size costs once, whatever is measured there: its input generated and hashed, and the
// float64 reference of each precision measured there (where the cache does not hold it).
struct SizeCosts {
  double input_seconds_per_body = 0;
  double reference_seconds_per_interaction = 0;
  std::size_t validation_bodies = 16384;  // reference targets per size (SuiteOptions)
  double input_s(std::size_t n) const;
  double reference_s(std::size_t n) const;
};

// Why a measurement is planned, in the order the budget keeps them: each step is kept whole, as
// far as the budget goes, before the next is considered.
//   headline: the likely best full-accuracy all-pairs formulation of each device and precision
//             (from the probes) at every size it fits;
//   naive:    each side's naive baselines at two sizes or more;
//   trees:    each device's tree at the opening angle the surveyed errors say meets each accuracy
//             bar, at the largest size and around the size where it overtakes all-pairs;
//   ladders:  every full-accuracy formulation of each device and precision at one or two sizes;
//   rest:     everything else, cheapest first.
enum class PlanStep { headline, naive, trees, ladders, rest };
template <>
struct EnumNames<PlanStep> {
  static constexpr std::pair<PlanStep, std::string_view> kNames[] = {
      {PlanStep::headline, "headline"},
      {PlanStep::naive, "naive"},
      {PlanStep::trees, "trees"},
      {PlanStep::ladders, "ladders"},
      {PlanStep::rest, "rest"}};
};

struct PlannedMeasurement {
  std::string implementation;
  std::size_t n = 0;
  PlanStep step = PlanStep::rest;
  double estimated_s = 0;  // validation, warm-up, timing, counters, and the attempts expected
  bool included = true;
  std::string left_out_because;  // where not included
};

struct RunPlan {
  double budget_s = 0;
  double spent_before_s = 0;  // of the budget before the first measurement: ceilings, probes
  double planned_s = 0;       // the included measurements' estimated seconds, sizes' costs included
  // Timings taken again on a disturbed machine, as the probes found it: 1 where it was quiet.
  int expected_attempts = 1;
  std::map<std::string, EvaluationEstimate> estimates;  // the largest probe, per formulation
  std::vector<PlannedMeasurement> measurements;         // in the run's order
  // Each size's one-time costs where the plan measures anything there (input, references).
  std::map<std::size_t, double> size_costs_s;
  SizeCosts size_costs;  // what they were estimated from

  const PlannedMeasurement* find(const std::string& implementation, std::size_t n) const;
  // Why the plan leaves (implementation, N) out, or empty.
  std::optional<std::string> left_out(const std::string& implementation, std::size_t n) const;
  // Why a planned (implementation, N) no longer fits after `elapsed_s` of the budget (timings taken
  // again, estimates that read low), or empty: it still runs if it, its reference where that is
  // still to be computed (`reference_pending`), every planned measurement of an earlier step still
  // to come and the one-time costs of the sizes after its own fit what is left, the measurements
  // at `pace` times their estimates (what the run's measurements so far took over their
  // estimates, at least 1). So a run behind its plan drops the least important measurements first
  // and keeps its budget whatever its estimates were.
  std::optional<std::string> no_longer_fits(const std::string& implementation, std::size_t n,
                                            double elapsed_s, double pace = 1,
                                            bool reference_pending = false) const;
  // "plan: 48 of 60 measurements within the budget of 150 s (estimated 141 s): headline 20, …;
  // left out: …".
  std::string describe() const;
};

// The seconds one timing spends on evaluations of `manual_s` each as Google Benchmark runs it
// (benchmark_runner.cc): a warm-up of `warmup_s` where asked, then the first repetition's search
// for an iteration count (1, 10, 100, ... until a run lasts a tenth of the minimum time, then 1.4
// times the minimum over that run's seconds), then every repetition at that count; on the run's
// own clock. `wall_s` is one evaluation on the host's clock (the same or longer): the result is
// scaled by wall_s / manual_s.
double timing_seconds(double manual_s, double wall_s, const RepetitionSettings& timing,
                      double warmup_s);

// The estimated seconds of one measurement of `info` whose probe figures at its N are `at_n`:
// preparing and validating it, its warm-up and timing (on the GPU, end to end and, for a kernel
// under `separate_kernel_timing_below_s`, the kernel alone too), and with counters one more
// evaluation and a counter pass; times `attempts`.
double estimated_measurement_seconds(const ImplementationInfo& info, const ProbeFigures& at_n,
                                     const SuiteOptions& options, bool counters_here,
                                     int attempts = 1);

// What planning needs: each formulation's probes (by name; none where it is unavailable or its
// probe failed), each size's one-time costs, and how many attempts a timing is expected to take on
// this machine now.
struct PlanInputs {
  std::map<std::string, ProbeCurve> probes;
  SizeCosts size_costs;
  int expected_attempts = 1;
  double spent_s = 0;  // the budget's seconds spent before the plan: ceilings, probes
};

// The plan of a run of `selected` at `sizes` within `budget_s` (PlanStep).
RunPlan plan_run(std::span<const Implementation* const> selected, const SuiteOptions& options,
                 const std::vector<std::size_t>& sizes,
                 const std::vector<std::size_t>& counter_sizes, double budget_s,
                 const PlanInputs& inputs);

}  // namespace nbody
