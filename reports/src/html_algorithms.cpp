#include "html_algorithms.hpp"

#include <fmt/format.h>

#include "nbody/energy_meter.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "sentences.hpp"

namespace nbody::reports {

std::string format_seconds(double s) {
  if (s < 1e-3) return fmt::format("{:.3g} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

namespace {

using nlohmann::json;

const char* device_name(DeviceKind device) {
  return device == DeviceKind::gpu ? "GPU" : "CPU";
}

std::string time_cell(const std::optional<TimeFigure>& f, bool measured) {
  if (!f) return "<span class=\"why\">" + html_escape(no_figure_text(measured)) + "</span>";
  return fmt::format(
      "<b>{}</b> <small>per evaluation</small><br><small>{}<br>{}; L2 {:.1e}, max {:.1e}{}</small>",
      format_seconds(f->seconds), html_escape(f->implementation),
      f->algorithm == Algorithm::barnes_hut ? "tree" : "all-pairs", f->relative_l2, f->max_relative,
      f->disturbance.empty() ? "" : " ⚠");
}

std::string speed_ratio_cell(const std::optional<RateRatio>& r) {
  if (!r) return "—";
  return fmt::format("<b>{:.3g}×</b><br><small>{:.3g}–{:.3g}</small>", r->value, r->low, r->high);
}

std::string optional_text(const std::optional<double>& value, const char* format,
                          double scale = 1) {
  return value ? fmt::format(fmt::runtime(format), *value * scale) : std::string("—");
}

std::string tree_status(const TreeRow& t) {
  if (t.status != Status::ok) {
    return fmt::format("<b>{}</b>: {}", to_string(t.status), html_escape(t.reason));
  }
  return t.passed ? "pass" : "<b>FAIL</b>";
}

json figure_point(const ParetoPoint& p) {
  const TimeFigure& f = p.figure;
  json point = {{"name", f.implementation},
                {"algorithm", f.algorithm == Algorithm::barnes_hut ? "tree" : "all-pairs"},
                {"precision", to_string(f.precision)},
                {"x", f.relative_l2},
                {"y", f.seconds},
                {"max", f.max_relative},
                {"front", p.on_front}};
  if (f.theta) point["theta"] = *f.theta;
  if (f.walk_fraction_of_bound) point["walk_bound"] = *f.walk_fraction_of_bound;
  if (f.build_fraction_of_bound) point["build_bound"] = *f.build_fraction_of_bound;
  return point;
}

}  // namespace

std::string across_algorithms_html(const AlgorithmComparison& a,
                                   const EnergyAnalysis& energy_analysis) {
  if (!a.any_tree()) return {};
  const bool energy = energy_analysis.compares();
  std::string out = "<section id=\"algorithms\"><h2>Across algorithms at equal accuracy</h2>\n";
  out += "<p>" + html_escape(across_algorithms_intro()) + "</p>\n";
  out += energy_ratio_intro_html(energy_analysis);
  // Written by hand for its data-labels: on a phone each row stacks, its cells labelled.
  out += fmt::format(
      "<div class=\"scroll\"><table class=\"bars{}\"><thead><tr><th>accuracy bar</th><th>N</th>"
      "<th>fastest CPU</th><th>fastest GPU</th><th>GPU speed / CPU speed</th>{}</tr></thead>"
      "<tbody>\n",
      energy ? " energy" : "", energy ? "<th>CPU J / GPU J</th>" : "");
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const BarHeadlineRow& row = a.rows[i];
    // Each bar named once, at the first of its sizes, so the rows read as groups.
    const bool first_of_bar = i == 0 || a.rows[i - 1].bar != row.bar;
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"num\" data-label=\"N =\">{}</td><td "
        "data-label=\"CPU\">{}</td><td data-label=\"GPU\">{}</td><td "
        "data-label=\"GPU/CPU\">{}</td>{}</tr>\n",
        first_of_bar ? " class=\"first\"" : "",
        first_of_bar ? "<b>" + html_escape(a.bars.at(row.bar).label) + "</b>" : std::string(),
        row.n, time_cell(row.cpu, row.cpu_measured), time_cell(row.gpu, row.gpu_measured),
        speed_ratio_cell(row.gpu_over_cpu),
        energy ? "<td data-label=\"CPU J / GPU J\">" + energy_ratio_cell(row.energy_ratio) + "</td>"
               : std::string());
  }
  out += "</tbody></table></div>\n";
  out +=
      "<h3>Crossovers</h3>\n<p>The smallest N from which a device's fastest formulation meeting "
      "the bar is a tree, there and at every larger N where both algorithms were measured on "
      "it.</p>\n<ul>";
  for (const Crossover& c : a.crossovers) {
    out += "<li>" + html_escape(crossover_sentence(a, c)) + "</li>";
  }
  return out + "</ul>\n</section>\n";
}

namespace {

// A part of a tree's evaluation against its own bound: its fraction, the bound's time under it.
std::string bound_cell(const std::optional<double>& fraction,
                       const std::optional<double>& bound_s) {
  if (!fraction || !bound_s) return "—";
  return fmt::format("<b>{:.0f}%</b> <small>bound {}</small>{}", 100 * *fraction,
                     format_seconds(*bound_s), *fraction > 1 ? " ⚠" : "");
}

// One tree measurement's cells, its energy's (where `energy`: the run read any) beside its time.
std::vector<std::string> tree_cells(const TreeRow& r, bool energy, bool& unresolved) {
  // Its time, its build and each part against its bound first, where a wide table still shows
  // them on a laptop's screen; energy and the secondary figures after.
  std::vector<std::string> cells = {
      html_escape(r.implementation),
      html_escape(theta_text(r.theta)),
      std::to_string(r.n),
      fmt::format("{} · {}", device_name(r.device), to_string(r.precision)),
      r.median_s ? format_seconds(*r.median_s) + (r.disturbance.empty() ? "" : " ⚠") : "—",
      r.median_s ? fmt::format("{} – {} ({:.0f}%)", format_seconds(r.ci_low_s),
                               format_seconds(r.ci_high_s), 100 * r.ci_confidence)
                 : "—",
      r.bodies_per_second ? html_escape(format_si(*r.bodies_per_second, "")) : "—",
      r.build_s ? fmt::format("{} ({})", format_seconds(*r.build_s),
                              optional_text(r.build_share, "{:.0f}%", 100))
                : "—",
      bound_cell(r.walk_fraction_of_bound, r.walk_bound_s),
      bound_cell(r.build_fraction_of_bound, r.build_bound_s)};
  if (energy) {
    for (std::string& c : energy_cells(r.energy, unresolved)) cells.push_back(std::move(c));
  }
  for (std::string c :
       {optional_text(r.body_body_per_body, "{:.4g}"),
        optional_text(r.body_cell_per_body, "{:.4g}"),
        r.relative_l2 ? fmt::format("{:.2e} ({:.1e})", *r.relative_l2, r.relative_l2_bound) : "—",
        optional_text(r.max_relative, "{:.2e}"), tree_status(r)}) {
    cells.push_back(std::move(c));
  }
  return cells;
}

}  // namespace

std::string tree_codes_html(const AlgorithmComparison& a, const EnergyAnalysis& energy) {
  if (!a.any_tree()) return {};
  std::string out = "<h3>Tree codes</h3>\n<p>" + html_escape(tree_codes_intro()) + "</p>\n";
  std::vector<std::string> headers = {"implementation",
                                      "θ",
                                      "N",
                                      "device · precision",
                                      "time / evaluation",
                                      "CI of median",
                                      "bodies/s",
                                      "tree build (share)",
                                      "walk: of its bound",
                                      "build: of its bound"};
  if (energy.any_read()) {
    for (std::string& h : energy_headers(true)) headers.push_back(std::move(h));
  }
  for (const char* h : {"body-body / body", "body-cell / body", "rel. L2 error (bound)",
                        "max rel. error", "accuracy"}) {
    headers.emplace_back(h);
  }
  Table t = Table::of(headers);
  bool unresolved = false;
  for (const TreeRow& r : a.trees) t.row(tree_cells(r, energy.any_read(), unresolved));
  const std::string note = tree_bounds_note(a);
  return out + t.done() +
         (note.empty() ? std::string() : "<p class=\"note\">" + html_escape(note) + "</p>\n") +
         (unresolved ? energy_footnote() : std::string());
}

json accuracy_time_data(const AlgorithmComparison& a) {
  json charts = json::array();
  if (!a.any_tree()) return charts;
  for (const ParetoFront& front : a.fronts) {
    if (charts.empty() || charts.back()["n"].get<std::size_t>() != front.n) {
      charts.push_back({{"n", front.n}, {"devices", json::array()}});
    }
    json points = json::array();
    for (const ParetoPoint& p : front.points) points.push_back(figure_point(p));
    charts.back()["devices"].push_back(
        {{"device", front.device == DeviceKind::gpu ? "gpu" : "cpu"}, {"points", points}});
  }
  return charts;
}

std::vector<ChartCard> accuracy_time_charts(const json& data) {
  std::vector<ChartCard> charts;
  for (std::size_t i = 0; i < data.size(); ++i) {
    charts.push_back(
        {fmt::format("chart-accuracy-time-{}", i), "accuracyTime",
         fmt::format("Accuracy against time, N = {} (log-log)", data[i]["n"].get<std::size_t>()),
         "Every formulation measured ok at this N: its relative L2 error against the float64 "
         "reference (left is more accurate) and its time per force evaluation (lower is faster). "
         "Blue: CPU; orange: GPU; circles: all-pairs; triangles: trees. Lines: each device's "
         "Pareto front (no formulation of it as accurate and faster). Dotted: the fixed accuracy "
         "bars.",
         static_cast<int>(i), ""});
  }
  return charts;
}

// ---- energy (FAIRNESS rule 10) ----

namespace {

const EnergyPoint* find_point(const EnergyAnalysis& energy, const std::string& implementation,
                              std::size_t n) {
  for (const EnergyPoint& p : energy.points) {
    if (p.implementation == implementation && p.n == n) return &p;
  }
  return nullptr;
}

// Three figures, never an exponent: two boards' 1400 W limit reads "1400 W", not "1.4e+03 W".
std::string watts(double w) {
  return w >= 1000 ? fmt::format("{:.0f} W", w) : fmt::format("{:.3g} W", w);
}

// "CPU: powercap (package-0; package-0 dram), idle 44.5 W, counters updated every 1 ms, power
// limit 700 W", or why it was not read.
std::string meter_line(const EnergyDevice& d) {
  const char* device = d.device == DeviceKind::gpu ? "GPU" : "CPU";
  if (!d.measured) {
    return fmt::format("<li><b>{}</b>: not read — {}</li>", device,
                       html_escape(d.unavailable_reason));
  }
  return fmt::format(
      "<li><b>{}</b>: {} ({}); idle {}; counters updated every {}; {}</li>", device,
      html_escape(d.source), html_escape(fmt::format("{}", fmt::join(d.domains, "; "))),
      watts(d.idle_watts),
      d.update_period_s > 0 ? format_seconds(d.update_period_s)
                            : std::string("(never seen to move)"),
      d.limit_watts ? "power limit " + watts(*d.limit_watts) : std::string("no power limit read"));
}

// How idle power is accounted; where a chart is drawn, what its dashed lines are.
std::string idle_sentence(const std::string& accounting, bool chart) {
  if (accounting == "subtracted") {
    return "Idle power is subtracted on both sides: each figure is what its device's counters "
           "read less its idle power over the same seconds.";
  }
  return std::string(
             "Idle power is included on both sides: each figure is what its device's "
             "counters read") +
         (chart ? " (a device idle for the same seconds would read its idle power × the time: "
                  "the chart's dashed lines)."
                : ".");
}

// The energy-against-time chart's card, or one line saying why there is none.
std::string joules_chart_html(const EnergyAnalysis& energy, const json& data,
                              const ChartJsSource& chartjs) {
  ChartCard card{"chart-joules",
                 "joules",
                 "Energy against time per evaluation (log-log)",
                 "Each measurement timed ok with its device's energy read: joules per force "
                 "evaluation (idle power " +
                     energy.idle_accounting +
                     ") against its median time per evaluation. Blue: CPU; orange: GPU; "
                     "circles: all-pairs; triangles: trees; hollow: spanned fewer than " +
                     fmt::format("{:g}", kMinEnergyPeriods) +
                     " counter updates (not resolved). Bars: the counters' lag of one update "
                     "period either way. Dashed: each device's idle power × time. Formulations "
                     "of unequal accuracy share the plane: compare them in the tables.",
                 0,
                 data["devices"].empty() ? "no measurement's energy was read" : ""};
  card.wide = true;
  if (!chartjs.source) {
    return fmt::format("<p class=\"why\">No chart: {}.</p>\n", html_escape(chartjs.missing_reason));
  }
  if (!card.absent.empty()) {
    return fmt::format("<p class=\"why\">{}: no chart, {}.</p>\n", html_escape(card.title),
                       html_escape(card.absent));
  }
  return "<div class=\"grid\">\n" + chart_html(card) + "</div>\n";
}

}  // namespace

std::string linked_html(const std::vector<AnswerSpan>& spans) {
  std::string out;
  for (const AnswerSpan& s : spans) {
    if (s.link == AnswerLink::none) {
      out += html_escape(s.text);
      continue;
    }
    const char* target = s.link == AnswerLink::headline ? "headline"
                         : s.link == AnswerLink::energy ? "energy"
                                                        : "algorithms";
    out += fmt::format("<a href=\"#{}\">{}</a>", target, html_escape(s.text));
  }
  return out;
}

std::string energy_ratio_intro_html(const EnergyAnalysis& energy) {
  const std::vector<AnswerSpan> intro = energy_ratio_intro(energy, IntervalPlacement::below);
  return intro.empty() ? std::string() : "<p>" + linked_html(intro) + "</p>\n";
}

std::string energy_ratio_cell(const std::optional<RateRatio>& r) {
  if (!r) return "—";
  return fmt::format("<b>{:.3g}×</b><br><small>{:.3g}–{:.3g}</small>", r->value, r->low, r->high);
}

std::vector<std::string> energy_headers(bool tree) {
  return {"J / evaluation", tree ? "bodies/J" : "int/J", "mean W"};
}

std::vector<std::string> energy_cells(const EnergyAnalysis& energy,
                                      const std::string& implementation, std::size_t n,
                                      bool& unresolved) {
  const EnergyPoint* p = find_point(energy, implementation, n);
  return energy_cells(p ? std::optional<EnergyFigure>(p->energy) : std::nullopt, unresolved);
}

std::vector<std::string> energy_cells(const std::optional<EnergyFigure>& figure, bool& unresolved) {
  if (!figure) return {"—", "—", "—"};
  const EnergyFigure& e = *figure;
  unresolved = unresolved || !e.resolved;
  const double per_joule =
      e.interactions_per_joule ? *e.interactions_per_joule : e.bodies_per_joule;
  return {html_escape(format_si(e.joules_per_evaluation, "J")) + (e.resolved ? "" : " †"),
          html_escape(format_si(per_joule, "")), fmt::format("{:.0f}", e.mean_watts)};
}

std::string energy_footnote() {
  return fmt::format(
      "<p class=\"note\">† spanned fewer than {:g} counter updates: read within one update "
      "period's energy either way (its interval in results.json), and set against no other "
      "figure.</p>\n",
      kMinEnergyPeriods);
}

json joules_data(const EnergyAnalysis& energy) {
  json devices = json::array();
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    json points = json::array();
    for (const EnergyPoint& p : energy.points) {
      if (p.device != device || !(p.seconds > 0) || !(p.energy.joules_per_evaluation > 0)) continue;
      const EnergyFigure& e = p.energy;
      points.push_back(
          {{"name", p.implementation},
           {"n", p.n},
           {"x", p.seconds},
           {"y", e.joules_per_evaluation},
           {"lo", e.low_j},
           {"hi", e.high_j},
           {"w", e.mean_watts},
           {"tree", !e.interactions_per_joule.has_value()},
           {"per_j", e.interactions_per_joule ? *e.interactions_per_joule : e.bodies_per_joule},
           {"periods", e.periods_spanned},
           {"resolved", e.resolved}});
    }
    if (points.empty()) continue;
    double idle = 0;
    for (const EnergyDevice& d : energy.devices) {
      if (d.device == device && d.measured) idle = d.idle_watts;
    }
    devices.push_back({{"device", device == DeviceKind::gpu ? "gpu" : "cpu"},
                       {"idle_watts", idle},
                       {"points", std::move(points)}});
  }
  return {{"devices", std::move(devices)},
          {"idle_accounting", energy.idle_accounting},
          {"min_periods", kMinEnergyPeriods}};
}

