#include "nbody/reports/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include "nbody/sizes.hpp"

#include "html_algorithms.hpp"
#include "html_page.hpp"
#include "nbody/files.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "sentences.hpp"

#ifndef NBODY_CHARTJS_DEFAULT
#define NBODY_CHARTJS_DEFAULT "/usr/share/javascript/chart.js/chart.min.js"
#endif

namespace nbody::reports {
namespace {

using nlohmann::json;

std::string si(double value, const std::string& unit) {
  return html_escape(format_si(value, unit));
}

std::string seconds(double s) {
  return format_seconds(s);
}

std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "—";
  return fmt::format("{:.0f}%{}", 100 * *fraction, *fraction > 1 ? " ⚠" : "");
}

std::string number(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "—";
}

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string rate_cell(const std::optional<RateFigure>& f) {
  if (!f) return "—";
  return fmt::format("{}<br><small>{}{}{}</small>", si(f->interactions_per_second, "int/s"),
                     html_escape(f->implementation), f->disturbed() ? " ⚠" : "",
                     f->scale_label.empty() ? "" : "<br>" + html_escape(f->scale_label));
}

std::string ratio_cell(const std::optional<RateRatio>& r) {
  if (!r) return "—";
  return fmt::format("<b>{:.3g}×</b><br><small>{:.3g}–{:.3g}</small>", r->value, r->low, r->high);
}

// ---- the data island: what the page's script draws, nothing it would have to decide ----

json rate_point(const ResultRecord& r) {
  const TimingStatistics& t = *r.kernel;
  json p = {{"n", r.n},
            {"y", r.kernel_rate->interactions_per_second},
            {"lo", t.ci_high_s > 0 ? json(r.interactions_credited / t.ci_high_s) : json(nullptr)},
            {"hi", t.ci_low_s > 0 ? json(r.interactions_credited / t.ci_low_s) : json(nullptr)},
            {"conf", t.ci_confidence},
            {"noisy", t.noisy}};
  if (t.conditions && !t.conditions->disturbances.empty()) {
    p["disturbed"] = fmt::format("{}", fmt::join(t.conditions->disturbances, "; "));
  }
  return p;
}

// One group of series per precision, each a small multiple of its own: eighteen formulations in
// one chart could not be told apart.
json throughput_data(const ResultsDocument& doc) {
  json groups = json::array();
  for (const Precision precision : {Precision::f32, Precision::f64}) {
    json series = json::array();
    for (const ImplementationRecord& impl : doc.implementations) {
      if (impl.precision != precision || is_tree(impl)) continue;  // a tree has no rate
      json points = json::array();
      for (const ResultRecord& r : doc.results) {
        if (r.implementation == impl.name && r.status == Status::ok && r.kernel && r.kernel_rate) {
          points.push_back(rate_point(r));
        }
      }
      if (points.empty()) continue;
      series.push_back({{"name", impl.name},
                        {"device", to_string(impl.device)},
                        {"precision", to_string(impl.precision)},
                        {"accuracy_class", to_string(impl.accuracy_class)},
                        {"role", to_string(impl.role)},
                        {"points", points}});
    }
    if (!series.empty())
      groups.push_back({{"precision", to_string(precision)}, {"series", series}});
  }
  return groups;
}

json ratio_figure(const std::optional<RateRatio>& ratio, const std::optional<RateFigure>& gpu,
                  const std::optional<RateFigure>& cpu) {
  if (!ratio || !gpu || !cpu) return nullptr;
  return {{"y", ratio->value},
          {"lo", ratio->low},
          {"hi", ratio->high},
          {"gpu", gpu->implementation},
          {"cpu", cpu->implementation}};
}

json ratio_data(const Analysis& a) {
  json rows = json::array();
  for (const HeadlineRow& row : a.headline.rows) {
    json best = ratio_figure(row.best_ratio, row.best_gpu, row.best_cpu);
    json naive = ratio_figure(row.naive_ratio, row.naive_gpu, row.naive_cpu);
    if (best.is_null() && naive.is_null()) continue;
    rows.push_back(
        {{"precision", to_string(row.precision)}, {"n", row.n}, {"best", best}, {"naive", naive}});
  }
  return rows;
}

json ladder_data(const Ladder& ladder) {
  json steps = json::array();
  for (const LadderStep& s : ladder.steps) {
    steps.push_back({{"name", s.implementation},
                     {"rate", optional_number(s.interactions_per_second)},
                     {"over_previous", optional_number(s.over_previous)},
                     {"over_naive", optional_number(s.over_naive)},
                     {"reason", s.reason}});
  }
  return {{"device", to_string(ladder.device)},
          {"precision", to_string(ladder.precision)},
          {"n", ladder.n},
          {"steps", steps}};
}

json roofline_data(const Roofline& roofline) {
  json ceilings = json::array();
  for (const RooflineCeiling& c : roofline.ceilings) {
    ceilings.push_back({{"name", c.name},
                        {"label", c.label},
                        {"value", c.value},
                        {"memory", c.memory},
                        {"flagged", c.flagged}});
  }
  json points = json::array();
  json unplaced = json::array();
  for (const RooflinePoint& p : roofline.points) {
    // Without a DRAM counter (the CPU) the point sits at the compulsory-traffic intensity, the
    // analysis's model and an upper bound; the page marks such points as modelled.
    const bool modelled = !p.flops_per_dram_byte;
    const double x = modelled ? p.flops_per_compulsory_byte : *p.flops_per_dram_byte;
    if (!(x > 0) || !(p.flops_per_second > 0)) {
      unplaced.push_back(p.implementation);
      continue;
    }
    points.push_back({{"name", p.implementation},
                      {"n", p.n},
                      {"x", x},
                      {"modelled", modelled},
                      {"y", p.flops_per_second},
                      {"at20", optional_number(p.flops_per_second_at_20)}});
  }
  return {{"device", to_string(roofline.device)},
          {"device_name", roofline.device_name},
          {"ceilings", ceilings},
          {"points", points},
          {"unplaced", unplaced}};
}

json accuracy_data(const Analysis& a) {
  json points = json::array();
  for (const AccuracyPoint& p : a.accuracy) {
    if (!p.interactions_per_second || !(p.relative_l2 > 0)) continue;
    points.push_back({{"name", p.implementation},
                      {"n", p.n},
                      {"device", to_string(p.device)},
                      {"precision", to_string(p.precision)},
                      {"accuracy_class", to_string(p.accuracy_class)},
                      {"x", *p.interactions_per_second},
                      {"y", p.relative_l2},
                      {"bound", p.relative_l2_bound},
                      {"passed", p.passed}});
  }
  return points;
}

json fraction_data(const Analysis& a) {
  json rows = json::array();
  for (const PeakFractions& f : a.peak_fractions) {
    if (!f.of_own_bound && !f.of_measured_peak) continue;
    rows.push_back({{"name", f.implementation},
                    {"n", f.n},
                    {"device", to_string(f.device)},
                    {"own_bound", optional_number(f.of_own_bound)},
                    {"measured_peak", optional_number(f.of_measured_peak)},
                    {"mix", optional_number(f.of_interaction_mix_ceiling)}});
  }
  return rows;
}

json repetition_data(const Analysis& a, const ResultsDocument& doc) {
  json rows = json::array();
  for (const RepetitionSamples& s : a.repetitions) {
    if (s.interactions_per_second.empty()) continue;
    const ImplementationRecord* impl = find_implementation(doc, s.implementation);
    rows.push_back({{"name", s.implementation},
                    {"n", s.n},
                    {"device", impl ? std::string(to_string(impl->device)) : "cpu"},
                    {"samples", s.interactions_per_second},
                    {"median", s.median},
                    {"noisy", s.noisy}});
  }
  return rows;
}

std::string counters_reason(const ResultsDocument& doc, const Analysis& a) {
  if (!doc.settings.counters) return "the run was made with --no-counters";
  for (const PeakFractions& f : a.peak_fractions) {
    if (!f.unavailable_reason.empty()) return "counters were unavailable: " + f.unavailable_reason;
  }
  return "no hardware counters were read in this run";
}

// One chart per device and precision: its ladder at the largest N where every rung was measured
// (else at its largest N with its naive rung); the analysis has one per N, the tables show them
// all. A ladder without its naive rung has no speedup over naive to draw: every bar would be n/a.
std::vector<std::size_t> charted_ladders(const Analysis& a) {
  std::map<std::pair<DeviceKind, Precision>, std::size_t> chosen;
  for (std::size_t i = 0; i < a.ladders.size(); ++i) {
    const Ladder& l = a.ladders[i];
    if (l.steps.size() < 2 || !l.naive_measured()) continue;  // nothing to climb from
    const bool complete = std::all_of(l.steps.begin(), l.steps.end(), [](const LadderStep& s) {
      return s.interactions_per_second.has_value();
    });
    const auto key = std::make_pair(l.device, l.precision);
    const auto it = chosen.find(key);
    const auto is_complete = [&](std::size_t j) {
      return std::all_of(a.ladders[j].steps.begin(), a.ladders[j].steps.end(),
                         [](const LadderStep& s) { return s.interactions_per_second.has_value(); });
    };
    if (it == chosen.end() || complete || !is_complete(it->second)) chosen[key] = i;
  }
  std::vector<std::size_t> indices;
  for (const auto& [key, i] : chosen) indices.push_back(i);
  return indices;
}

// The devices and precisions with ladders of which none is charted, with their naive rung.
std::vector<std::tuple<DeviceKind, Precision, std::string>> uncharted_ladders(
    const Analysis& a, const std::vector<std::size_t>& charted) {
  std::vector<std::tuple<DeviceKind, Precision, std::string>> uncharted;
  for (const Ladder& l : a.ladders) {
    const auto same = [&l](const auto& x) {
      return std::get<0>(x) == l.device && std::get<1>(x) == l.precision;
    };
    const bool is_charted = std::any_of(charted.begin(), charted.end(), [&](std::size_t i) {
      return a.ladders[i].device == l.device && a.ladders[i].precision == l.precision;
    });
    if (!is_charted && std::none_of(uncharted.begin(), uncharted.end(), same)) {
      uncharted.emplace_back(l.device, l.precision, l.steps.front().implementation);
    }
  }
  return uncharted;
}

std::vector<ChartCard> plan_charts(const ResultsDocument& doc, const Analysis& a,
                                   const json& data) {
  std::vector<ChartCard> charts;
  if (data["throughput"].empty()) {
    charts.push_back({"chart-throughput", "throughput", "Throughput against N", "", 0,
                      "no measurement was timed ok"});
  }
  for (std::size_t i = 0; i < data["throughput"].size(); ++i) {
    const std::string precision = data["throughput"][i]["precision"];
    charts.push_back(
        {"chart-throughput-" + precision, "throughput",
         fmt::format("Throughput against N, {} (kernel time, interactions/s, log-log)",
                     precision == "f64" ? "float64" : "float32"),
         "Bars: the confidence interval of the median time. Blues: CPU; oranges and reds: GPU; "
         "each formulation its own marker; dashed: naive baselines; dotted: approximate accuracy "
         "class.",
         static_cast<int>(i), ""});
  }
  charts.push_back({"chart-ratio", "ratio", "GPU/CPU: best against best, naive against naive",
                    "Interval: the two rates' intervals combined at their extremes.", 0,
                    data["ratios"].empty() ? "a ratio needs both a CPU and a GPU figure at one "
                                             "N; this run has no such pair"
                                           : ""});
  if (a.ladders.empty()) {
    charts.push_back({"chart-ladder", "ladder", "Optimization ladders", "", 0,
                      "no ladder was measured complete at any N"});
  }
  const std::vector<std::size_t> charted = charted_ladders(a);
  for (const std::size_t i : charted) {
    const Ladder& l = a.ladders[i];
    charts.push_back({fmt::format("chart-ladder-{}", i), "ladder",
                      fmt::format("{} optimization ladder, {}, N = {} (speedup over naive)",
                                  l.device == DeviceKind::cpu ? "CPU" : "GPU",
                                  to_string(l.precision), format_size(l.n)),
                      "The ladders at every N are in the ladders table.", static_cast<int>(i), ""});
  }
  for (const auto& [device, precision, naive] : uncharted_ladders(a, charted)) {
    charts.push_back({fmt::format("chart-ladder-{}-{}", to_string(device), to_string(precision)),
                      "ladder",
                      fmt::format("{} optimization ladder, {}",
                                  device == DeviceKind::cpu ? "CPU" : "GPU", to_string(precision)),
                      "", 0,
                      fmt::format("its naive rung ({}) was measured at no N, so there is no "
                                  "speedup over naive to draw (the ladders table has the rates)",
                                  naive)});
  }
  if (a.rooflines.empty()) {
    charts.push_back({"chart-roofline", "roofline", "Roofline", "", 0,
                      doc.ceilings ? counters_reason(doc, a) : "no ceilings were measured"});
  }
  for (std::size_t i = 0; i < a.rooflines.size(); ++i) {
    const json& r = data["rooflines"][i];
    const std::string device = a.rooflines[i].device == DeviceKind::cpu ? "CPU" : "GPU";
    std::string absent;
    std::string note;
    const bool modelled = std::any_of(r["points"].begin(), r["points"].end(),
                                      [](const json& p) { return p["modelled"].get<bool>(); });
    if (r["points"].empty()) {
      absent = r["unplaced"].empty() ? counters_reason(doc, a)
                                     : "no kernel has a FLOP count and a byte count to place";
    } else if (!r["unplaced"].empty()) {
      note = fmt::format("Not placed (no byte count): {}. ",
                         fmt::join(r["unplaced"].get<std::vector<std::string>>(), ", "));
    }
    note +=
        "Counted FLOP/s against flops per DRAM byte. Lines: the ceilings measured on this "
        "machine (compute flat, bandwidth sloped).";
    if (modelled) {
      note +=
          " Hollow points have no DRAM counter: they sit at the compulsory-traffic intensity "
          "(bodies read and accelerations written once per evaluation), an upper bound.";
    }
    charts.push_back({fmt::format("chart-roofline-{}", i), "roofline",
                      fmt::format("{} roofline: {}", device, a.rooflines[i].device_name), note,
                      static_cast<int>(i), absent});
  }
  charts.push_back({"chart-accuracy", "accuracy", "Accuracy against speed",
                    std::string("Relative L2 error against the float64 reference. Circles: full "
                                "accuracy; triangles: approximate class.") +
                        (a.algorithms.any_tree() ? " All-pairs only (a tree has no interactions "
                                                   "per second): trees are in the accuracy "
                                                   "against time charts."
                                                 : ""),
                    0,
                    data["accuracy"].empty() ? "no measurement was both validated and timed" : ""});
  for (ChartCard& card : accuracy_time_charts(data["accuracy_time"])) {
    charts.push_back(std::move(card));
  }
  charts.push_back({"chart-fractions", "fractions", "Fraction of own bound and of measured peak",
                    "Above 100% is not a result: the ceiling read low (see the counters table).", 0,
                    data["fractions"].empty() ? counters_reason(doc, a) : ""});
  charts.push_back({"chart-repetitions", "repetitions",
                    "Repetitions at each implementation's largest N",
                    "One dot per repetition; the bar is the median.", 0,
                    data["repetitions"].empty() ? "no measurement was timed ok" : ""});
  return charts;
}

// ---- simulate: the data island and the charts ----

// What the page's colours, dashes and labels tell of a simulation.
json simulation_series(const IntegrationRow& r) {
  return {{"name", r.implementation},
          {"device", to_string(r.device)},
          {"precision", to_string(r.precision)},
          {"accuracy_class", to_string(r.accuracy_class)},
          {"failed", r.status == Status::failed}};
}

// The sizes of the simulations, ascending.
std::vector<std::size_t> simulation_sizes(const Analysis& a) {
  std::vector<std::size_t> sizes;
  for (const IntegrationRow& r : a.integration) sizes.push_back(r.n);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

json speedup_data(const Analysis& a) {
  std::map<Precision, json> by_precision;
  for (const ApplicationSpeedup& s : a.application_speedups) {
    json& points = by_precision[s.precision];
    if (points.is_null()) points = json::array();
    points.push_back({{"n", s.n},
                      {"kernel", s.kernel_speedup},
                      {"application", s.application_speedup},
                      {"cpu", s.cpu},
                      {"gpu", s.gpu}});
  }
  json series = json::array();
  for (auto& [precision, points] : by_precision) {
    series.push_back({{"precision", to_string(precision)}, {"points", std::move(points)}});
  }
  return series;
}

// Per N, each simulation's relative energy error against time. A log axis cannot show 0 (step 0,
// by definition) or a non-finite error, so those samples are left out.
json energy_data(const Analysis& a) {
  json charts = json::array();
  for (const std::size_t n : simulation_sizes(a)) {
    json series = json::array();
    std::size_t longest = 0;
    for (const IntegrationRow& r : a.integration) {
      if (r.n != n || r.status == Status::skipped) continue;
      json points = json::array();
      for (const EnergyErrorPoint& p : r.energy_errors) {
        if (std::isfinite(p.relative_energy_error) && p.relative_energy_error > 0 &&
            std::isfinite(p.time)) {
          points.push_back({{"t", p.time}, {"y", p.relative_energy_error}, {"step", p.step}});
        }
      }
      if (points.empty()) continue;
      longest = std::max(longest, points.size());
      json s = simulation_series(r);
      s["points"] = std::move(points);
      series.push_back(std::move(s));
    }
    charts.push_back({{"n", n}, {"longest", longest}, {"series", std::move(series)}});
  }
  return charts;
}

// Per N, each timed simulation's step split as shares (the analysis's), with the signed seconds
// for the tooltips; the phases no simulation at that N spent time in are left out of the legend.
json split_data(const Analysis& a) {
  static constexpr const char* kPhases[] = {"force", "tree build",  "integration",
                                            "other", "diagnostics", "snapshots"};
  json charts = json::array();
  for (const std::size_t n : simulation_sizes(a)) {
    json rows = json::array();
    std::set<std::string> spent;
    for (const IntegrationRow& r : a.integration) {
      if (r.n != n || r.status == Status::skipped || !r.shares) continue;
      const StepShares& sh = *r.shares;
      const StepSplit& p = r.per_step;
      const double shares[] = {sh.force, sh.tree_build,  sh.integration,
                               sh.other, sh.diagnostics, sh.snapshots};
      // The force part less the tree's build, which is a phase of its own where a tree ran.
      const double seconds[] = {p.force_s - p.tree_build_s,
                                p.tree_build_s,
                                p.integration_s,
                                p.other_s,
                                p.diagnostics_s,
                                p.snapshots_s};
      json row = simulation_series(r);
      row["total_s"] = sh.total_s;
      for (std::size_t i = 0; i < std::size(kPhases); ++i) {
        row["shares"][kPhases[i]] = shares[i];
        row["seconds"][kPhases[i]] = seconds[i];
        if (shares[i] > 0) spent.insert(kPhases[i]);
      }
      rows.push_back(std::move(row));
    }
    json phases = json::array();
    for (const char* phase : kPhases) {
      if (spent.contains(phase)) phases.push_back(phase);
    }
    charts.push_back({{"n", n}, {"phases", std::move(phases)}, {"rows", std::move(rows)}});
  }
  return charts;
}

// The speedups across N (spanning the grid's row), then for each N its energy error (left) and its
// step split (right), so at two columns each row of the grid is one N.
std::vector<ChartCard> plan_simulation_charts(const ResultsDocument& doc, const json& data) {
  std::vector<ChartCard> charts;
  ChartCard speedups{
      "chart-speedups",
      "speedups",
      "GPU over CPU: application speedup and kernel speedup against N",
      "Fastest full-accuracy GPU over fastest full-accuracy CPU of one precision at "
      "each N. Kernel: force seconds per step; application: whole steps, diagnostics "
      "and snapshots included. Dashed: float64.",
      0,
      data["speedups"].empty() ? "a speedup needs a CPU and a GPU simulation of one precision that "
                                 "finished at the same N; this run has none"
                               : ""};
  speedups.wide = true;
  charts.push_back(speedups);
  const json& energy = data["energy"];
  const bool any_curve = std::any_of(energy.begin(), energy.end(),
                                     [](const json& e) { return e["longest"].get<int>() >= 2; });
  if (!any_curve) {
    // One line for the whole run, not one per N: the reason is the same at every N.
    charts.push_back(
        {"chart-energy", "energy", "Relative energy error against time", "", 0,
         doc.settings.diag_every > 0
             ? "no simulation has two conservation checks with a nonzero energy error"
             : "conservation was checked only at the first and the last step (simulate "
               "--diag-every K checks every K steps); the last step's error is the tables' "
               "max |ΔE/E|"});
  }
  for (std::size_t i = 0; i < energy.size(); ++i) {
    const std::string n = format_size(energy[i]["n"].get<std::size_t>());
    if (any_curve) {
      charts.push_back(
          {fmt::format("chart-energy-{}", i), "energy",
           fmt::format("Relative energy error against time, N = {} (log y)", n),
           "|E − E₀| / |E₀| at each conservation check (step 0, where it is 0 by definition, is "
           "not drawn); a sharp dip is the error changing sign. Blue: CPU; orange: GPU; dashed: "
           "float64; dotted: approximate accuracy class. Lines that coincide hide each other: "
           "hover for each.",
           static_cast<int>(i),
           energy[i]["longest"].get<int>() >= 2
               ? ""
               : "no simulation at this N has two conservation checks with a nonzero error"});
    }
    const json& split = data["splits"][i];
    charts.push_back(
        {fmt::format("chart-split-{}", i), "split",
         fmt::format("Time per step by phase, N = {} (share of the step)", n),
         "Each bar: one application step's parts as shares of their sum; in brackets that sum, "
         "the time per step. Parts below zero (timing noise) count as zero; the table has the "
         "signed figures.",
         static_cast<int>(i), split["rows"].empty() ? "no simulation at this N was timed" : ""});
  }
  return charts;
}

// ---- the tables ----

std::string audit_section(const Analysis& a) {
  std::string out = "<section id=\"audit\"><h2>Fairness audit</h2>\n";
  out += fmt::format("<p class=\"verdict\">{}</p>\n", html_escape(a.audit.verdict));
  Table t({"#", "rule", "verdict", "evidence"}, "audit");
  for (const AuditRule& r : a.audit.rules) {
    t.row({std::to_string(r.number), html_escape(r.title), verdict_badge(r.verdict),
           html_escape(r.evidence)});
  }
  out += t.done();
  if (!a.audit.disturbed_measurements.empty()) {
    out += "<p>Measured while the machine was disturbed (may read low):</p><ul>";
    for (const RateFigure& f : a.audit.disturbed_measurements) {
      out += fmt::format("<li>{} at N = {}: {}</li>", html_escape(f.implementation), f.n,
                         html_escape(f.disturbance));
    }
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

// One row of the headline: on a phone its cells stack under their labels (report.css), the two
// sides side by side above their ratio (and its energy ratio), so no column is cut off.
std::string headline_row(const HeadlineRow& r, bool energy) {
  // A phone leaves out a row's naive cells where neither side has a naive figure at its N.
  const bool naive = r.naive_cpu || r.naive_gpu;
  const auto energy_cell = [energy](const std::optional<RateRatio>& ratio, const char* css,
                                    const char* label) {
    return energy ? fmt::format("<td class=\"{}\" data-label=\"{}\">{}</td>", css, label,
                                energy_ratio_cell(ratio))
                  : std::string();
  };
  return fmt::format(
      "<tr{}><td data-label=\"precision\">{}</td><td class=\"num\" data-label=\"N =\">{}</td>"
      "<td data-label=\"best CPU\">{}</td><td data-label=\"best GPU\">{}</td>"
      "<td class=\"ratio\" data-label=\"GPU/CPU (best)\">{}</td>{}"
      "<td class=\"naive\" data-label=\"naive CPU\">{}</td>"
      "<td class=\"naive\" data-label=\"naive GPU\">{}</td>"
      "<td class=\"naive ratio\" data-label=\"GPU/CPU (naive)\">{}</td>{}</tr>\n",
      naive ? "" : " class=\"no-naive\"", to_string(r.precision), r.n, rate_cell(r.best_cpu),
      rate_cell(r.best_gpu), ratio_cell(r.best_ratio),
      energy_cell(r.best_energy_ratio, "eratio", "CPU J / GPU J (best)"), rate_cell(r.naive_cpu),
      rate_cell(r.naive_gpu), ratio_cell(r.naive_ratio),
      energy_cell(r.naive_energy_ratio, "naive eratio", "CPU J / GPU J (naive)"));
}

std::string headline_section(const Analysis& a) {
  std::string out =
      "<section id=\"headline\"><h2>Headline: best against best, naive against naive</h2>\n";
  if (a.headline.rows.empty()) return out + "<p>No headline: nothing was timed ok.</p></section>\n";
  const bool energy = a.energy.compares();
  out +=
      "<p>Full accuracy only; kernel time; interactions per second (int/s), N² per force "
      "evaluation. Ratios with their interval; a ratio needs both sides measured at that N.</p>\n";
  out += energy_ratio_intro_html(a.energy);
  if (const std::string where = trees_elsewhere_sentence(a.algorithms); !where.empty()) {
    out += "<p>" + html_escape(where) + "</p>\n";
  }
  out += fmt::format(
      "<div class=\"scroll\"><table class=\"headline{}\"><thead><tr><th>precision</th><th>N</th>"
      "<th>best CPU</th><th>best GPU</th><th>GPU/CPU<br>(best)</th>{}<th>naive CPU</th>"
      "<th>naive GPU</th><th>GPU/CPU<br>(naive)</th>{}</tr></thead><tbody>\n",
      energy ? " energy" : "", energy ? "<th>CPU J / GPU J<br>(best)</th>" : "",
      energy ? "<th>CPU J / GPU J<br>(naive)</th>" : "");
  for (const HeadlineRow& r : a.headline.rows) out += headline_row(r, energy);
  out += "</tbody></table></div>\n";
  if (const std::vector<AnswerSpan> line = equal_accuracy_line(a); !line.empty()) {
    out += "<p class=\"equal-accuracy\">" + linked_html(line) + "</p>\n";
  }
  if (!a.headline.disturbed_figures.empty()) {
    out += "<p>⚠ These figures were measured while the machine was busy and may read low:</p><ul>";
    for (const RateFigure& f : a.headline.disturbed_figures) {
      out += fmt::format("<li>{} at N = {}: {}</li>", html_escape(f.implementation), f.n,
                         html_escape(f.disturbance));
    }
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

// The timing of each measurement, its energy beside where the run read any; accuracy and end to
// end have their own tables (as report.md), so each stays narrow.
std::string results_section(const ResultsDocument& doc, const Analysis& a, bool approximate) {
  std::string out = approximate ? "<h3>Approximate accuracy class (not ranked beside "
                                  "full-accuracy results)</h3>\n"
                                : "<h3>Results</h3>\n<p>CI of median: a distribution-free "
                                  "confidence interval of the median time, between two order "
                                  "statistics of the repetitions; in brackets its exact coverage "
                                  "(at least 95% from 6 repetitions on; 94% for 5).</p>\n";
  const bool energy = a.energy.any_read();
  // The energy columns right beside the time, where a page this wide still shows them.
  std::vector<std::string> headers = {
      "implementation",      "N",           "status",       "int/s (median)",
      "slowest–fastest rep", "GFLOP/s @20", "time (median)"};
  if (energy) {
    for (std::string& h : energy_headers(false)) headers.push_back(std::move(h));
  }
  headers.insert(headers.end(), {"CI of median", "cv"});
  Table t = Table::of(headers);
  bool unresolved = false;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl || (impl->accuracy_class == AccuracyClass::approximate) != approximate ||
        r.status == Status::skipped || is_tree(*impl)) {
      continue;  // a tree has no rate: its figures are under "Tree codes"
    }
    std::string status = r.status == Status::ok ? "ok"
                                                : fmt::format("<b>{}</b>: {}", to_string(r.status),
                                                              html_escape(r.reason));
    if (const std::string why = describe_disturbance(r); !why.empty()) {
      status += " ⚠ disturbed: " + html_escape(why);
    }
    std::string rate = "—", range = "—", gflops = "—", median = "—", ci = "—", cv = "—";
    if (r.kernel && r.kernel_rate) {
      const TimingStatistics& k = *r.kernel;
      rate = si(r.kernel_rate->interactions_per_second, "");
      range = si(r.kernel_rate->interactions_per_second_min, "") + " – " +
              si(r.kernel_rate->interactions_per_second_max, "");
      gflops = fmt::format("{:.4g}", r.kernel_rate->gflops_at_20);
      median = seconds(k.median_s);
      ci = fmt::format("{} – {} ({:.0f}%)", seconds(k.ci_low_s), seconds(k.ci_high_s),
                       100 * k.ci_confidence);
      cv = fmt::format("{:.1f}%{}", 100 * k.cv, k.noisy ? " ⚠ noisy" : "");
    }
    std::vector<std::string> cells = {
        html_escape(r.implementation), std::to_string(r.n), status, rate, range, gflops, median};
    if (energy) {
      for (std::string& c : energy_cells(a.energy, r.implementation, r.n, unresolved)) {
        cells.push_back(std::move(c));
      }
    }
    cells.insert(cells.end(), {ci, cv});
    t.row(cells);
  }
  return out + t.done() + (unresolved ? energy_footnote() : std::string());
}

std::string accuracy_section(const Analysis& a) {
  if (a.accuracy.empty()) return "";
  Table t({"implementation", "N", "rel. L2 error", "bound", "max rel. error", "accuracy"});
  for (const AccuracyPoint& p : a.accuracy) {
    t.row({html_escape(p.implementation), std::to_string(p.n), fmt::format("{:.2e}", p.relative_l2),
           fmt::format("{:.1e}", p.relative_l2_bound), fmt::format("{:.2e}", p.max_relative),
           std::string(p.passed ? "pass" : "<b>FAIL</b>") +
               (p.accuracy_class == AccuracyClass::approximate ? " (approximate class)" : "")});
  }
  return "<h3>Accuracy against the float64 reference</h3>\n" + t.done();
}

std::string ladders_section(const Analysis& a) {
  if (a.ladders.empty()) return "";
  Table t({"device", "precision", "N", "rungs: rate (× the previous; × naive)"}, "ladders");
  for (const Ladder& l : a.ladders) {
    std::vector<std::string> steps;
    for (const LadderStep& s : l.steps) {
      if (!s.interactions_per_second) {
        steps.push_back(html_escape(s.implementation) + " (—)");
        continue;
      }
      std::string speedups;
      if (s.over_previous && s.over_naive) {
        speedups = fmt::format(" (×{:.3g}; ×{:.3g})", *s.over_previous, *s.over_naive);
      }
      steps.push_back(fmt::format("<b>{}</b> {}{}", html_escape(s.implementation),
                                  si(*s.interactions_per_second, "int/s"), speedups));
    }
    t.row({std::string(to_string(l.device)), std::string(to_string(l.precision)),
           std::to_string(l.n), fmt::format("{}", fmt::join(steps, " → "))});
  }
  return "<h3>Optimization ladders</h3>\n<p>Each side's full-accuracy formulations from its "
         "naive port up, at each N.</p>\n" +
         t.done();
}

std::string skipped_section(const Analysis& a) {
  if (a.skipped.empty()) return "";
  Table t({"implementation", "N", "reason"});
  for (const SkippedGroup& g : a.skipped) {
    t.row({html_escape(g.implementation), fmt::format("{}", fmt::join(g.sizes, ", ")),
           html_escape(g.reason)});
  }
  return "<h3>Skipped</h3>\n" + t.done();
}

std::string counters_section(const ResultsDocument& doc, const Analysis& a) {
  if (a.peak_fractions.empty()) return "";
  std::string out =
      "<h3>Counters and fraction of peak</h3>\n<p>Counted flops: FADD + FMUL + 2·FFMA (CUPTI "
      "on the GPU; the compiled hot loop on the CPU). Fractions are of the ceilings measured on "
      "this machine; the own bound is each kernel's instructions per interaction over the "
      "measured issue rate.</p>\n";
  // Three narrow tables (as report.md): flops, instructions, memory.
  Table flops({"implementation", "N", "source", "flops / interaction", "GFLOP/s counted",
               "of measured peak", "of datasheet peak"});
  Table instructions({"implementation", "N", "instructions / interaction",
                      "instruction-bound int/s", "of own bound", "of mix ceiling"});
  Table memory({"implementation", "N", "DRAM GB/s", "flops / DRAM byte", "occupancy"});
  bool above_one = false, any_memory = false;
  for (const PeakFractions& f : a.peak_fractions) {
    const std::string name = html_escape(f.implementation), n = std::to_string(f.n);
    if (!f.unavailable_reason.empty()) {
      flops.row(
          {name, n, "counters unavailable: " + html_escape(f.unavailable_reason), "", "", "", ""});
      continue;
    }
    above_one = above_one || f.above_one();
    flops.row({name, n, html_escape(f.counter_source),
               number(f.counted_flops_per_interaction, "{:.2f}"),
               number(f.gflops_counted, "{:.4g}"), percent(f.of_measured_peak),
               percent(f.of_datasheet_peak)});
    instructions.row({name, n, number(f.instructions_per_interaction, "{:.3g}"),
                      number(f.instruction_bound_interactions_per_second, "{:.3g}"),
                      percent(f.of_own_bound), percent(f.of_interaction_mix_ceiling)});
    if (f.dram_bytes_per_second || f.flops_per_dram_byte || f.achieved_occupancy) {
      any_memory = true;
      memory.row(
          {name, n,
           f.dram_bytes_per_second ? fmt::format("{:.3g}", *f.dram_bytes_per_second * 1e-9) : "—",
           number(f.flops_per_dram_byte, "{:.3g}"),
           f.achieved_occupancy ? fmt::format("{:.0f}%", 100 * *f.achieved_occupancy) : "—"});
    }
  }
  out += flops.done() + instructions.done();
  if (any_memory) out += memory.done();
  if (above_one) {
    out += "<p>⚠ A fraction above 100% is not a result: the ceiling it divides by read low";
    if (doc.ceilings && !doc.ceilings->warnings.empty()) {
      out += html_escape(fmt::format(" ({})", fmt::join(doc.ceilings->warnings, "; ")));
    }
    out += ".</p>\n";
  }
  return out;
}

std::string end_to_end_section(const Analysis& a) {
  if (a.end_to_end.empty()) return "";
  Table t({"implementation", "N", "kernel (median)", "end to end (median)",
           "copies' or gather's share"});
  for (const EndToEndRow& r : a.end_to_end) {
    t.row({html_escape(r.implementation), std::to_string(r.n), seconds(r.kernel_s),
           seconds(r.end_to_end_s), fmt::format("{:.0f}%", 100 * r.copy_share())});
  }
  return "<h3>Kernel-only against end to end (GPU; ranks: the all-gather included)</h3>\n" +
         t.done();
}

std::string ceilings_section(const ResultsDocument& doc) {
  if (!doc.ceilings) return "<h3>Ceilings</h3>\n<p>No ceilings were measured.</p>\n";
  const Ceilings& c = *doc.ceilings;
  std::string out =
      fmt::format("<h3>Ceilings</h3>\n<p>Measured {}{}.</p>\n", html_escape(c.measured_at),
                  c.from_cache ? " (from the cache)" : "");
  Table t({"ceiling", "measured", "datasheet", "theoretical", "threads", "how measured"});
  for (const CeilingEntry& e : c.entries) {
    t.row({html_escape(e.name), si(e.value, e.unit),
           e.datasheet ? si(e.datasheet->value, e.unit) : "",
           e.theoretical ? si(e.theoretical->value, e.unit) : "",
           e.threads ? std::to_string(*e.threads) : "", html_escape(e.method)});
  }
  out += t.done();
  if (!c.warnings.empty()) {
    out += "<p><b>These ceilings may read low</b> (used for this run only):</p><ul>";
    for (const std::string& w : c.warnings) out += "<li>" + html_escape(w) + "</li>";
    out += "</ul>\n";
  }
  if (!c.unavailable.empty()) {
    out += "<p>Not measured:</p><ul>";
    for (const UnavailableCeiling& u : c.unavailable) {
      out += fmt::format("<li>{}: {}</li>", html_escape(u.name), html_escape(u.reason));
    }
    out += "</ul>\n";
  }
  return out;
}

std::string time_section(const ResultsDocument& doc) {
  std::map<std::string, double> phases;
  for (const ResultRecord& r : doc.results) {
    for (const auto& [phase, s] : r.phase_seconds) phases[phase] += s;
  }
  if (phases.empty() && doc.phase_seconds.empty()) return "";
  Table t({"phase", "seconds"});
  for (const auto& [phase, s] : doc.phase_seconds) {
    t.row({html_escape(phase) + " (whole run)", fmt::format("{:.1f}", s)});
  }
  for (const auto& [phase, s] : phases) {
    t.row({html_escape(phase) + " (all measurements)", fmt::format("{:.1f}", s)});
  }
  return "<h3>Where the time went</h3>\n" + t.done();
}

// One short row of facts per implementation, its optimizations on a full-width line beneath: the
// long text wraps in the page's width instead of widening the table past it.
std::string implementations_section(const ResultsDocument& doc) {
  std::string rows;
  for (const ImplementationRecord& i : doc.implementations) {
    rows += fmt::format(
        "<tr class=\"facts\"><td><strong>{}</strong></td><td>{} · {} · {}</td><td>{} · {}</td>"
        "<td data-label=\"pairs\">{}</td><td class=\"num\" data-label=\"threads\">{}</td><td "
        "data-label=\"available\">{}</td></tr>\n<tr class=\"opt\"><td colspan=\"6\">{}</td></tr>\n",
        html_escape(i.name), to_string(i.device), to_string(i.layout), to_string(i.precision),
        to_string(i.accuracy_class), to_string(i.role),
        is_tree(i) ? "tree at θ = " + theta_text(i.theta) + ", none credited"
        : i.pairs == PairScheme::symmetric ? "N(N−1)/2, N² credited"
                                           : "N²",
        i.threads, i.available ? "yes" : "no: " + html_escape(i.unavailable_reason),
        i.optimizations.empty() ? std::string("no optimizations listed")
                                : html_escape(fmt::format("{}", fmt::join(i.optimizations, "; "))));
  }
  return "<h3>Implementations</h3>\n<div class=\"scroll\"><table class=\"stacked\"><thead>"
         "<tr><th>name</th><th>device · layout · precision</th><th>accuracy · role</th>"
         "<th>pairs</th><th>threads</th><th>available</th></tr></thead><tbody>\n" +
         rows + "</tbody></table></div>\n";
}

std::string machine_section(const ResultsDocument& doc) {
  const MachineRecord& m = doc.machine;
  const BuildRecord& b = doc.build;
  std::string out = "<h3>Machine, build and command</h3>\n<ul class=\"facts\">";
  out += fmt::format("<li>CPU: {} ({} physical cores, {} logical CPUs; ISA: {})</li>",
                     html_escape(m.cpu_model), m.physical_cores, m.logical_cpus,
                     html_escape(fmt::format("{}", fmt::join(m.isa_features, ", "))));
  out += fmt::format("<li>Memory: {:.1f} GiB; OS: {}; host: {}</li>",
                     static_cast<double>(m.memory_bytes) / (1u << 30), html_escape(m.os),
                     html_escape(m.hostname));
  if (m.gpus.empty()) out += "<li>GPU: none found</li>";
  for (const GpuDescription& g : m.gpus) {
    out += fmt::format(
        "<li>GPU {}: {} (compute capability {}, {} SMs, SM clock {} MHz, {:.1f} GiB, driver {}, "
        "runtime {})</li>",
        g.ordinal, html_escape(g.name), html_escape(g.compute_capability), g.sm_count,
        g.sm_clock_khz / 1000, static_cast<double>(g.memory_bytes) / (1u << 30), g.driver_version,
        g.runtime_version);
  }
  out += fmt::format(
      "<li>nbody-fair {} ({}); C++: {} <code>{}</code>; CUDA: {} <code>{}</code> (architectures "
      "{})</li>",
      html_escape(b.tool_version), html_escape(b.build_type), html_escape(b.cxx_compiler),
      html_escape(b.cxx_flags),
      b.cuda_compiler.empty() ? "not built" : html_escape(b.cuda_compiler),
      html_escape(b.cuda_flags), html_escape(b.cuda_architectures));
  std::string libraries;
  for (const auto& [name, version] : b.libraries)
    libraries += fmt::format("{} {}; ", name, version);
  out += "<li>Libraries: " + html_escape(libraries) + "</li>";
  out += fmt::format("<li>Command: <code>{}</code></li>",
                     html_escape(fmt::format("{}", fmt::join(doc.command_line, " "))));
  const RunSettings& s = doc.settings;
  out += fmt::format(
      "<li>Settings: initial condition {}, seed {}, softening {}; {} repetitions of at least {} "
      "s; warm-up {} s; validation bodies {}; threads {}; ISA {}</li>",
      html_escape(s.initial_condition), s.seed, s.softening, s.repetitions, s.min_time_s,
      s.warmup_s, s.validation_bodies,
      s.threads == 0 ? std::string("all the machine has") : std::to_string(s.threads),
      s.isa.empty() ? std::string("the widest each CPU kernel could use") : html_escape(s.isa));
  return out + "</ul>\n";
}

std::string inputs_section(const ResultsDocument& doc) {
  Table t({"initial condition", "N", "seed", "hash (float64)", "hash (float32)"});
  for (const InputRecord& in : doc.inputs) {
    t.row({html_escape(in.initial_condition), std::to_string(in.n), std::to_string(in.seed),
           "<code>" + html_escape(in.hash_f64) + "</code>",
           "<code>" + html_escape(in.hash_f32) + "</code>"});
  }
  return "<h3>Inputs</h3>\n" + t.done();
}

std::string summary_line(const ResultsDocument& doc, const Analysis& a) {
  std::string devices = doc.machine.cpu_model;
  for (const GpuDescription& g : doc.machine.gpus) devices += " and " + g.name;
  std::string line = fmt::format(
      "{} measurements ({} ok, {} failed, {} skipped) on {}, generated {}.", a.summary.measurements,
      a.summary.ok, a.summary.failed, a.summary.skipped, devices, doc.generated_at);
  if (const std::string budget = budget_sentence(a.summary); !budget.empty()) line += " " + budget;
  return html_escape(line);
}

}  // namespace

ChartJsSource load_chartjs() {
  const char* override_path = std::getenv("NBODY_FAIR_CHARTJS");
  const std::filesystem::path path =
      override_path && *override_path ? override_path : NBODY_CHARTJS_DEFAULT;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {std::nullopt,
            fmt::format("Chart.js was not found at {} (install Debian's libjs-chart.js, or set "
                        "NBODY_FAIR_CHARTJS to a copy of chart.min.js)",
                        path.string())};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return {text.str(), ""};
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// One simulation's row of the time per step, its energy per step beside the step where `energy`.
std::string step_row(const IntegrationRow& r, bool energy) {
  const auto micro = [](double s) { return fmt::format("{:.3g}", s * 1e6); };
  if (r.status == Status::skipped) {
    return fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td colspan=\"{}\">skipped: {}</td></tr>\n",
        html_escape(r.implementation), r.n, energy ? 13 : 11, html_escape(r.reason));
  }
  const StepSplit& p = r.per_step;
  std::string joules;
  if (energy) {
    joules = r.joules_per_step
                 ? fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                               si(*r.joules_per_step, "J"),
                               r.mean_watts ? fmt::format("{:.0f}", *r.mean_watts) : "—")
                 : "<td>—</td><td>—</td>";
  }
  return fmt::format(
      "<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
      "class=\"num\">{:.0f}</td><td class=\"num\">{}</td>{}<td class=\"num\">{}</td><td "
      "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
      "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2e}</td><td>{}</td>"
      "</tr>\n",
      html_escape(r.implementation),
      r.status == Status::failed
          ? " <span class=\"warn\">failed: " + html_escape(r.reason) + "</span>"
          : "",
      r.n, r.steps, r.steps_per_second, micro(p.step_s), joules,
      p.tree_build_s > 0 ? fmt::format("{} <small>(tree build {})</small>", micro(p.force_s),
                                       micro(p.tree_build_s))
                         : micro(p.force_s),
      micro(p.integration_s), micro(p.other_s), micro(p.diagnostics_s), micro(p.snapshots_s),
      r.application_step_s > 0 ? fmt::format("{:.1f}%", 100 * p.force_s / r.application_step_s)
                               : "—",
      r.max_relative_energy_error,
      r.divergence ? fmt::format("{:.2e}, {:.2e}", r.divergence->position, r.divergence->velocity)
                   : "—");
}

// The time per step by phase, and where a device's energy was read, joules per step and watts.
std::string steps_section(const Analysis& a) {
  const bool energy = std::any_of(a.integration.begin(), a.integration.end(),
                                  [](const IntegrationRow& r) { return r.joules_per_step; });
  std::string out =
      "<section id=\"steps\"><h2>Time per step</h2>\n<p>Microseconds per step by phase: on the "
      "host every step timed by phase; on the GPU each step is one kernel (leapfrog fused "
      "into the force kernel) or one CUDA graph, and for the first steps a graph of the force "
      "kernel alone is launched as often (integration = the step less that; these shares are "
      "applied to the later steps' time); other = what neither covers; diagnostics and "
      "snapshots on the wall clock, spread over all steps.";
  if (energy) {
    out += " J / step: the whole simulation's energy on its device's counters (idle power " +
           a.energy.idle_accounting + ") over its steps; mean W: over the same time.";
  }
  out += fmt::format(
      "</p>\n<div class=\"scroll\"><table>"
      "<thead><tr><th>implementation</th><th>N</th><th>steps</th><th>steps/s</th><th>step</th>{}"
      "<th>force</th><th>integration</th><th>other</th><th>diagnostics</th><th>snapshots</th>"
      "<th>force share</th><th>max |ΔE/E|</th><th>divergence x, v</th></tr></thead><tbody>\n",
      energy ? "<th>J / step</th><th>mean W</th>" : "");
  for (const IntegrationRow& r : a.integration) out += step_row(r, energy);
  return out + "</tbody></table></div>\n</section>\n";
}

}  // namespace

// simulate: the kernel-against-application speedups and the time per step by phase.
std::string simulation_sections(const Analysis& a) {
  std::string out =
      "<section id=\"application\"><h2>Kernel speedup against application speedup</h2>\n"
      "<p>Fastest full-accuracy GPU against fastest full-accuracy CPU of the same precision, by "
      "whole step (diagnostics included).</p>\n";
  if (a.application_speedups.empty()) {
    out += "<p class=\"why\">No N has both a CPU and a GPU simulation that finished.</p>\n";
  } else {
    out +=
        "<div class=\"scroll\"><table><thead><tr><th>precision</th><th>N</th><th>CPU</th>"
        "<th>GPU</th><th>kernel speedup</th><th>application speedup</th></tr></thead><tbody>\n";
    for (const ApplicationSpeedup& r : a.application_speedups) {
      out += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td "
          "class=\"num\">{:.3g}×</td><td class=\"num\">{:.3g}×</td></tr>\n",
          to_string(r.precision), r.n, html_escape(r.cpu), html_escape(r.gpu), r.kernel_speedup,
          r.application_speedup);
    }
    out += "</tbody></table></div>\n";
  }
  return out + "</section>\n" + steps_section(a);
}

