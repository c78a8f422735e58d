#include "nbody/reports/scaling_report.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "html_page.hpp"
#include "nbody/files.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "nbody/reports/csv_report.hpp"
#include "nbody/sizes.hpp"

namespace nbody::reports {
namespace {

using nlohmann::json;

// ---- formatting shared by the three printers ----

std::string seconds(const std::optional<double>& s) {
  if (!s) return "—";
  if (*s == 0) return "0";
  if (*s < 1e-3) return fmt::format("{:.3g} µs", *s * 1e6);
  if (*s < 1) return fmt::format("{:.3g} ms", *s * 1e3);
  return fmt::format("{:.3g} s", *s);
}

std::string times(const std::optional<double>& x) {
  return x ? fmt::format("{:.3g}×", *x) : "—";
}

std::string percent(const std::optional<double>& fraction) {
  return fraction ? fmt::format("{:.0f}%", 100 * *fraction) : "—";
}

std::string mark(const std::string& disturbance) {
  return disturbance.empty() ? "" : " ⚠";
}

// What each kind of work calls its two times.
struct TimeNames {
  const char* work;     // section titles
  const char* compute;  // the compute time
  const char* total;    // the whole time
};

TimeNames names_of(ScalingWork work) {
  return work == ScalingWork::evaluation
             ? TimeNames{"force evaluations (run)", "kernel", "end to end"}
             : TimeNames{"simulation steps (simulate)", "force + integration", "step"};
}

bool any_of_work(const ScalingStudy& study, ScalingWork work) {
  return std::any_of(study.points.begin(), study.points.end(),
                     [work](const ScalingPoint& p) { return p.work == work; });
}

std::vector<ScalingWork> works_of(const ScalingStudy& study) {
  std::vector<ScalingWork> works;
  for (const ScalingWork w : {ScalingWork::evaluation, ScalingWork::simulation}) {
    if (any_of_work(study, w)) works.push_back(w);
  }
  return works;
}

std::string problem(const ScalingStudy& study) {
  return fmt::format("{}, seed {}, softening {}{}", study.initial_condition, study.seed,
                     study.softening, study.dt > 0 ? fmt::format(", dt {}", study.dt) : "");
}

std::string document_scale(const ScalingSource& s) {
  const std::string gpus =
      s.gpu_names.empty()     ? std::string("no GPU")
      : s.gpu_devices.empty() ? std::string("one GPU per rank")
                              : fmt::format("GPUs {} on each rank", fmt::join(s.gpu_devices, ", "));
  return fmt::format("{} rank{} on {} host{} ({}); {}", s.ranks, s.ranks == 1 ? "" : "s", s.hosts,
                     s.hosts == 1 ? "" : "s", fmt::join(s.host_names, ", "), gpus);
}

// The definitions every printer states, in these words.
std::vector<std::string> definitions() {
  return {
      "k is the number of devices: GPUs for GPU formulations (ranks × GPUs per rank), ranks for "
      "CPU formulations (each rank with the record's CPU threads; a series keeps its threads per "
      "rank).",
      "Each time is the median of its measurement's repetitions. For force evaluations, kernel is "
      "the slowest rank's computation; end to end adds the all-gather of the slices "
      "(communication: on GPUs from the end of the kernel that ended last, through host memory "
      "with the waits for slower ranks) and, on the GPU, the copies and the other devices' "
      "wait for the last kernel (other); one process on the CPU records no "
      "end to end, and its kernel time stands for it. For simulations, a step's force and "
      "integration are the compute, communication its all-gathers, other the rest.",
      "model: the exchange the scaling model predicts, α + (k − 1) ⌈N / k⌉ b / β, from the "
      "all-gather's latency α and bus bandwidth β measured between the document's GPUs "
      "(gpu.all_gather.* among its ceilings: a run on several GPUs with counters, or nbody-fair "
      "peaks --gpus); α is the latency of an all-gather alone after a long kernel, as a run's "
      "is, where measured (latency_after_kernel), otherwise back to back; b is 12 bytes a body "
      "after an evaluation (float32 accelerations), 16 after "
      "a step (positions and masses), twice that in float64. — where the document has no such "
      "measurement.",
      "Strong scaling (fixed N): speedup S_k = T_1 / T_k and parallel efficiency E_k = T_1 / (k "
      "T_k), where T_1 is the same implementation at the same N on one device, never another "
      "implementation. Efficiency is on the end-to-end (or step) time, and also given on the "
      "compute time alone.",
      "Weak scaling (fixed N per device, N_k = k N_1): all-pairs work grows as N², so the figure "
      "is the interaction rate per device, rate = N² / T; efficiency = rate_k / (k rate_1). "
      "Perfect weak scaling of all-pairs work takes k times as long on k devices (k² the work).",
      "⚠: the measurement, or its one-device baseline, was taken on a disturbed machine; its "
      "figures may be off."};
}

// The disturbed figures, each once: "what: why".
std::vector<std::string> disturbed_lines(const ScalingStudy& study) {
  std::vector<std::string> lines;
  for (const ScalingPoint& p : study.points) {
    if (p.disturbance.empty()) continue;
    lines.push_back(fmt::format("{} at N = {} on {} ({}): {}", p.implementation, p.n, p.scale_label,
                                p.source, p.disturbance));
  }
  return lines;
}

std::vector<std::string> not_measured_lines(const ScalingStudy& study) {
  std::vector<std::string> lines;
  for (const ScalingPoint& p : study.points) {
    if (p.timed()) continue;
    lines.push_back(fmt::format("{} at N = {} on {} ({}): {}{}", p.implementation, p.n,
                                p.scale_label, p.source, to_string(p.status),
                                p.reason.empty() ? "" : ", " + p.reason));
  }
  return lines;
}

// ---- Markdown ----

std::string md_escape(std::string text) {
  for (std::size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) {
    text.replace(at, 1, "\\|");
  }
  return text;
}

void md_list(std::string& out, const std::string& heading, const std::string& intro,
             const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  out += fmt::format("## {}\n\n", heading);
  if (!intro.empty()) out += intro + "\n\n";
  for (const std::string& line : lines) out += fmt::format("- {}\n", md_escape(line));
  out += "\n";
}

void md_strong(std::string& out, const ScalingStudy& study, ScalingWork work) {
  const TimeNames n = names_of(work);
  out += fmt::format("## Strong scaling: {}\n\n", n.work);
  out += fmt::format(
      "| implementation | N | k | scale | {} | communication | model | other | {} | speedup | "
      "efficiency | {} efficiency | document |\n"
      "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
      n.compute, n.total, n.compute);
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.timed()) continue;
    const std::string flag = p.strong ? mark(p.strong->disturbance) : mark(p.disturbance);
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {}{} | {} | {} | {} | {} |\n", p.implementation,
        p.n, p.scale.devices(), p.scale_label, seconds(p.compute_s), seconds(p.communication_s),
        seconds(p.modeled_communication_s), seconds(p.other_s), seconds(p.total_s),
        p.total_recorded ? "" : " (kernel)", p.strong ? times(p.strong->total_speedup) : "—",
        p.strong ? percent(p.strong->total_efficiency) + flag : "— (" + p.strong_missing + ")",
        p.strong ? percent(p.strong->compute_efficiency) : "—", md_escape(p.source));
  }
  out += "\n";
}

