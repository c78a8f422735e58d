// A run planned within its time budget before its first measurement, from the question it answers.
#include "nbody/app/run_plan.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "nbody/sizes.hpp"

namespace nbody {
namespace {

// A counter pass: about one evaluation on the CPU (perf), a few replays and CUPTI's set-up on the
// GPU (0.4 to 1.9 s at 64K on the H100).
constexpr double kCounterPassOverhead = 0.5;
// A likely best formulation is planned with every other whose probe is within this factor of it:
// one evaluation at a probe size reads up to a fifth off on a shared machine. Such a runner-up is
// part of the headline only where it costs at most this share of the budget: where a measurement
// is dear its evaluation is long and its probe steady (a runner-up at 1M on the two-H200 host,
// 10 s, once left no room for the best it was run beside).
constexpr double kLikelyBestMargin = 1.25;
constexpr double kRunnerUpShareOfBudget = 0.02;
// What no estimate sees is kept out of the plan: the process's start and last reports, and on the
// shared Xeons estimates that read up to 8% low (the H100 host, two runs: 0% and 8%), which at the
// end of a run would otherwise cost the largest size's trees.
constexpr double kUnforeseenShareOfBudget = 0.08;
// Naive baselines are planned at the largest sizes whose measurement costs at most this share of
// the budget: naive loops are slow, and their ratio hardly changes with N.
constexpr double kNaiveShareOfBudget = 0.1;
constexpr std::size_t kNaiveSizes = 2;

// Google Benchmark's run of one iteration count: more iterations until the run is significant.
struct IterationSearch {
  double spent = 0;        // seconds of the runs below the target
  long long iters = 1;     // the count it settles on
  double run_seconds = 0;  // a run at that count
};

IterationSearch search_iterations(double manual_s, double target_s) {
  constexpr long long kMaxIterations = 1000000000;
  IterationSearch s;
  for (;;) {
    const double seconds = static_cast<double>(s.iters) * manual_s;
    if (seconds >= target_s || s.iters >= kMaxIterations) {
      s.run_seconds = seconds;
      return s;
    }
    s.spent += seconds;
    const bool significant = seconds / target_s > 0.1;
    const double multiplier = significant ? target_s * 1.4 / std::max(seconds, 1e-9) : 10.0;
    s.iters =
        std::min(kMaxIterations, std::llround(std::max(multiplier * static_cast<double>(s.iters),
                                                       static_cast<double>(s.iters) + 1.0)));
  }
}

bool is_tree(const ImplementationInfo& info) {
  return info.algorithm != Algorithm::all_pairs;
}

bool full_all_pairs(const ImplementationInfo& info) {
  return !is_tree(info) && info.accuracy_class == AccuracyClass::full &&
         info.role != Role::tuning_variant;
}

// One (formulation, N) the run can measure: available, probed, within --max-eval-seconds.
struct Candidate {
  const Implementation* impl = nullptr;
  std::size_t n = 0;
  double evaluation_s = 0;  // predicted, kernel
};

// The candidates and the plan's measurements, index for index, with the steps being chosen.
struct Planning {
  const std::vector<std::size_t>& sizes;
  double budget_s = 0;
  std::vector<Candidate> candidates;
  RunPlan& plan;

  std::optional<std::size_t> index(const std::string& name, std::size_t n) const {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].n == n && candidates[i].impl->info.name == name) return i;
    }
    return std::nullopt;
  }
  // Moves (name, N) up to `step` where it is a candidate in a later one.
  void promote(std::size_t i, PlanStep step) {
    PlanStep& current = plan.measurements[i].step;
    if (step < current) current = step;
  }
  // The candidates at N whose formulation passes `keep`.
  template <class Keep>
  std::vector<std::size_t> at(std::size_t n, Keep keep) const {
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].n == n && keep(candidates[i].impl->info)) found.push_back(i);
    }
    return found;
  }
  // The fastest by prediction of `found`, or empty.
  std::optional<std::size_t> fastest(const std::vector<std::size_t>& found) const {
    std::optional<std::size_t> best;
    for (const std::size_t i : found) {
      if (!best || candidates[i].evaluation_s < candidates[*best].evaluation_s) best = i;
    }
    return best;
  }
};

