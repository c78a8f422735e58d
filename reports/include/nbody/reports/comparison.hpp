#pragma once
// Two results documents compared, measurement by measurement: the analysis `nbody-fair compare`
// prints. Typed data; comparison_report.hpp formats it.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbody/results.hpp"

namespace nbody::reports {

struct MannWhitneyResult {
  double u = 0;        // pairs (a_i, b_j) with a_i > b_j, ties counting one half
  double p_value = 1;  // two-sided
  bool exact = true;   // from the exact permutation distribution, not the normal approximation
};

// The Mann-Whitney U test (Wilcoxon rank-sum), two-sided, as Google Benchmark's compare.py uses
// it on repetitions. Each side needs at least one sample (std::invalid_argument otherwise).
MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// The smallest two-sided p-value the exact test can give for samples of m and n: 2 / C(m+n, m).
// Above alpha, no difference between so few repetitions can be significant.
double smallest_p_value(std::size_t m, std::size_t n);

// How far a whole device was measured to move between unchanged runs of one build, as a fraction
// of its time: the most a shift of every measurement is removed as the machine's (docs/compare.md,
// "How far a machine drifts"). CPU: between single runs, 10.3% on nvidia-h100-x1's shared Xeon
// and 5.5% on the 2-core VM, half as much again for what was not seen. GPU: 1.2% on the H100.
inline constexpr double kCpuDriftBound = 0.15;
inline constexpr double kGpuDriftBound = 0.05;

struct ComparisonSettings {
  double threshold = 0.05;  // a time ratio beyond 1 ± threshold counts as a change
  double alpha = 0.05;      // significance level of the U test
  // Each row's ratio divided by its device's common shift (MachineShift) before the verdict.
  bool correct_machine_shift = true;
  // The machine's drift on each device (--cpu-drift, --gpu-drift): a larger shift of the whole
  // device is the build's or the machine's, and fails where NEW is slower.
  double cpu_drift = kCpuDriftBound;
  double gpu_drift = kGpuDriftBound;
  // A regular expression: only the measurements of implementations it finds are compared (empty:
  // all). A GPU host gates its GPU formulations where its shared CPU is too noisy to gate.
  std::string implementation_pattern;
};

// A formulation is slower (or faster) where at least this share of its measurements is: on a
// shared machine one measurement in several strays by 10-50% from one run to the next, a change of
// the code moves every size of the formulation it changes.
inline constexpr double kFormulationAgreement = 0.75;

// How far one device of the machine itself moved between BASE and NEW: the common shift of every
// measurement both runs timed on it, and how far single measurements stray from it. A change of
// one formulation moves its own rows; a machine that ran slower moves them all.
struct MachineShift {
  DeviceKind device = DeviceKind::cpu;
  std::size_t measurements = 0;  // both runs timed them on this device
  std::size_t formulations = 0;  // of that many formulations
  // The median NEW/BASE ratio of the rows' fastest repetitions: above 1, NEW ran slower.
  double time_ratio = 1;
  // 1.4826 x the median absolute deviation of the log time ratios around the median: the
  // run-to-run scatter of one measurement, as a standard deviation of its log.
  double spread = 0;
  // BASE's all-core FMA ceiling over NEW's, where each run measured its own (not read from one
  // cache): above 1 the machine computed slower in NEW. A control no code change moves.
  std::optional<double> ceiling_ratio;
  bool applied = false;  // the verdicts used ratios divided by time_ratio
  std::string why_not_applied;
  // The largest shift removed as the machine's, as a ratio above 1 (1.15: 15% either way), and
  // where it comes from: the settings' drift, or a side's own runs where they drifted further.
  double drift_bound = 1;
  std::string drift_source;
  // The shift, of enough measurements to be the device's (as `applied` needs), is beyond
  // drift_bound: not the machine's drift but a change of the machine or the build; where NEW is
  // slower it fails the comparison.
  bool beyond_drift = false;
};

enum class Verdict {
  // Faster beyond the threshold (significantly, where the test gates: repetitions_gate), and so
  // is its formulation.
  faster,
  slower,  // the same, slower
  same,    // within the threshold, or not significant where the test gates
  // Beyond half the threshold, short of slower, or slower where too few of its formulation's
  // other measurements are (kFormulationAgreement): said, exit code 0.
  possibly_slower,
  possibly_faster,      // the same, faster
  accuracy_regression,  // passed in BASE, fails in NEW
  now_failing,          // ok in BASE, failed in NEW without a failing accuracy (an error)
  not_compared,         // not ok in one of them (skipped, failed in both, ...)
};
std::string_view to_string(Verdict verdict);

// One (implementation, N, initial condition) present in both documents.
struct ComparedRow {
  std::string implementation, initial_condition;
  std::size_t n = 0;
  Status base_status = Status::ok, new_status = Status::ok;
  std::optional<double> base_median_s, new_median_s;
  std::optional<double> time_ratio;  // NEW / BASE kernel medians: above 1 is slower
  // NEW / BASE fastest repetitions (fastest_s in run_set.hpp): what the verdict stands on
  std::optional<double> fastest_ratio;
  // fastest_ratio over its device's machine shift, where the shift was applied: what the verdict
  // uses
  std::optional<double> corrected_ratio;
  std::optional<double> rate_ratio;        // NEW / BASE interactions per second: above 1 is faster
  std::optional<double> end_to_end_ratio;  // NEW / BASE end-to-end medians, where both have one
  // On the kernel's repetition samples, NEW's divided by the machine shift where it was applied.
  std::optional<MannWhitneyResult> test;
  bool significant = false;  // test->p_value < alpha
  std::optional<double> base_relative_l2, new_relative_l2;
  std::optional<bool> base_passed, new_passed;
  // Joules per evaluation of each (FAIRNESS rule 10), where both read their device's energy and
  // both figures are resolved; their NEW / BASE ratio, and whether it moved beyond the threshold.
  // Listed, never failed: energy hangs on the machine's idle power and fans more than time does.
  std::optional<double> base_joules, new_joules, energy_ratio;
  bool energy_changed = false;
  Verdict verdict = Verdict::same;
  std::vector<std::string> notes;  // why not compared, differing inputs, disturbed timings
};

// A measurement only one of the documents has.
struct UnmatchedRow {
  std::string implementation, initial_condition;
  std::size_t n = 0;
  Status status = Status::ok;
};

// One formulation's measurements in both, together: the verdict that fails a comparison.
struct FormulationChange {
  std::string implementation;
  std::size_t measurements = 0;  // timed in both
  std::size_t slower = 0, faster = 0;
  double median_ratio = 1;  // of its measurements' fastest ratios, the machine's shift removed
  Verdict verdict = Verdict::same;  // slower, faster or same
};

struct Comparison {
  ComparisonSettings settings;
  std::size_t base_runs = 1, new_runs = 1;   // documents combined on each side (run_set.hpp)
  double base_scatter = 0, new_scatter = 0;  // RunSet::scatter of each side
  std::vector<ComparedRow> rows;
  std::vector<UnmatchedRow> only_in_base, only_in_new;
  // Differences between the documents that bear on every row: machine, build, too few repetitions.
  std::vector<std::string> flags;
  std::vector<MachineShift> shifts;             // one per device with rows in both
  std::vector<FormulationChange> formulations;  // those with a measurement timed in both

  // Whether the U test on the repetitions gates each verdict: where a side is one run, its
  // repetitions are all the evidence there is. Where both sides are several runs, the runs are the
  // replication: pooled repetitions of different runs are not exchangeable samples (each run meets
  // its own disturbances), so the test is shown and the fastest over the runs decides.
  bool repetitions_gate() const;

  // A formulation slower (kFormulationAgreement of its measurements significantly slower beyond
  // the threshold, the machine's shift removed), a measurement that passed and now fails, or a
  // device slower as a whole beyond its drift.
  bool regressed() const;
};

// Throws UsageError for a threshold that is not a finite positive number, or an alpha outside
// (0, 1), and for documents that cannot be compared. Each side may be several runs of one build
// (combine_runs), compared as their medians.
Comparison compare_results(std::span<const ResultsDocument> base,
                           std::span<const ResultsDocument> now, ComparisonSettings settings = {});
Comparison compare_results(const ResultsDocument& base, const ResultsDocument& now,
                           ComparisonSettings settings = {});

}  // namespace nbody::reports