void md_weak(std::string& out, const ScalingStudy& study, ScalingWork work) {
  const TimeNames n = names_of(work);
  out += fmt::format("## Weak scaling: {}\n\n", n.work);
  const bool any = std::any_of(study.points.begin(), study.points.end(), [work](const auto& p) {
    return p.work == work && p.weak.has_value();
  });
  if (!any) {
    out +=
        "No pair: weak scaling needs, for k devices at N, the same implementation on one device "
        "at N / k (e.g. `--sizes 4K` on one rank beside `--sizes 8K` on two).\n\n";
    return;
  }
  out += fmt::format(
      "| implementation | N on one device → N | k | scale | {} on one device | {} | "
      "interactions/s per device | efficiency | {} efficiency |\n"
      "|---|---:|---:|---|---:|---:|---:|---:|---:|\n",
      n.total, n.total, n.compute);
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.weak) continue;
    const WeakScaling& w = *p.weak;
    const std::optional<double> base_total =
        w.baseline_total_rate
            ? std::optional<double>(static_cast<double>(w.baseline_n) *
                                    static_cast<double>(w.baseline_n) / *w.baseline_total_rate)
            : std::nullopt;
    out += fmt::format(
        "| {} | {} → {} | {} | {} | {} | {} | {} | {}{} | {} |\n", p.implementation, w.baseline_n,
        p.n, p.scale.devices(), p.scale_label, seconds(base_total), seconds(p.total_s),
        w.total_rate_per_device ? format_si(*w.total_rate_per_device, "int/s") : "—",
        percent(w.total_efficiency), mark(w.disturbance), percent(w.compute_efficiency));
  }
  out += "\n";
}

