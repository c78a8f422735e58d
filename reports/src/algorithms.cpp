#include "algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "nbody/accuracy.hpp"

namespace nbody::reports {

bool is_tree(const ImplementationRecord& implementation) {
  return implementation.algorithm == Algorithm::barnes_hut;
}

bool is_tree_result(const ResultsDocument& doc, const ResultRecord& r) {
  const ImplementationRecord* impl = find_implementation(doc, r.implementation);
  return impl && is_tree(*impl);
}

double AccuracyBar::relative_l2_bound(std::size_t n) const {
  if (!float32_all_pairs) return relative_l2;
  const auto measured = float32_all_pairs_errors.find(n);
  return measured == float32_all_pairs_errors.end() ? -1 : measured->second.first;
}

std::optional<double> AccuracyBar::max_relative_bound(std::size_t n) const {
  if (!float32_all_pairs) return std::nullopt;
  const auto measured = float32_all_pairs_errors.find(n);
  return measured == float32_all_pairs_errors.end() ? -1 : measured->second.second;
}

bool AccuracyBar::met_by(double l2, double max_relative, std::size_t n) const {
  if (!(l2 <= relative_l2_bound(n))) return false;
  const std::optional<double> max_bound = max_relative_bound(n);
  return !max_bound || max_relative <= *max_bound;
}

namespace {

// Per N, the largest relative L2 and max error of the full-accuracy float32 all-pairs results
// measured ok: the float32 class, as this run measured it.
std::map<std::size_t, std::pair<double, double>> float32_all_pairs_errors(
    const ResultsDocument& doc) {
  std::map<std::size_t, std::pair<double, double>> worst;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl || is_tree(*impl) || impl->precision != Precision::f32 ||
        impl->accuracy_class != AccuracyClass::full || r.status != Status::ok || !r.accuracy) {
      continue;
    }
    const AccuracyMetrics& m = r.accuracy->metrics;
    auto [entry, added] = worst.try_emplace(r.n, m.relative_l2, m.max_relative);
    if (!added) {
      entry->second = {std::max(entry->second.first, m.relative_l2),
                       std::max(entry->second.second, m.max_relative)};
    }
  }
  return worst;
}

}  // namespace

std::vector<AccuracyBar> accuracy_bars(const ResultsDocument& doc) {
  std::vector<AccuracyBar> bars;
  for (const double bar : kAccuracyBarsRelativeL2) {  // the run's plan chose angles for these
    const long power = std::lround(std::log10(bar));  // each a power of ten: "1e-3"
    bars.push_back({.label = fmt::format("relative L2 ≤ 1e{}", power), .relative_l2 = bar});
  }
  bars.push_back({.label = "float32 all-pairs class",
                  .relative_l2 = 0,
                  .float32_all_pairs = true,
                  .float32_all_pairs_errors = float32_all_pairs_errors(doc)});
  return bars;
}