// Step 1: at every size, the likely best full-accuracy all-pairs formulation of each device and
// precision, and any other within kLikelyBestMargin of it that is cheap to measure.
void plan_headline(Planning& p) {
  for (const std::size_t n : p.sizes) {
    for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
      for (const Precision precision : {Precision::f32, Precision::f64}) {
        const auto found = p.at(n, [&](const ImplementationInfo& info) {
          return full_all_pairs(info) && info.role == Role::optimized && info.device == device &&
                 info.precision == precision;
        });
        const auto best = p.fastest(found);
        if (!best) continue;
        for (const std::size_t i : found) {
          const bool close =
              p.candidates[i].evaluation_s <= kLikelyBestMargin * p.candidates[*best].evaluation_s;
          const bool cheap =
              p.plan.measurements[i].estimated_s <= kRunnerUpShareOfBudget * p.budget_s;
          if (i == *best || (close && cheap)) p.promote(i, PlanStep::headline);
        }
      }
    }
  }
}

// Step 2: each precision's naive baselines of both devices at the kNaiveSizes largest sizes where
// all of them fit and cost at most kNaiveShareOfBudget; where fewer do, the cheapest others.
std::vector<std::size_t> plan_naive(Planning& p) {
  std::set<std::size_t> chosen_sizes;
  for (const Precision precision : {Precision::f32, Precision::f64}) {
    const auto naive = [&](const ImplementationInfo& info) {
      return !is_tree(info) && info.role == Role::naive_baseline && info.precision == precision;
    };
    std::set<std::string> names;  // the naive formulations the run can measure somewhere
    for (const Candidate& c : p.candidates) {
      if (naive(c.impl->info)) names.insert(c.impl->info.name);
    }
    const std::size_t formulations = names.size();
    if (formulations == 0) continue;
    std::vector<std::pair<std::size_t, double>> fitting;  // (N, cost), N descending
    for (auto n = p.sizes.rbegin(); n != p.sizes.rend(); ++n) {
      const auto found = p.at(*n, naive);
      if (found.size() != formulations) continue;
      double cost = 0;
      for (const std::size_t i : found) cost += p.plan.measurements[i].estimated_s;
      fitting.emplace_back(*n, cost);
    }
    std::vector<std::size_t> sizes;
    for (const auto& [n, cost] : fitting) {
      if (sizes.size() < kNaiveSizes && cost <= kNaiveShareOfBudget * p.budget_s)
        sizes.push_back(n);
    }
    for (auto it = fitting.rbegin(); it != fitting.rend() && sizes.size() < kNaiveSizes; ++it) {
      if (std::find(sizes.begin(), sizes.end(), it->first) == sizes.end())
        sizes.push_back(it->first);
    }
    for (const std::size_t n : sizes) {
      chosen_sizes.insert(n);
      for (const std::size_t i : p.at(n, naive)) p.promote(i, PlanStep::naive);
    }
  }
  return {chosen_sizes.begin(), chosen_sizes.end()};
}

// The sizes around the first from which `tree` is predicted faster than every full-accuracy
// all-pairs formulation of its device at every size both can be measured, and the largest size.
std::set<std::size_t> tree_sizes(const Planning& p, const Implementation& tree) {
  const DeviceKind device = tree.info.device;
  std::vector<std::pair<std::size_t, bool>> compared;  // (N, tree faster), N ascending
  std::set<std::size_t> sizes;
  for (const std::size_t n : p.sizes) {
    const auto tree_here = p.index(tree.info.name, n);
    if (!tree_here) continue;
    sizes = {n};  // the largest so far
    const auto all_pairs = p.fastest(p.at(n, [&](const ImplementationInfo& info) {
      return full_all_pairs(info) && info.device == device;
    }));
    if (!all_pairs) continue;
    compared.emplace_back(
        n, p.candidates[*tree_here].evaluation_s < p.candidates[*all_pairs].evaluation_s);
  }
  std::size_t first = compared.size();  // the predicted crossover's index
  while (first > 0 && compared[first - 1].second) --first;
  const std::size_t centre = std::min(first, compared.empty() ? 0 : compared.size() - 1);
  for (std::size_t k = centre == 0 ? 0 : centre - 1; k < compared.size() && k <= centre + 1; ++k)
    sizes.insert(compared[k].first);
  return sizes;
}