// ---- HTML ----

std::string h(const std::string& text) {
  return html_escape(text);
}

std::string html_list(const std::string& heading, const std::string& intro,
                      const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string out = fmt::format("<h3>{}</h3>\n", h(heading));
  if (!intro.empty()) out += fmt::format("<p>{}</p>\n", h(intro));
  out += "<ul>";
  for (const std::string& line : lines) out += "<li>" + h(line) + "</li>";
  return out + "</ul>\n";
}

std::string html_strong(const ScalingStudy& study, ScalingWork work) {
  const TimeNames n = names_of(work);
  std::string out = fmt::format("<h3>Strong scaling: {}</h3>\n", h(n.work));
  // The documents table names each scale's document; here the scale says which it is.
  Table t({"implementation", "N", "k", "scale", n.compute, "communication", "model", "other",
           n.total, "speedup", "efficiency", std::string(n.compute) + " efficiency"},
          "scaling");
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.timed()) continue;
    const std::string flag = p.strong ? mark(p.strong->disturbance) : mark(p.disturbance);
    t.row({h(p.implementation), std::to_string(p.n), std::to_string(p.scale.devices()),
           h(p.scale_label), seconds(p.compute_s), seconds(p.communication_s),
           seconds(p.modeled_communication_s), seconds(p.other_s),
           seconds(p.total_s) + (p.total_recorded ? "" : " <small>(kernel)</small>"),
           p.strong ? times(p.strong->total_speedup) : "—",
           p.strong ? "<b>" + percent(p.strong->total_efficiency) + "</b>" + flag
                    : "— <small>" + h(p.strong_missing) + "</small>",
           p.strong ? percent(p.strong->compute_efficiency) : "—"});
  }
  return out + t.done();
}

std::string html_weak(const ScalingStudy& study, ScalingWork work) {
  const TimeNames n = names_of(work);
  std::string out = fmt::format("<h3>Weak scaling: {}</h3>\n", h(n.work));
  const bool any = std::any_of(study.points.begin(), study.points.end(), [work](const auto& p) {
    return p.work == work && p.weak.has_value();
  });
  if (!any) {
    return out +
           "<p class=\"why\">No pair: weak scaling needs, for k devices at N, the same "
           "implementation on one device at N / k (e.g. <code>--sizes 4K</code> on one rank "
           "beside <code>--sizes 8K</code> on two).</p>\n";
  }
  out += fmt::format(
      "<p>One device: the {0} time at N₁ = N / k on one device; k devices: the {0} time at N; per "
      "device: interactions per second per device at N.</p>\n",
      n.total);
  Table t({"implementation", "N₁ → N", "k", "scale", "one device", "k devices", "per device",
           "efficiency", std::string(n.compute) + " efficiency"},
          "scaling");
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.weak) continue;
    const WeakScaling& w = *p.weak;
    const double nn = static_cast<double>(w.baseline_n) * static_cast<double>(w.baseline_n);
    t.row({h(p.implementation), fmt::format("{} → {}", w.baseline_n, p.n),
           std::to_string(p.scale.devices()), h(p.scale_label),
           seconds(w.baseline_total_rate ? std::optional<double>(nn / *w.baseline_total_rate)
                                         : std::nullopt),
           seconds(p.total_s),
           w.total_rate_per_device ? h(format_si(*w.total_rate_per_device, "int/s")) : "—",
           "<b>" + percent(w.total_efficiency) + "</b>" + mark(w.disturbance),
           percent(w.compute_efficiency)});
  }
  return out + t.done();
}

// The series of an efficiency chart: one line per implementation and N (and threads per rank).
std::string series_name(const ScalingPoint& p, std::size_t n) {
  std::string name = fmt::format("{} @ {}", p.implementation, format_size(n));
  if (p.device == DeviceKind::cpu) {
    name += fmt::format(" ({} thread{}/rank)", p.scale.threads_per_rank,
                        p.scale.threads_per_rank == 1 ? "" : "s");
  }
  return name;
}