// A row of figures per simulation, the likely cause of one outside its bounds on a full-width
// line beneath (a table of the implementations' kind: stacked on a phone).
std::string conservation_section(const Analysis& a) {
  std::string rows;
  for (const IntegrationRow& r : a.integration) {
    if (!r.conservation) continue;
    const ConservationCheck& c = *r.conservation;
    rows += fmt::format(
        "<tr class=\"facts\"><td><strong>{}</strong></td><td data-label=\"N\">{}</td><td "
        "data-label=\"max |ΔE/E|\">{:.2e} ({:.0e})</td><td data-label=\"at float64's last "
        "step\">{}</td><td data-label=\"momentum\">{}</td><td>{}</td></tr>\n",
        html_escape(r.implementation), r.n, c.energy_error, c.energy_bound,
        c.end_energy_error ? fmt::format("{:.2e} ({:.2e})", *c.end_energy_error, c.end_energy_bound)
                           : std::string("—"),
        c.momentum_drift ? fmt::format("{:.2e} ({:.2e})", *c.momentum_drift, c.momentum_bound)
                         : std::string("—"),
        c.within() ? "within" : "<span class=\"warn\">outside: not to be trusted</span>");
    if (!c.within()) {
      rows += fmt::format("<tr class=\"opt\"><td colspan=\"6\">likely {}</td></tr>\n",
                          html_escape(c.likely_cause));
    }
  }
  if (rows.empty()) return {};
  return "<section id=\"conservation\"><h2>Conservation</h2>\n<p>Each simulation's largest "
         "relative energy error against 1e-4, what a trustworthy integration keeps (25× the "
         "surveyed default runs' largest); where the float64 leapfrog of the same steps was "
         "followed, the error at its last step against 2 × its error + 4u, what the precision "
         "may add; and the largest drift of total momentum over sqrt(M |W0|) against u "
         "√steps. Bounds in brackets.</p>\n<div class=\"scroll\"><table class=\"stacked\"><thead>"
         "<tr><th>implementation</th><th>N</th><th>max |ΔE/E|</th><th>at the float64 leapfrog's "
         "last step</th><th>momentum drift</th><th>verdict</th></tr></thead><tbody>\n" +
         rows + "</tbody></table></div>\n</section>\n";
}