// Step 3: for each accuracy bar and device, the tree at the largest opening angle whose surveyed
// error meets the bar (float32 where there is one), at the tree_sizes of every device's: at each
// size either device's tree is measured, the other's is too, so neither side's figure at the bar
// is a slower angle's.
void plan_trees(Planning& p) {
  std::set<const Implementation*> trees;
  for (const Candidate& c : p.candidates) {
    if (is_tree(c.impl->info) && c.impl->info.theta) trees.insert(c.impl);
  }
  const auto key = [](const ImplementationInfo& i) {
    return std::pair{i.precision == Precision::f32, *i.theta};
  };
  for (const double bar : kAccuracyBarsRelativeL2) {
    std::vector<const Implementation*> chosen;  // one a device at most
    for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
      const Implementation* best = nullptr;
      for (const Implementation* tree : trees) {
        const ImplementationInfo& info = tree->info;
        if (info.device != device || barnes_hut_surveyed_relative_l2(*info.theta) > bar) continue;
        if (!best || key(info) > key(best->info)) best = tree;
      }
      if (best) chosen.push_back(best);
    }
    std::set<std::size_t> sizes;
    for (const Implementation* tree : chosen) sizes.merge(tree_sizes(p, *tree));
    for (const Implementation* tree : chosen) {
      for (const std::size_t n : sizes) {
        if (const auto i = p.index(tree->info.name, n)) p.promote(*i, PlanStep::trees);
      }
    }
  }
}

// Step 4: every full-accuracy all-pairs formulation (each device's optimization ladder) at the
// largest naive size and at the counters' size, two sizes at most.
void plan_ladders(Planning& p, const std::vector<std::size_t>& naive_sizes,
                  const std::vector<std::size_t>& counter_sizes) {
  std::vector<std::size_t> sizes;
  if (!naive_sizes.empty()) sizes.push_back(naive_sizes.back());
  for (const std::size_t n : counter_sizes) {
    if (sizes.size() < 2 && std::find(sizes.begin(), sizes.end(), n) == sizes.end())
      sizes.push_back(n);
  }
  if (sizes.empty() && !p.sizes.empty()) sizes.push_back(p.sizes[p.sizes.size() / 2]);
  for (const std::size_t n : sizes) {
    for (const std::size_t i : p.at(n, full_all_pairs)) p.promote(i, PlanStep::ladders);
  }
}

// The reference a measurement brings with it where nothing of its precision is measured at its
// size yet.
double reference_brought(const PlannedMeasurement& m, Precision precision, const SizeCosts& costs,
                         const std::set<std::pair<std::size_t, int>>& references) {
  return references.contains({m.n, static_cast<int>(precision)}) ? 0 : costs.reference_s(m.n);
}

// Keeps the measurements step by step, in the run's order within a step (the rest cheapest
// first), while they fit what is left.
void keep_within_budget(Planning& p, const SizeCosts& costs) {
  RunPlan& plan = p.plan;
  std::vector<std::size_t> order(plan.measurements.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const PlannedMeasurement &x = plan.measurements[a], &y = plan.measurements[b];
    if (x.step != y.step) return x.step < y.step;
    return x.step == PlanStep::rest && x.estimated_s < y.estimated_s;
  });
  plan.size_costs = costs;
  // Every size's input is generated, whatever is measured there.
  for (const std::size_t n : p.sizes) {
    plan.size_costs_s[n] = costs.input_s(n);
    plan.planned_s += costs.input_s(n);
  }
  const double plannable = (1 - kUnforeseenShareOfBudget) * p.budget_s;
  std::set<std::pair<std::size_t, int>> refs;
  for (const std::size_t i : order) {
    PlannedMeasurement& m = plan.measurements[i];
    const Precision precision = p.candidates[i].impl->info.precision;
    const double once = reference_brought(m, precision, costs, refs);
    if (plan.spent_before_s + plan.planned_s + m.estimated_s + once <= plannable) {
      plan.planned_s += m.estimated_s + once;
      plan.size_costs_s[m.n] += once;
      refs.insert({m.n, static_cast<int>(precision)});
      continue;
    }
    m.included = false;
    m.left_out_because = fmt::format(
        "left out by the plan ({} step): about {:.1f} s where {:.1f} s were left after the steps "
        "it keeps first, of the {:.0f} s it plans (the --budget of {:.0f} s less {:.0f}% for "
        "estimates that read low)",
        to_string(m.step), m.estimated_s + once,
        std::max(0.0, plannable - plan.spent_before_s - plan.planned_s), plannable, p.budget_s,
        100 * kUnforeseenShareOfBudget);
  }
}

}  // namespace