json efficiency_point(const ScalingPoint& p, double efficiency, const std::string& text,
                      const std::string& disturbance) {
  json point = {{"k", p.scale.devices()}, {"y", efficiency}, {"text", text}};
  if (!disturbance.empty()) point["disturbed"] = disturbance;
  return point;
}

json series_json(const ScalingPoint& p, std::size_t n) {
  return {{"name", series_name(p, n)},
          {"device", to_string(p.device)},
          {"precision", to_string(p.precision)},
          {"points", json::array()}};
}

// Strong: one line per (implementation, N, threads per rank) from its one-device point, a point
// per scale; where the same devices were joined in several ways (the GPUs of one process, ranks
// with NCCL, ranks through host memory) each way is a line of its own from that point.
json strong_efficiency_series(const ScalingStudy& study, ScalingWork work, bool& beyond_one) {
  struct Lines {
    const ScalingPoint* key = nullptr;
    json baseline = json::array();
    std::vector<std::string> ways;  // in order of appearance
    std::map<std::string, json> points_by_way;
  };
  std::map<std::string, Lines> lines;
  std::vector<std::string> order;
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.strong || !p.strong->total_efficiency) continue;
    const std::string name = series_name(p, p.n);
    auto [it, added] = lines.try_emplace(name);
    if (added) {
      order.push_back(name);
      it->second.key = &p;
    }
    json point = efficiency_point(
        p, *p.strong->total_efficiency,
        fmt::format("{} at N = {} on {}: efficiency {}, speedup {}, {}", p.implementation, p.n,
                    p.scale_label, percent(p.strong->total_efficiency),
                    times(p.strong->total_speedup), seconds(p.total_s)),
        p.strong->disturbance);
    if (p.scale.devices() == 1) {
      it->second.baseline.push_back(std::move(point));
      continue;
    }
    beyond_one = true;
    const std::string way = describe_joining(p.scale);
    if (!it->second.points_by_way.contains(way)) {
      it->second.ways.push_back(way);
      it->second.points_by_way[way] = json::array();
    }
    it->second.points_by_way[way].push_back(std::move(point));
  }
  json out = json::array();
  for (const std::string& name : order) {
    const Lines& l = lines.at(name);
    std::vector<std::string> ways = l.ways;
    if (ways.empty()) ways.push_back("");  // the one-device point alone
    for (const std::string& way : ways) {
      json series = series_json(*l.key, l.key->n);
      if (ways.size() > 1) series["name"] = name + ", " + way;
      series["points"] = l.baseline;
      if (const auto it = l.points_by_way.find(way); it != l.points_by_way.end()) {
        for (const json& point : it->second) series["points"].push_back(point);
      }
      out.push_back(std::move(series));
    }
  }
  return out;
}

// Weak: one series per (implementation, N on one device), its baseline at k = 1.
json weak_efficiency_series(const ScalingStudy& study, ScalingWork work, bool& beyond_one) {
  std::map<std::string, json> series;
  std::vector<std::string> order;
  for (const ScalingPoint& p : study.points) {
    if (p.work != work || !p.weak || !p.weak->total_efficiency) continue;
    beyond_one = true;
    const WeakScaling& w = *p.weak;
    json base = {
        {"k", 1},
        {"y", 1.0},
        {"text",
         fmt::format("{} at N = {} on one device: the baseline, {}", p.implementation, w.baseline_n,
                     w.baseline_total_rate ? format_si(*w.baseline_total_rate, "int/s") : "—")}};
    if (!w.baseline_disturbance.empty()) base["disturbed"] = w.baseline_disturbance;
    const std::string name = series_name(p, w.baseline_n);
    json& s = series[name];
    if (s.is_null()) {
      s = series_json(p, w.baseline_n);
      s["points"].push_back(base);
      order.push_back(name);
    }
    s["points"].push_back(efficiency_point(
        p, *w.total_efficiency,
        fmt::format("{} at N = {} on {}: efficiency {}, {} per device", p.implementation, p.n,
                    p.scale_label, percent(w.total_efficiency),
                    w.total_rate_per_device ? format_si(*w.total_rate_per_device, "int/s") : "—"),
        w.disturbance));
  }
  json out = json::array();
  for (const std::string& name : order) out.push_back(series[name]);
  return out;
}