// A simulation that went wrong says so at the top: its figures are not to be trusted.
std::string conservation_warning(const Analysis& a) {
  const std::string sentence = conservation_sentence(a.integration);
  if (sentence.empty()) return {};
  return "<p class=\"warn\" id=\"went-wrong\">⚠ " + html_escape(sentence) + "</p>\n";
}

// A run that measured one side only says so at the top, before anything a reader could take for
// an answer.
std::string sides_warning(const MeasuredSides& sides) {
  const std::string sentence = sides_sentence(sides);
  if (sentence.empty()) return {};
  return "<p class=\"warn\" id=\"one-side\">" + html_escape(sentence) + "</p>\n";
}

std::string render_simulation_html(const ResultsDocument& doc, const Analysis& a,
                                   const ChartJsSource& chartjs) {
  const json data = {
      {"speedups", speedup_data(a)}, {"energy", energy_data(a)}, {"splits", split_data(a)}};
  std::string out = "<header><h1>nbody-fair simulation report</h1>\n";
  const RunSettings& s = doc.settings;
  out += fmt::format(
      "<p class=\"summary\">Kick-drift-kick leapfrog, dt = {}, {} steps, softening {}, initial "
      "condition {}; generated {} by <code>{}</code>.</p>\n",
      s.dt, s.steps, s.softening, html_escape(s.initial_condition), html_escape(doc.generated_at),
      html_escape(fmt::format("{}", fmt::join(doc.command_line, " "))));
  out += conservation_warning(a);
  out += sides_warning(a.sides);
  if (const std::string decomposed = decomposition_sentence(s); !decomposed.empty()) {
    out += "<p>" + html_escape(decomposed) + "</p>\n";
  }
  if (doc.interrupted) {
    out +=
        "<p class=\"warn\">This run was interrupted: what follows is what it had measured.</p>\n";
  }
  out += "</header>\n";
  out += audit_section(a);
  out += charts_section(plan_simulation_charts(doc, data), chartjs);
  out += simulation_sections(a);
  out += conservation_section(a);
  out += implementations_section(doc);
  out += machine_section(doc);
  return page_head("nbody-fair simulation report") + keep_tokens_whole(out) + "</main>\n" +
         page_scripts(data, chartjs) + "</body></html>\n";
}