ProbeFigures probe_figures_at(const ProbeCurve& curve, Algorithm algorithm, std::size_t n) {
  if (curve.empty()) return {.n = n};
  const ProbeFigures* base = &curve.front();
  for (const ProbeFigures& f : curve) {
    if (f.n <= n) base = &f;
  }
  const auto scale = [&](double seconds) {
    return seconds_scaled_to(algorithm, n, base->n, seconds);
  };
  // Launch and wait cost the same at any N: only the evaluation itself scales.
  ProbeFigures at = *base;
  at.n = n;
  at.kernel_s = scale(base->kernel_s);
  at.kernel_wall_s = at.kernel_s + std::max(0.0, base->kernel_wall_s - base->kernel_s);
  at.end_to_end_s = scale(base->end_to_end_s);
  at.end_to_end_wall_s =
      at.end_to_end_s + std::max(0.0, base->end_to_end_wall_s - base->end_to_end_s);
  at.prepare_s = base->prepare_s * static_cast<double>(n) / static_cast<double>(base->n);
  return at;
}

double SizeCosts::input_s(std::size_t n) const {
  return input_seconds_per_body * static_cast<double>(n);
}

double SizeCosts::reference_s(std::size_t n) const {
  return reference_seconds_per_interaction * static_cast<double>(n) *
         static_cast<double>(std::min(n, validation_bodies));
}

double timing_seconds(double manual_s, double wall_s, const RepetitionSettings& timing,
                      double warmup_s) {
  if (!(manual_s > 0)) return 0;
  double manual = 0;
  if (warmup_s > 0) {
    const IterationSearch warmup = search_iterations(manual_s, warmup_s);
    manual += warmup.spent + warmup.run_seconds;
  }
  const IterationSearch first = search_iterations(manual_s, timing.min_time_s);
  manual += first.spent + std::max(1, timing.repetitions) * first.run_seconds;
  return manual * std::max(1.0, wall_s / manual_s);
}

double estimated_measurement_seconds(const ImplementationInfo& info, const ProbeFigures& at_n,
                                     const SuiteOptions& options, bool counters_here,
                                     int attempts) {
  RepetitionSettings timing = options.timing;
  timing.min_time_s = timing_min_time_s(options, info.device);
  const double validation = at_n.prepare_s + at_n.kernel_wall_s;
  // The validation evaluation is the warm-up where it lasted the warm-up time (the runner).
  const double warmup = at_n.kernel_s >= timing.warmup_s ? 0 : timing.warmup_s;
  double timed = 0;
  if (info.device == DeviceKind::gpu) {
    timed = timing_seconds(at_n.end_to_end_s, at_n.end_to_end_wall_s, timing, warmup);
    if (at_n.kernel_s < options.separate_kernel_timing_below_s)
      timed += timing_seconds(at_n.kernel_s, at_n.kernel_wall_s, options.timing, warmup);
  } else {
    timed = timing_seconds(at_n.kernel_s, at_n.kernel_wall_s, timing, warmup);
  }
  const bool counted = counters_here && info.algorithm == Algorithm::all_pairs;
  const double counters = counted ? at_n.kernel_wall_s + kCounterPassOverhead : 0;
  return validation + std::max(1, attempts) * timed + counters;
}

const PlannedMeasurement* RunPlan::find(const std::string& implementation, std::size_t n) const {
  for (const PlannedMeasurement& m : measurements) {
    if (m.implementation == implementation && m.n == n) return &m;
  }
  return nullptr;
}

std::optional<std::string> RunPlan::left_out(const std::string& implementation,
                                             std::size_t n) const {
  const PlannedMeasurement* m = find(implementation, n);
  if (m && !m->included) return m->left_out_because;
  return std::nullopt;
}