json efficiency_chart(const ScalingStudy& study, ScalingWork work, bool weak) {
  bool beyond_one = false;
  json series = weak ? weak_efficiency_series(study, work, beyond_one)
                     : strong_efficiency_series(study, work, beyond_one);
  return {{"work", to_string(work)}, {"series", std::move(series)}, {"drawn", beyond_one}};
}

// The label of a bar: the implementation, then the scale over lines of at most about 23
// characters, broken after its colon and its commas (Chart.js draws an array as lines), so that
// long labels stay narrow on a phone and the axis never cuts them.
json bar_lines(const ScalingPoint& p) {
  constexpr std::size_t kWidth = 24;  // bytes: "×" takes two
  json lines = {p.implementation};
  const auto colon = p.scale_label.find(": ");
  std::string rest = p.scale_label;
  if (colon != std::string::npos) {
    lines.push_back(p.scale_label.substr(0, colon + 1));
    rest = p.scale_label.substr(colon + 2);
  }
  std::string line;
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t comma = rest.find(", ", start);
    const std::string piece =
        rest.substr(start, comma == std::string::npos ? std::string::npos : comma + 1 - start);
    if (!line.empty() && line.size() + 1 + piece.size() > kWidth) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + piece;
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// Per (work, N): each timed scale's time as compute, communication and other, in seconds.
json split_charts(const ScalingStudy& study) {
  json charts = json::array();
  for (const ScalingWork work : works_of(study)) {
    std::set<std::size_t> sizes;
    for (const ScalingPoint& p : study.points) {
      if (p.work == work && p.timed()) sizes.insert(p.n);
    }
    for (const std::size_t n : sizes) {
      json rows = json::array();
      bool communication = false, other = false;
      for (const ScalingPoint& p : study.points) {
        if (p.work != work || p.n != n || !p.timed()) continue;
        const double comm = p.communication_s.value_or(0);
        const double rest = p.other_s.value_or(0);
        communication |= comm > 0;
        other |= rest > 0;
        rows.push_back(
            {{"lines", bar_lines(p)},
             {"title", fmt::format("{} at N = {} on {}{}", p.implementation, n, p.scale_label,
                                   mark(p.disturbance))},
             {"seconds", {{"compute", *p.compute_s}, {"communication", comm}, {"other", rest}}},
             {"total_s", *p.total_s}});
      }
      const TimeNames names = names_of(work);
      json parts = {{{"key", "compute"}, {"label", names.compute}}};
      if (communication) parts.push_back({{"key", "communication"}, {"label", "communication"}});
      if (other) {
        parts.push_back({{"key", "other"}, {"label", "other"}});
      }
      charts.push_back({{"work", to_string(work)},
                        {"n", n},
                        {"per", work == ScalingWork::evaluation ? "evaluation" : "step"},
                        {"parts", parts},
                        {"rows", rows}});
    }
  }
  return charts;
}

std::vector<ChartCard> plan_charts(const json& data) {
  std::vector<ChartCard> charts;
  for (std::size_t i = 0; i < data["efficiency"].size(); ++i) {
    const json& chart = data["efficiency"][i];
    const bool weak = chart["weak"].get<bool>();
    const ScalingWork work =
        chart["work"] == "evaluation" ? ScalingWork::evaluation : ScalingWork::simulation;
    const std::string title = fmt::format("{} scaling: parallel efficiency against devices, {}",
                                          weak ? "Weak" : "Strong", names_of(work).work);
    const std::string note =
        weak ? "Interaction rate per device over the one-device rate at N / k, on the whole time. "
               "k: GPUs for GPU formulations, ranks for CPU ones; dashed: 100%. Hollow: disturbed."
             : "T₁ / (k T_k) on the whole time, against the same implementation on one device. k: "
               "GPUs for GPU formulations, ranks for CPU ones; dashed: 100%. Hollow: disturbed.";
    std::string absent;
    if (!chart["drawn"].get<bool>()) {
      absent = weak ? "no measurement on several devices has a one-device measurement at N / k"
                    : "no measurement on several devices has a one-device baseline";
    }
    charts.push_back({fmt::format("chart-efficiency-{}", i), "scalingEfficiency", title, note,
                      static_cast<int>(i), absent, false});
  }
  for (std::size_t i = 0; i < data["splits"].size(); ++i) {
    const json& split = data["splits"][i];
    charts.push_back(
        {fmt::format("chart-split-{}", i), "scalingSplit",
         fmt::format("Time per {} by part, N = {} ({})", split["per"].get<std::string>(),
                     format_size(split["n"].get<std::size_t>()), split["work"].get<std::string>()),
         "Each bar: one scale's median time: its compute, where recorded its communication (the "
         "all-gathers), and the rest (on the GPU the copies). Labels name the GPUs, ranks, cores "
         "and hosts.",
         static_cast<int>(i), "", false});
  }
  return charts;
}

}  // namespace

