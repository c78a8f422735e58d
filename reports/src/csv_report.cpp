#include "nbody/reports/csv_report.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace nbody::reports {
namespace {

// Version 9's tree columns (algorithm to build_s), version 10's energy columns and version 11's
// trees' bounds come last, in that order, so existing readers keep their positions.
constexpr const char* kColumns[] = {"implementation",
                                    "device",
                                    "precision",
                                    "accuracy_class",
                                    "role",
                                    "initial_condition",
                                    "n",
                                    "status",
                                    "reason",
                                    "median_s",
                                    "ci_low_s",
                                    "ci_high_s",
                                    "ci_confidence",
                                    "cv",
                                    "repetitions",
                                    "interactions_per_second",
                                    "interactions_per_second_min",
                                    "interactions_per_second_max",
                                    "gflops_at_20",
                                    "end_to_end_median_s",
                                    "end_to_end_interactions_per_second",
                                    "communication_median_s",
                                    "relative_l2",
                                    "max_relative",
                                    "p99_relative",
                                    "accuracy_passed",
                                    "gflops_counted",
                                    "fraction_of_measured_peak",
                                    "fraction_of_instruction_bound",
                                    "fraction_of_interaction_mix_ceiling",
                                    "dram_bytes_per_second",
                                    "disturbed",
                                    "disturbances",
                                    "algorithm",
                                    "theta",
                                    "body_body",
                                    "body_cell",
                                    "build_s",
                                    "energy_j_per_evaluation",
                                    "energy_j_low",
                                    "energy_j_high",
                                    "mean_watts",
                                    "interactions_per_joule",
                                    "energy_resolved",
                                    "walk_s",
                                    "walk_bound_s",
                                    "walk_fraction_of_bound",
                                    "build_bound_s",
                                    "build_fraction_of_bound"};

// simulate: one row per simulations[] record.
constexpr const char* kSimulationColumns[] = {"implementation",
                                              "device",
                                              "precision",
                                              "accuracy_class",
                                              "role",
                                              "initial_condition",
                                              "n",
                                              "status",
                                              "reason",
                                              "threads",
                                              "steps",
                                              "dt",
                                              "wall_seconds",
                                              "steps_per_second",
                                              "step_s",
                                              "force_s",
                                              "integration_s",
                                              "other_s",
                                              "communication_s",
                                              "diagnostics_s",
                                              "snapshots_s",
                                              "max_relative_energy_error",
                                              "final_relative_energy_error",
                                              "divergence_steps",
                                              "divergence_position",
                                              "divergence_velocity",
                                              "algorithm",
                                              "theta",
                                              "tree_build_s",
                                              "joules_per_step"};

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Shortest text that reads back as the same double, so the CSV loses nothing of results.json.
std::string number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

std::string boolean(bool value) {
  return value ? "true" : "false";
}

// Both timings' disturbances: on the GPU the end-to-end timing is the kernel's own repetitions,
// so the same reason is listed once.
std::vector<std::string> disturbances_of(const ResultRecord& r) {
  std::vector<std::string> reasons;
  for (const auto* timing : {&r.kernel, &r.end_to_end}) {
    if (!*timing || !(*timing)->conditions) continue;
    for (const std::string& reason : (*timing)->conditions->disturbances) {
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
        reasons.push_back(reason);
      }
    }
  }
  return reasons;
}

bool has_conditions(const ResultRecord& r) {
  return (r.kernel && r.kernel->conditions) || (r.end_to_end && r.end_to_end->conditions);
}

// A timing's energy (version 10), empty cells where its device's was not read; a tree is credited
// no interactions, so it has no interactions per joule.
void append_energy(std::vector<std::string>& cells, const std::optional<EnergyFigure>& e) {
  cells.push_back(e ? number(e->joules_per_evaluation) : "");
  cells.push_back(e ? number(e->low_j) : "");
  cells.push_back(e ? number(e->high_j) : "");
  cells.push_back(e ? number(e->mean_watts) : "");
  cells.push_back(e ? number(e->interactions_per_joule) : "");
  cells.push_back(e ? boolean(e->resolved) : "");
}

// A tree's walk and build against their own bounds (version 11; the analysis's TreeRow), empty
// cells where the record is no tree or a bound could not be formed.
void append_tree_bounds(std::vector<std::string>& cells, const TreeRow* t) {
  for (const auto member :
       {&TreeRow::walk_s, &TreeRow::walk_bound_s, &TreeRow::walk_fraction_of_bound,
        &TreeRow::build_bound_s, &TreeRow::build_fraction_of_bound}) {
    cells.push_back(t != nullptr ? number(t->*member) : "");
  }
}

void append_row(std::string& out, const std::vector<std::string>& cells) {
  out += csv_record(cells);
}