namespace {

std::optional<double> per_body(std::uint64_t count, std::size_t n) {
  return n > 0 ? std::optional<double>(static_cast<double>(count) / static_cast<double>(n))
               : std::nullopt;
}

// A ceiling's rate in the units a tree's cost model counts, or why the document has none.
struct CeilingRate {
  std::optional<double> per_second;
  std::string missing;
};

// The rate of the entry `name`: its `figure` times `scale`; an entry measured on more threads
// than the measurement used is scaled down to those (as the all-pairs instruction bounds are).
CeilingRate ceiling_rate(const ResultsDocument& doc, const std::string& name, CeilingFigure figure,
                         double scale, int threads) {
  const bool measured =
      doc.ceilings &&
      std::any_of(doc.ceilings->entries.begin(), doc.ceilings->entries.end(),
                  [](const CeilingEntry& e) { return !is_all_gather_ceiling(e.name); });
  if (!measured) return {.per_second = std::nullopt, .missing = "the run measured no ceilings"};
  const CeilingEntry* entry = doc.ceilings->find(name);
  if (entry == nullptr) {
    for (const UnavailableCeiling& u : doc.ceilings->unavailable) {
      const bool pattern =
          u.name.ends_with(".*") && name.starts_with(u.name.substr(0, u.name.size() - 1));
      if (u.name == name || pattern) {
        return {std::nullopt, fmt::format("no {}: {}", name, u.reason)};
      }
    }
    return {std::nullopt, fmt::format("no {} among the run's ceilings", name)};
  }
  const std::optional<double> value = figure == CeilingFigure::value
                                          ? std::optional<double>(entry->value)
                                          : entry->fp_instructions_per_second;
  if (!value || !(*value > 0)) {
    return {std::nullopt, fmt::format("{} has no {}", name, to_string(figure))};
  }
  double threads_scale = 1;
  if (threads > 1 && entry->threads && *entry->threads > 0) {
    threads_scale = std::min(1.0, threads / static_cast<double>(*entry->threads));
  }
  return {*value * scale * threads_scale, {}};
}

// The walk's and the build's bounds and fractions of a tree measured ok, from the cost model its
// formulation stated and the document's ceilings; or why not.
void add_bounds(const ResultsDocument& doc, const ResultRecord& r, TreeRow& row) {
  if (r.status != Status::ok || !row.median_s) return;
  if (row.build_s && *row.build_s < *row.median_s) row.walk_s = *row.median_s - *row.build_s;
  if (!r.tree_work || !r.tree_work->costs) {
    row.walk_bound_missing = row.build_bound_missing =
        "results older than schema version 11 record no cost model";
    return;
  }
  const TreeCostModel& model = *r.tree_work->costs;
  const CeilingRate walk_rate =
      ceiling_rate(doc, model.walk_ceiling, model.walk_figure, model.walk_scale, r.threads);
  if (walk_rate.per_second) {
    row.walk_bound_s = (static_cast<double>(r.tree_work->body_body) * model.body_body_cost +
                        static_cast<double>(r.tree_work->body_cell) * model.body_cell_cost) /
                       *walk_rate.per_second;
    if (row.walk_s) {
      row.walk_fraction_of_bound = *row.walk_bound_s / *row.walk_s;
    } else {
      row.walk_bound_missing = "no build time to take from its time";
    }
  } else {
    row.walk_bound_missing = walk_rate.missing;
  }
  const CeilingRate bandwidth = ceiling_rate(doc, model.build_ceiling, CeilingFigure::value, 1, 0);
  if (bandwidth.per_second) {
    row.build_bound_s = model.build_bytes / *bandwidth.per_second;
    if (row.build_s) {
      row.build_fraction_of_bound = *row.build_bound_s / *row.build_s;
    } else {
      row.build_bound_missing = "no build time recorded";
    }
  } else {
    row.build_bound_missing = bandwidth.missing;
  }
  if (row.walk_bound_s && row.build_bound_s) {
    row.fraction_of_bound = (*row.walk_bound_s + *row.build_bound_s) / *row.median_s;
  }
}

TreeRow tree_row(const ResultsDocument& doc, const ImplementationRecord& impl,
                 const ResultRecord& r) {
  TreeRow row{.implementation = r.implementation,
              .theta = impl.theta,
              .n = r.n,
              .device = impl.device,
              .precision = impl.precision,
              .status = r.status,
              .reason = r.reason,
              .disturbance = describe_disturbance(r)};
  if (r.kernel && r.kernel->median_s > 0) {
    const TimingStatistics& t = *r.kernel;
    row.median_s = t.median_s;
    row.ci_low_s = t.ci_low_s;
    row.ci_high_s = t.ci_high_s;
    row.ci_confidence = t.ci_confidence;
    row.bodies_per_second = static_cast<double>(r.n) / t.median_s;
  }
  if (r.tree_work) {
    row.body_body_per_body = per_body(r.tree_work->body_body, r.n);
    row.body_cell_per_body = per_body(r.tree_work->body_cell, r.n);
    if (r.tree_work->build && r.tree_work->build->median_s > 0) {
      row.build_s = r.tree_work->build->median_s;
      if (row.median_s) row.build_share = *row.build_s / *row.median_s;
    }
  }
  // The measurements the Energy section charts (EnergyAnalysis::points): timed ok, energy read.
  if (r.status == Status::ok && r.kernel) row.energy = energy_figure(doc, r);
  if (r.accuracy) {
    row.relative_l2 = r.accuracy->metrics.relative_l2;
    row.max_relative = r.accuracy->metrics.max_relative;
    row.relative_l2_bound = r.accuracy->relative_l2_bound;
    row.passed = r.accuracy->passed;
  }
  add_bounds(doc, r, row);
  return row;
}

std::vector<TreeRow> tree_rows(const ResultsDocument& doc) {
  std::vector<TreeRow> rows;
  for (std::size_t i = 0; i < doc.results.size(); ++i) {
    const ResultRecord& r = doc.results[i];
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    // Skipped measurements ran nothing: they are listed, grouped, with the other skipped ones.
    if (!impl || !is_tree(*impl) || r.status == Status::skipped) continue;
    rows.push_back(tree_row(doc, *impl, r));
    rows.back().result = i;
  }
  return rows;
}

// Every measurement that can stand at a bar: timed ok, its accuracy measured and finite; a tree
// with its fractions of bound from its row of `trees`.
std::vector<TimeFigure> time_figures(const ResultsDocument& doc,
                                     const std::vector<TreeRow>& trees) {
  std::vector<TimeFigure> figures;
  for (std::size_t i = 0; i < doc.results.size(); ++i) {
    const ResultRecord& r = doc.results[i];
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl || r.status != Status::ok || !r.kernel || !(r.kernel->median_s > 0) || !r.accuracy) {
      continue;
    }
    const AccuracyMetrics& m = r.accuracy->metrics;
    if (!std::isfinite(m.relative_l2) || !std::isfinite(m.max_relative)) continue;
    figures.push_back({.implementation = r.implementation,
                       .algorithm = impl->algorithm,
                       .theta = impl->theta,
                       .device = impl->device,
                       .precision = impl->precision,
                       .n = r.n,
                       .seconds = r.kernel->median_s,
                       .low_s = r.kernel->ci_low_s,
                       .high_s = r.kernel->ci_high_s,
                       .relative_l2 = m.relative_l2,
                       .max_relative = m.max_relative,
                       .disturbance = describe_disturbance(r),
                       .energy = energy_figure(doc, r)});
    const auto tree =
        std::find_if(trees.begin(), trees.end(), [i](const TreeRow& t) { return t.result == i; });
    if (tree != trees.end()) {
      figures.back().walk_fraction_of_bound = tree->walk_fraction_of_bound;
      figures.back().build_fraction_of_bound = tree->build_fraction_of_bound;
    }
  }
  return figures;
}