std::string render_scaling_markdown(const ScalingStudy& study) {
  std::string out = "# nbody-fair scaling study\n\n";
  out += fmt::format(
      "{} results documents of one problem ({}), each one configuration, set side by side by "
      "`nbody-fair scaling`.\n\n",
      study.sources.size(), problem(study));
  out += fmt::format("## Fairness audit: {}\n\n", study.verdict);
  out += "| rule | verdict | evidence |\n|---|---|---|\n";
  for (const AuditRule& r : study.audit) {
    out +=
        fmt::format("| {}. {} | {} | {} |\n", r.number, r.title,
                    r.verdict == RuleVerdict::not_kept ? fmt::format("**{}**", to_string(r.verdict))
                                                       : std::string(to_string(r.verdict)),
                    md_escape(r.evidence));
  }
  out += "\n## How to read it\n\n";
  for (const std::string& d : definitions()) out += "- " + d + "\n";
  out += "\n## Documents\n\n| document | command | scale | CPU | GPUs | generated |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const ScalingSource& s : study.sources) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_escape(s.source), s.command,
                       md_escape(document_scale(s)), md_escape(s.cpu_model),
                       s.gpu_names.empty() ? "none" : md_escape(s.gpu_names), s.generated_at);
  }
  out += "\n";
  for (const ScalingWork work : works_of(study)) {
    md_strong(out, study, work);
    md_weak(out, study, work);
  }
  md_list(out, "Without a one-device baseline", "", study.missing_baselines);
  md_list(out, "Disturbed measurements",
          "Their figures, and those resting on them, may be off:", disturbed_lines(study));
  md_list(out, "Not measured", "", not_measured_lines(study));
  md_list(out, "Flags", "", study.flags);
  return out;
}

std::string render_scaling_html(const ScalingStudy& study, const ChartJsSource& chartjs) {
  json data = {{"efficiency", json::array()}, {"splits", split_charts(study)}};
  for (const ScalingWork work : works_of(study)) {
    for (const bool weak : {false, true}) {
      json chart = efficiency_chart(study, work, weak);
      chart["weak"] = weak;
      chart["x_title"] = "devices k";
      data["efficiency"].push_back(std::move(chart));
    }
  }
  std::string out = page_head("nbody-fair scaling study");
  out += "<header><h1>nbody-fair scaling study</h1>\n";
  out += fmt::format(
      "<p class=\"summary\">{} results documents of one problem ({}), each one configuration, "
      "set side by side by <code>nbody-fair scaling</code>.</p>\n</header>\n",
      study.sources.size(), h(problem(study)));
  out += "<section id=\"audit\"><h2>Fairness audit</h2>\n";
  out += fmt::format("<p class=\"verdict\">{}</p>\n", h(study.verdict));
  Table audit({"#", "rule", "verdict", "evidence"}, "audit");
  for (const AuditRule& r : study.audit) {
    audit.row({std::to_string(r.number), h(r.title), verdict_badge(r.verdict), h(r.evidence)});
  }
  out += audit.done() + "</section>\n";
  out += charts_section(plan_charts(data), chartjs);
  out += "<section id=\"tables\"><h2>Tables</h2>\n<ul class=\"facts\">";
  for (const std::string& d : definitions()) out += "<li>" + h(d) + "</li>";
  out += "</ul>\n";
  for (const ScalingWork work : works_of(study)) {
    out += html_strong(study, work);
    out += html_weak(study, work);
  }
  out += html_list("Without a one-device baseline", "", study.missing_baselines);
  out += html_list("Disturbed measurements",
                   "Their figures, and those resting on them, may be off:", disturbed_lines(study));
  out += html_list("Not measured", "", not_measured_lines(study));
  out += html_list("Flags", "", study.flags);
  out += "<h3>Documents</h3>\n";
  Table docs({"document", "command", "scale", "CPU", "GPUs", "generated"}, "documents");
  for (const ScalingSource& s : study.sources) {
    docs.row({"<code>" + h(s.source) + "</code>", h(s.command), h(document_scale(s)),
              h(s.cpu_model), s.gpu_names.empty() ? "none" : h(s.gpu_names), h(s.generated_at)});
  }
  out += docs.done() + "</section>\n</main>\n";
  return out + page_scripts(data, chartjs) + "</body></html>\n";
}

