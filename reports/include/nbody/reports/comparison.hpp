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

struct ComparisonSettings {
  double threshold = 0.05;  // a time ratio beyond 1 ± threshold counts as a change
  double alpha = 0.05;      // significance level of the U test
};

enum class Verdict {
  faster,               // significantly faster, by more than the threshold
  slower,               // significantly slower, by more than the threshold
  same,                 // within the threshold, or not significant
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
  std::optional<double> time_ratio;        // NEW / BASE kernel medians: above 1 is slower
  std::optional<double> rate_ratio;        // NEW / BASE interactions per second: above 1 is faster
  std::optional<double> end_to_end_ratio;  // NEW / BASE end-to-end medians, where both have one
  std::optional<MannWhitneyResult> test;   // on the kernel's repetition samples
  bool significant = false;                // test->p_value < alpha
  std::optional<double> base_relative_l2, new_relative_l2;
  std::optional<bool> base_passed, new_passed;
  Verdict verdict = Verdict::same;
  std::vector<std::string> notes;  // why not compared, differing inputs, disturbed timings
};

// A measurement only one of the documents has.
struct UnmatchedRow {
  std::string implementation, initial_condition;
  std::size_t n = 0;
  Status status = Status::ok;
};

struct Comparison {
  ComparisonSettings settings;
  std::vector<ComparedRow> rows;
  std::vector<UnmatchedRow> only_in_base, only_in_new;
  // Differences between the documents that bear on every row: machine, build, too few repetitions.
  std::vector<std::string> flags;

  // A significant slowdown beyond the threshold, or a measurement that passed and now fails.
  bool regressed() const;
};

// Throws UsageError for a threshold that is not a finite positive number, or an alpha outside
// (0, 1).
Comparison compare_results(const ResultsDocument& base, const ResultsDocument& now,
                           ComparisonSettings settings = {});

}  // namespace nbody::reports