std::vector<std::size_t> ascending_sizes(const std::vector<TimeFigure>& figures) {
  std::set<std::size_t> sizes;
  for (const TimeFigure& f : figures) sizes.insert(f.n);
  return {sizes.begin(), sizes.end()};
}

// The fastest figure of `device` at `n` meeting `bar`, or none.
std::optional<TimeFigure> fastest_meeting(const std::vector<TimeFigure>& figures,
                                          const AccuracyBar& bar, DeviceKind device,
                                          std::size_t n) {
  std::optional<TimeFigure> fastest;
  for (const TimeFigure& f : figures) {
    if (f.device != device || f.n != n || !bar.met_by(f.relative_l2, f.max_relative, n)) continue;
    if (!fastest || f.seconds < fastest->seconds) fastest = f;
  }
  return fastest;
}

// GPU speed over CPU speed; the interval sets the slowest GPU against the fastest CPU and the
// fastest GPU against the slowest CPU, as the all-pairs headline's RateRatio does.
RateRatio gpu_over_cpu(const TimeFigure& gpu, const TimeFigure& cpu) {
  return {.value = cpu.seconds / gpu.seconds,
          .low = gpu.high_s > 0 ? cpu.low_s / gpu.high_s : 0,
          .high = gpu.low_s > 0 ? cpu.high_s / gpu.low_s : 0};
}