std::string render_html(const ResultsDocument& doc, const Analysis& a,
                        const ChartJsSource& chartjs) {
  if (kind_of(doc.settings) == DocumentKind::simulate) {
    return render_simulation_html(doc, a, chartjs);
  }
  json data = {
      {"throughput", throughput_data(doc)}, {"ratios", ratio_data(a)},
      {"ladders", json::array()},           {"rooflines", json::array()},
      {"accuracy", accuracy_data(a)},       {"accuracy_time", accuracy_time_data(a.algorithms)},
      {"fractions", fraction_data(a)},      {"repetitions", repetition_data(a, doc)},
      {"joules", joules_data(a.energy)}};
  for (const Ladder& l : a.ladders) data["ladders"].push_back(ladder_data(l));
  for (const Roofline& r : a.rooflines) data["rooflines"].push_back(roofline_data(r));
  const std::vector<ChartCard> charts = plan_charts(doc, a, data);

  std::string out = "<header><h1>nbody-fair report</h1>\n";
  out += sides_warning(a.sides);
  if (const std::vector<AnswerSpan> answer = answer_paragraph(a.answer); !answer.empty()) {
    // The energy line closes the answer on a line of its own.
    const std::vector<AnswerSpan> energy = energy_answer_line(a.answer);
    out +=
        "<p class=\"answer\" id=\"answer\">" + linked_html(answer) +
        (energy.empty() ? "" : "<span class=\"energy-line\">" + linked_html(energy) + "</span>") +
        "</p>\n";
  }
  out += "<p class=\"summary\">" + summary_line(doc, a) + "</p>\n";
  if (!doc.sides_from.empty()) {
    out += "<p class=\"warn\" id=\"two-runs\">Two runs, one side each: " +
           html_escape(sides_from_sentence(doc.sides_from)) + ".</p>\n";
  }
  if (const std::string decomposed = decomposition_sentence(doc.settings); !decomposed.empty()) {
    out += "<p>" + html_escape(decomposed) + "</p>\n";
  }
  if (a.summary.interrupted) {
    out +=
        "<p class=\"warn\">This run was interrupted: what follows is what it had measured.</p>\n";
  } else if (!a.summary.complete) {
    out += "<p class=\"warn\">This run did not finish: what follows is what it had measured.</p>\n";
  }
  out += "</header>\n";
  out += audit_section(a);
  out += headline_section(a);
  out += across_algorithms_html(a.algorithms, a.energy);
  out += energy_section_html(a.energy, data["joules"], chartjs);

  out += charts_section(charts, chartjs);

  out += "<section id=\"tables\"><h2>Tables</h2>\n";
  out += tree_codes_html(a.algorithms, a.energy);
  out += results_section(doc, a, false);
  if (const std::string where = trees_elsewhere_sentence(a.algorithms); !where.empty()) {
    out += "<p>" + html_escape(where) + "</p>\n";
  }
  if (std::any_of(doc.implementations.begin(), doc.implementations.end(),
                  [](const ImplementationRecord& i) {
                    return i.accuracy_class == AccuracyClass::approximate;
                  })) {
    out += results_section(doc, a, true);
  }
  out += accuracy_section(a);
  out += ladders_section(a);
  out += skipped_section(a);
  out += counters_section(doc, a);
  out += end_to_end_section(a);
  out += ceilings_section(doc);
  out += time_section(doc);
  out += implementations_section(doc);
  out += machine_section(doc);
  out += inputs_section(doc);
  out += "</section>\n</main>\n";
  return page_head("nbody-fair report") + keep_tokens_whole(out) + page_scripts(data, chartjs) +
         "</body></html>\n";
}

void write_html(const ResultsDocument& document, const Analysis& analysis,
                const std::filesystem::path& directory) {
  write_file_atomically(directory / "report.html", render_html(document, analysis, load_chartjs()));
}

}  // namespace nbody::reports