std::string render_scaling_csv(const ScalingStudy& study) {
  static const std::vector<std::string> kColumns = {"work",
                                                    "implementation",
                                                    "device",
                                                    "precision",
                                                    "initial_condition",
                                                    "n",
                                                    "devices",
                                                    "gpus",
                                                    "ranks",
                                                    "threads_per_rank",
                                                    "cores",
                                                    "hosts",
                                                    "scale",
                                                    "document",
                                                    "status",
                                                    "reason",
                                                    "compute_s",
                                                    "communication_s",
                                                    "modeled_communication_s",
                                                    "other_s",
                                                    "total_s",
                                                    "total_recorded",
                                                    "baseline_document",
                                                    "speedup",
                                                    "efficiency",
                                                    "compute_speedup",
                                                    "compute_efficiency",
                                                    "weak_baseline_n",
                                                    "weak_baseline_document",
                                                    "weak_interactions_per_second_per_device",
                                                    "weak_efficiency",
                                                    "weak_compute_efficiency",
                                                    "disturbed",
                                                    "disturbances",
                                                    "figures_disturbed"};
  const auto number = [](const std::optional<double>& v) {
    return v ? fmt::format("{}", *v) : std::string();
  };
  std::string out = csv_record(kColumns);
  for (const ScalingPoint& p : study.points) {
    const StrongScaling* s = p.strong ? &*p.strong : nullptr;
    const WeakScaling* w = p.weak ? &*p.weak : nullptr;
    const bool figures_disturbed = (s && !s->disturbance.empty()) || (w && !w->disturbance.empty());
    out += csv_record({std::string(to_string(p.work)),
                       p.implementation,
                       std::string(to_string(p.device)),
                       std::string(to_string(p.precision)),
                       p.initial_condition,
                       std::to_string(p.n),
                       std::to_string(p.scale.devices()),
                       std::to_string(p.scale.gpus),
                       std::to_string(p.scale.ranks),
                       std::to_string(p.scale.threads_per_rank),
                       std::to_string(p.scale.cores()),
                       std::to_string(p.scale.hosts),
                       p.scale_label,
                       p.source,
                       std::string(to_string(p.status)),
                       p.reason,
                       number(p.compute_s),
                       number(p.communication_s),
                       number(p.modeled_communication_s),
                       number(p.other_s),
                       number(p.total_s),
                       p.timed() ? (p.total_recorded ? "true" : "false") : "",
                       s ? s->baseline_source : "",
                       s ? number(s->total_speedup) : "",
                       s ? number(s->total_efficiency) : "",
                       s ? number(s->compute_speedup) : "",
                       s ? number(s->compute_efficiency) : "",
                       w ? std::to_string(w->baseline_n) : "",
                       w ? w->baseline_source : "",
                       w ? number(w->total_rate_per_device) : "",
                       w ? number(w->total_efficiency) : "",
                       w ? number(w->compute_efficiency) : "",
                       p.timed() ? (p.disturbance.empty() ? "false" : "true") : "",
                       p.disturbance,
                       s || w ? (figures_disturbed ? "true" : "false") : ""});
  }
  return out;
}

std::vector<std::filesystem::path> write_scaling_files(const ScalingStudy& study,
                                                       const std::filesystem::path& directory) {
  const std::vector<std::filesystem::path> files = {
      directory / "scaling.md", directory / "scaling.html", directory / "scaling.csv"};
  write_file_atomically(files[0], render_scaling_markdown(study));
  write_file_atomically(files[1], render_scaling_html(study, load_chartjs()));
  write_file_atomically(files[2], render_scaling_csv(study));
  return files;
}

}  // namespace nbody::reports