std::optional<std::string> RunPlan::no_longer_fits(const std::string& implementation, std::size_t n,
                                                   double elapsed_s, double pace,
                                                   bool reference_pending) const {
  const auto it = std::find_if(measurements.begin(), measurements.end(), [&](const auto& m) {
    return m.implementation == implementation && m.n == n;
  });
  if (it == measurements.end() || !it->included) return std::nullopt;
  // What must still come after it: the planned measurements of earlier steps, later in the run.
  double kept_first = 0;
  for (auto later = std::next(it); later != measurements.end(); ++later) {
    if (later->included && later->step < it->step) kept_first += later->estimated_s;
  }
  pace = std::max(1.0, pace);
  double once = reference_pending ? size_costs.reference_s(n) : 0;
  for (auto later = size_costs_s.upper_bound(n); later != size_costs_s.end(); ++later)
    once += later->second;
  if (elapsed_s + pace * (it->estimated_s + kept_first) + once <= budget_s) return std::nullopt;
  return fmt::format(
      "left out as the run fell behind its plan: about {:.1f} s where {:.0f} s of the --budget of "
      "{:.0f} s were left, {:.0f} s of them for the measurements of earlier steps and the inputs "
      "and references still to come{}",
      pace * it->estimated_s, std::max(0.0, budget_s - elapsed_s), budget_s,
      pace * kept_first + once,
      pace > 1.05 ? fmt::format(" (measurements so far took {:.1f} times their estimates: "
                                "disturbed timings are taken again)",
                                pace)
                  : "");
}

std::string RunPlan::describe() const {
  std::size_t included = 0;
  std::map<PlanStep, std::size_t> per_step;
  std::vector<std::string> left;
  for (const PlannedMeasurement& m : measurements) {
    if (m.included) {
      ++included;
      ++per_step[m.step];
    } else {
      left.push_back(fmt::format("{} at {}", m.implementation, format_size(m.n)));
    }
  }
  std::vector<std::string> steps;
  for (const auto& [step, count] : per_step)
    steps.push_back(fmt::format("{} {}", to_string(step), count));
  std::string text = fmt::format(
      "plan: {} of {} measurements within the budget of {:.0f} s (estimated {:.0f} s after {:.0f} "
      "s of ceilings and probes{}): {}",
      included, measurements.size(), budget_s, planned_s, spent_before_s,
      expected_attempts > 1
          ? fmt::format(", each timing taken {} times on this busy machine", expected_attempts)
          : "",
      fmt::join(steps, ", "));
  if (left.empty()) return text;
  const std::size_t shown = std::min<std::size_t>(left.size(), 8);
  text += fmt::format("; left out: {}",
                      fmt::join(left.begin(), left.begin() + static_cast<long>(shown), ", "));
  if (left.size() > shown) text += fmt::format(" and {} more", left.size() - shown);
  return text + " (--budget sets it; 0 for none)";
}

RunPlan plan_run(std::span<const Implementation* const> selected, const SuiteOptions& options,
                 const std::vector<std::size_t>& sizes,
                 const std::vector<std::size_t>& counter_sizes, double budget_s,
                 const PlanInputs& inputs) {
  RunPlan plan{.budget_s = budget_s,
               .spent_before_s = inputs.spent_s,
               .expected_attempts = std::max(1, inputs.expected_attempts)};
  const std::map<std::string, ProbeCurve>& curves = inputs.probes;
  for (const auto& [name, curve] : curves) {
    if (!curve.empty()) plan.estimates[name] = {curve.back().n, curve.back().kernel_s};
  }
  Planning p{.sizes = sizes, .budget_s = budget_s, .plan = plan};
  for (const std::size_t n : sizes) {
    const bool counters_here =
        options.counters &&
        std::find(counter_sizes.begin(), counter_sizes.end(), n) != counter_sizes.end();
    for (const Implementation* impl : selected) {
      const auto curve = curves.find(impl->info.name);
      if (curve == curves.end() || curve->second.empty()) continue;  // unavailable, probe failed
      if (impl->cannot_run(n, options.execution)) continue;          // the run skips it, saying why
      const ProbeFigures at_n = probe_figures_at(curve->second, impl->info.algorithm, n);
      if (at_n.kernel_s > options.max_eval_seconds) continue;  // likewise
      p.candidates.push_back({.impl = impl, .n = n, .evaluation_s = at_n.kernel_s});
      plan.measurements.push_back(
          {.implementation = impl->info.name,
           .n = n,
           .step = PlanStep::rest,
           .estimated_s = estimated_measurement_seconds(impl->info, at_n, options, counters_here,
                                                        plan.expected_attempts)});
    }
  }
  plan_headline(p);
  const std::vector<std::size_t> naive_sizes = plan_naive(p);
  plan_trees(p);
  plan_ladders(p, naive_sizes, counter_sizes);
  keep_within_budget(p, inputs.size_costs);
  return plan;
}

}  // namespace nbody