std::string render_simulation_csv(const ResultsDocument& doc) {
  std::string out;
  append_row(
      out, std::vector<std::string>(std::begin(kSimulationColumns), std::end(kSimulationColumns)));
  for (const SimulationRecord& r : doc.simulations) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    const auto property = [impl](auto member) {
      return impl ? std::string(to_string(impl->*member)) : std::string();
    };
    // A skipped simulation ran no step: its zeros in results.json are no measurement, so its
    // figures are empty cells, as a skipped measurement's are in a run's CSV.
    const bool ran = r.status != Status::skipped;
    const auto figure = [ran](double value) { return ran ? number(value) : std::string(); };
    const StepSplit& p = r.per_step;
    const std::optional<TrajectoryDivergence>& d = r.divergence;
    std::vector<std::string> cells = {
        r.implementation,
        property(&ImplementationRecord::device),
        property(&ImplementationRecord::precision),
        property(&ImplementationRecord::accuracy_class),
        property(&ImplementationRecord::role),
        r.initial_condition,
        std::to_string(r.n),
        std::string(to_string(r.status)),
        r.reason,
        std::to_string(r.threads),
        ran ? std::to_string(r.steps) : "",
        number(r.dt),
        figure(r.wall_seconds),
        figure(r.steps_per_second),
        figure(p.step_s),
        figure(p.force_s),
        figure(p.integration_s),
        figure(p.other_s),
        figure(p.communication_s),
        figure(p.diagnostics_s),
        figure(p.snapshots_s),
        r.conservation.empty() ? "" : number(r.max_relative_energy_error),
        r.conservation.empty() ? "" : number(r.conservation.back().relative_energy_error),
        d ? std::to_string(d->steps) : "",
        d ? number(d->position) : "",
        d ? number(d->velocity) : "",
        property(&ImplementationRecord::algorithm),
        impl ? number(impl->theta) : "",
        figure(p.tree_build_s),
        ran && r.energy ? number(r.energy->per_evaluation_j) : ""};
    append_row(out, cells);
  }
  return out;
}

}  // namespace

std::string render_csv(const ResultsDocument& doc, const Analysis& analysis) {
  if (kind_of(doc.settings) == DocumentKind::simulate) return render_simulation_csv(doc);
  std::string out;
  append_row(out, std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
  for (std::size_t i = 0; i < doc.results.size(); ++i) {
    const ResultRecord& r = doc.results[i];
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    const auto property = [impl](auto member) {
      return impl ? std::string(to_string(impl->*member)) : std::string();
    };
    const std::optional<TimingStatistics>& k = r.kernel;
    const std::optional<RateFigures>& rate = r.kernel_rate;
    const std::optional<AccuracyRecord>& a = r.accuracy;
    const DerivedFigures* derived =
        r.counters && r.counters->available() ? &r.counters->derived : nullptr;
    const auto figure = [derived](std::optional<double> DerivedFigures::*member) {
      return derived ? number(derived->*member) : std::string();
    };
    const std::vector<std::string> disturbances = disturbances_of(r);
    std::vector<std::string> cells = {
        r.implementation, property(&ImplementationRecord::device),
        property(&ImplementationRecord::precision), property(&ImplementationRecord::accuracy_class),
        property(&ImplementationRecord::role), r.initial_condition, std::to_string(r.n),
        std::string(to_string(r.status)), r.reason, k ? number(k->median_s) : "",
        k ? number(k->ci_low_s) : "", k ? number(k->ci_high_s) : "",
        k ? number(k->ci_confidence) : "", k ? number(k->cv) : "",
        k ? std::to_string(k->repetitions) : "", rate ? number(rate->interactions_per_second) : "",
        rate ? number(rate->interactions_per_second_min) : "",
        rate ? number(rate->interactions_per_second_max) : "",
        rate ? number(rate->gflops_at_20) : "", r.end_to_end ? number(r.end_to_end->median_s) : "",
        r.end_to_end_rate ? number(r.end_to_end_rate->interactions_per_second) : "",
        r.communication ? number(r.communication->median_s) : "",
        a ? number(a->metrics.relative_l2) : "", a ? number(a->metrics.max_relative) : "",
        a ? number(a->metrics.p99_relative) : "", a ? boolean(a->passed) : "",
        figure(&DerivedFigures::gflops_counted), figure(&DerivedFigures::fraction_of_measured_peak),
        figure(&DerivedFigures::fraction_of_instruction_bound),
        figure(&DerivedFigures::fraction_of_interaction_mix_ceiling),
        figure(&DerivedFigures::dram_bytes_per_second),
        // Unknown (empty) where no timing recorded its conditions: skipped, or before version 3.
        has_conditions(r) ? boolean(!disturbances.empty()) : "",
        fmt::format("{}", fmt::join(disturbances, "; ")),
        property(&ImplementationRecord::algorithm), impl ? number(impl->theta) : "",
        r.tree_work ? std::to_string(r.tree_work->body_body) : "",
        r.tree_work ? std::to_string(r.tree_work->body_cell) : "",
        r.tree_work && r.tree_work->build ? number(r.tree_work->build->median_s) : ""};
    append_energy(cells, i < analysis.energy.of_results.size() ? analysis.energy.of_results[i]
                                                               : std::nullopt);
    const std::vector<TreeRow>& trees = analysis.algorithms.trees;
    const auto tree =
        std::find_if(trees.begin(), trees.end(), [i](const TreeRow& t) { return t.result == i; });
    append_tree_bounds(cells, tree != trees.end() ? &*tree : nullptr);
    append_row(out, cells);
  }
  return out;
}

std::string csv_record(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(cells[i]);
  }
  return out + "\r\n";
}

}  // namespace nbody::reports