std::string energy_section_html(const EnergyAnalysis& energy, const json& data,
                                const ChartJsSource& chartjs) {
  std::string out =
      "<section id=\"energy\"><h2>Energy</h2>\n<p>FAIRNESS rule 10: energy is read from each "
      "device's counters around each timing, never estimated: the whole GPU board (NVML) against "
      "the CPU packages and their DRAM (RAPL), joules per force evaluation, and interactions per "
      "joule (bodies per joule for trees). Ratios are CPU joules over GPU joules (how many times "
      "less the GPU used), formed within one run and across algorithms only at equal measured "
      "accuracy.</p>\n";
  if (energy.devices.empty()) {
    return out + "<p class=\"why\">No energy: " + html_escape(energy.no_ratio_reason) +
           ".</p>\n</section>\n";
  }
  out += "<ul class=\"facts meters\">";
  for (const EnergyDevice& d : energy.devices) out += meter_line(d);
  out += "</ul>\n";
  if (energy.any_read()) {
    out += "<p>" +
           html_escape(idle_sentence(energy.idle_accounting,
                                     chartjs.source.has_value() && !data["devices"].empty())) +
           "</p>\n";
  }
  if (!energy.compares()) {
    out += "<p class=\"warn\">No GPU/CPU energy ratio: " + html_escape(energy.no_ratio_reason) +
           (energy.any_read() ? ". What was read is in the tables, beside each time." : ".") +
           "</p>\n";
  }
  return out + joules_chart_html(energy, data, chartjs) + "</section>\n";
}

}  // namespace nbody::reports
