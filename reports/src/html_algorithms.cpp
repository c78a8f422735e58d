#include "html_algorithms.hpp"

#include <fmt/format.h>

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
  return point;
}

}  // namespace

std::string across_algorithms_html(const AlgorithmComparison& a) {
  if (!a.any_tree()) return {};
  std::string out = "<section id=\"algorithms\"><h2>Across algorithms at equal accuracy</h2>\n";
  out += "<p>" + html_escape(across_algorithms_intro()) + "</p>\n";
  // Written by hand for its data-labels: on a phone each row stacks, its cells labelled.
  out +=
      "<div class=\"scroll\"><table class=\"bars\"><thead><tr><th>accuracy bar</th><th>N</th>"
      "<th>fastest CPU</th><th>fastest GPU</th><th>GPU speed / CPU speed</th></tr></thead>"
      "<tbody>\n";
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const BarHeadlineRow& row = a.rows[i];
    // Each bar named once, at the first of its sizes, so the rows read as groups.
    const bool first_of_bar = i == 0 || a.rows[i - 1].bar != row.bar;
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"num\" data-label=\"N =\">{}</td><td "
        "data-label=\"CPU\">{}</td><td data-label=\"GPU\">{}</td><td "
        "data-label=\"GPU/CPU\">{}</td></tr>\n",
        first_of_bar ? " class=\"first\"" : "",
        first_of_bar ? "<b>" + html_escape(a.bars.at(row.bar).label) + "</b>" : std::string(),
        row.n, time_cell(row.cpu, row.cpu_measured), time_cell(row.gpu, row.gpu_measured),
        speed_ratio_cell(row.gpu_over_cpu));
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

std::string tree_codes_html(const AlgorithmComparison& a) {
  if (!a.any_tree()) return {};
  std::string out = "<h3>Tree codes</h3>\n<p>" + html_escape(tree_codes_intro()) + "</p>\n";
  Table t({"implementation", "θ", "N", "device · precision", "time / evaluation", "CI of median",
           "bodies/s", "tree build (share)", "body-body / body", "body-cell / body",
           "rel. L2 error (bound)", "max rel. error", "accuracy"});
  for (const TreeRow& r : a.trees) {
    t.row(
        {html_escape(r.implementation), html_escape(theta_text(r.theta)), std::to_string(r.n),
         fmt::format("{} · {}", device_name(r.device), to_string(r.precision)),
         r.median_s ? format_seconds(*r.median_s) + (r.disturbance.empty() ? "" : " ⚠") : "—",
         r.median_s ? fmt::format("{} – {} ({:.0f}%)", format_seconds(r.ci_low_s),
                                  format_seconds(r.ci_high_s), 100 * r.ci_confidence)
                    : "—",
         r.bodies_per_second ? html_escape(format_si(*r.bodies_per_second, "")) : "—",
         r.build_s ? fmt::format("{} ({})", format_seconds(*r.build_s),
                                 optional_text(r.build_share, "{:.0f}%", 100))
                   : "—",
         optional_text(r.body_body_per_body, "{:.4g}"),
         optional_text(r.body_cell_per_body, "{:.4g}"),
         r.relative_l2 ? fmt::format("{:.2e} ({:.1e})", *r.relative_l2, r.relative_l2_bound) : "—",
         optional_text(r.max_relative, "{:.2e}"), tree_status(r)});
  }
  return out + t.done();
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

}  // namespace nbody::reports