std::vector<BarHeadlineRow> bar_rows(const std::vector<TimeFigure>& figures,
                                     const std::vector<AccuracyBar>& bars) {
  const auto measured = [&figures](DeviceKind device, std::size_t n) {
    return std::any_of(figures.begin(), figures.end(),
                       [&](const TimeFigure& f) { return f.device == device && f.n == n; });
  };
  std::vector<BarHeadlineRow> rows;
  for (std::size_t bar = 0; bar < bars.size(); ++bar) {
    for (const std::size_t n : ascending_sizes(figures)) {
      BarHeadlineRow row{.bar = bar,
                         .n = n,
                         .cpu_measured = measured(DeviceKind::cpu, n),
                         .gpu_measured = measured(DeviceKind::gpu, n)};
      row.cpu = fastest_meeting(figures, bars[bar], DeviceKind::cpu, n);
      row.gpu = fastest_meeting(figures, bars[bar], DeviceKind::gpu, n);
      if (row.cpu && row.gpu) row.gpu_over_cpu = gpu_over_cpu(*row.gpu, *row.cpu);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

bool dominates(const TimeFigure& a, const TimeFigure& b) {
  return a.relative_l2 <= b.relative_l2 && a.seconds <= b.seconds &&
         (a.relative_l2 < b.relative_l2 || a.seconds < b.seconds);
}

std::vector<ParetoFront> pareto_fronts(const std::vector<TimeFigure>& figures) {
  std::vector<ParetoFront> fronts;
  for (const std::size_t n : ascending_sizes(figures)) {
    for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
      ParetoFront front{.device = device, .n = n};
      for (const TimeFigure& f : figures) {
        if (f.device == device && f.n == n) front.points.push_back({.figure = f});
      }
      if (front.points.empty()) continue;
      for (ParetoPoint& p : front.points) {
        p.on_front =
            std::none_of(front.points.begin(), front.points.end(),
                         [&p](const ParetoPoint& q) { return dominates(q.figure, p.figure); });
      }
      std::stable_sort(front.points.begin(), front.points.end(),
                       [](const ParetoPoint& a, const ParetoPoint& b) {
                         return a.figure.relative_l2 < b.figure.relative_l2;
                       });
      fronts.push_back(std::move(front));
    }
  }
  return fronts;
}

// The sizes where `device` measured both an all-pairs and a tree formulation ok, ascending.
std::vector<std::size_t> sizes_with_both(const std::vector<TimeFigure>& figures,
                                         DeviceKind device) {
  std::map<std::size_t, std::set<Algorithm>> algorithms;
  for (const TimeFigure& f : figures) {
    if (f.device == device) algorithms[f.n].insert(f.algorithm);
  }
  std::vector<std::size_t> sizes;
  for (const auto& [n, found] : algorithms) {
    if (found.contains(Algorithm::all_pairs) && found.contains(Algorithm::barnes_hut)) {
      sizes.push_back(n);
    }
  }
  return sizes;
}

std::vector<Crossover> crossovers(const std::vector<TimeFigure>& figures,
                                  const std::vector<AccuracyBar>& bars) {
  std::vector<Crossover> found;
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    const std::vector<std::size_t> sizes = sizes_with_both(figures, device);
    const bool measured = std::any_of(figures.begin(), figures.end(),
                                      [device](const TimeFigure& f) { return f.device == device; });
    if (!measured) continue;
    for (std::size_t bar = 0; bar < bars.size(); ++bar) {
      Crossover crossover{.device = device, .bar = bar, .compared_sizes = sizes};
      // From the largest size down: the tree's run of wins that reaches the largest size.
      for (auto n = sizes.rbegin(); n != sizes.rend(); ++n) {
        const std::optional<TimeFigure> fastest = fastest_meeting(figures, bars[bar], device, *n);
        if (!fastest || fastest->algorithm != Algorithm::barnes_hut) break;
        crossover.tree_from = *n;
      }
      found.push_back(std::move(crossover));
    }
  }
  return found;
}

}  // namespace

AlgorithmComparison compare_algorithms(const ResultsDocument& doc) {
  AlgorithmComparison comparison;
  comparison.trees = tree_rows(doc);
  if (comparison.trees.empty()) return comparison;
  comparison.bars = accuracy_bars(doc);
  const std::vector<TimeFigure> figures = time_figures(doc, comparison.trees);
  comparison.rows = bar_rows(figures, comparison.bars);
  comparison.fronts = pareto_fronts(figures);
  comparison.crossovers = crossovers(figures, comparison.bars);
  return comparison;
}

}  // namespace nbody::reports
