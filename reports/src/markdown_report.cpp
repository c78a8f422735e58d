#include "nbody/reports/markdown_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "nbody/energy_meter.hpp"
#include "nbody/files.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "sentences.hpp"

namespace nbody::reports {
namespace {

std::string si(double value, const char* unit = "") {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int k = 0;
  while (std::abs(value) >= 1000 && k < 5) {
    value /= 1000;
    ++k;
  }
  return fmt::format("{:.3g} {}{}", value, prefixes[k], unit);
}

std::string seconds(double s) {
  if (s < 1e-3) return fmt::format("{:.3g} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

std::string escape(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string rate_cell(const RateFigure& f) {
  return fmt::format("{} ({}{}){}", si(f.interactions_per_second, "int/s"), f.implementation,
                     f.scale_label.empty() ? "" : "; " + f.scale_label, f.disturbed() ? " ⚠" : "");
}

std::string ratio_cell(const std::optional<RateRatio>& r) {
  if (!r) return "—";
  return fmt::format("{:.3g}× ({:.3g}–{:.3g})", r->value, r->low, r->high);
}

std::string optional_rate_cell(const std::optional<RateFigure>& f) {
  return f ? rate_cell(*f) : std::string("—");
}

// Joules to three digits with the prefix that suits them.
std::string joules(double j) {
  if (j < 1e-3) return fmt::format("{:.3g} µJ", j * 1e6);
  if (j < 1) return fmt::format("{:.3g} mJ", j * 1e3);
  if (j < 1e3) return fmt::format("{:.3g} J", j);
  return fmt::format("{:.3g} kJ", j * 1e-3);
}

// Marks a figure that spanned too few counter updates to be resolved (footnoted under its table).
constexpr const char* kUnresolvedMark = "†";

std::string unresolved_footnote() {
  return fmt::format(
      "{} spanned fewer than {:g} counter updates: read within one update period's energy either "
      "way (its interval in results.json), and set against no other figure.\n\n",
      kUnresolvedMark, kMinEnergyPeriods);
}

// A measurement's energy as three cells: joules per evaluation (marked where unresolved), work
// per joule (interactions, or for a tree bodies) and mean watts; dashes where none was read.
std::string energy_cells(const std::optional<EnergyFigure>& e, bool tree) {
  if (!e) return "| — | — | — ";
  const std::optional<double> per_joule =
      tree ? std::optional<double>(e->bodies_per_joule) : e->interactions_per_joule;
  return fmt::format("| {}{} | {} | {:.0f} ", joules(e->joules_per_evaluation),
                     e->resolved ? "" : fmt::format(" {}", kUnresolvedMark),
                     per_joule ? si(*per_joule) : "—", e->mean_watts);
}

// The run had energy meters (results of version 10): its tables carry energy columns.
bool energy_columns(const EnergyAnalysis& energy) {
  return !energy.devices.empty();
}

// Disturbed figures under a line saying what disturbed them; nothing where there are none.
void disturbed_list(std::string& out, const char* intro, const std::vector<RateFigure>& figures) {
  if (figures.empty()) return;
  out += fmt::format("{}\n\n", intro);
  for (const RateFigure& f : figures) {
    out += fmt::format("- {} at N = {}: {}\n", f.implementation, f.n, escape(f.disturbance));
  }
  out += "\n";
}

void audit_section(std::string& out, const FairnessAudit& audit) {
  out += fmt::format("## Fairness audit: {}\n\n", audit.verdict);
  out +=
      "Each rule of docs/FAIRNESS.md, checked from this run's own data.\n\n"
      "| rule | verdict | evidence |\n|---|---|---|\n";
  for (const AuditRule& rule : audit.rules) {
    const std::string verdict = rule.verdict == RuleVerdict::not_kept
                                    ? fmt::format("**{}**", to_string(rule.verdict))
                                    : std::string(to_string(rule.verdict));
    out += fmt::format("| {}. {} | {} | {} |\n", rule.number, rule.title, verdict,
                       escape(rule.evidence));
  }
  out += "\n";
  disturbed_list(out,
                 "⚠ Measured while the CPU was contended or the GPU's clocks were held down "
                 "(re-measured, still disturbed; their figures may read low):",
                 audit.disturbed_measurements);
}

// Under an all-pairs analysis: where the trees are instead.
void trees_elsewhere(std::string& out, const AlgorithmComparison& a) {
  if (const std::string where = trees_elsewhere_sentence(a); !where.empty()) {
    out += escape(where) + "\n\n";
  }
}

// The anchors report.md's renderers (GitHub's, most others) give the sections the answer links
// to: the heading lowercased, punctuation dropped, spaces as hyphens.
constexpr const char* kHeadlineHeading = "Headline: best against best, naive against naive";
constexpr const char* kHeadlineAnchor = "#headline-best-against-best-naive-against-naive";
constexpr const char* kAlgorithmsHeading = "Across algorithms at equal accuracy";
constexpr const char* kAlgorithmsAnchor = "#across-algorithms-at-equal-accuracy";

// The answer's spans, each figure a link to the section of its table. The Energy section is named
// plain ("see Energy"), as report.md has always named it.
std::string linked(const std::vector<AnswerSpan>& spans) {
  std::string out;
  for (const AnswerSpan& s : spans) {
    if (s.link == AnswerLink::none || s.link == AnswerLink::energy) {
      out += escape(s.text);
    } else {
      out += fmt::format("[{}]({})", escape(s.text),
                         s.link == AnswerLink::headline ? kHeadlineAnchor : kAlgorithmsAnchor);
    }
  }
  return out;
}

// Above a table with energy ratios, a paragraph: what they are, or why there are none.
std::string energy_ratio_paragraph(const EnergyAnalysis& energy) {
  const std::vector<AnswerSpan> intro = energy_ratio_intro(energy, IntervalPlacement::in_brackets);
  return intro.empty() ? std::string() : linked(intro) + "\n\n";
}

void headline_section(std::string& out, const Analysis& analysis) {
  const Headline& headline = analysis.headline;
  const AlgorithmComparison& algorithms = analysis.algorithms;
  if (headline.rows.empty()) return;
  out += fmt::format("## {}\n\n", kHeadlineHeading);
  trees_elsewhere(out, algorithms);
  out +=
      "Full-accuracy results only, float32 against float32 and float64 against float64; kernel "
      "time; interactions per second (int/s), N² per force evaluation. In brackets after each "
      "ratio: its interval from the two medians' confidence intervals (slowest GPU over fastest "
      "CPU to fastest over slowest). A ratio needs both sides measured at that N.\n\n";
  const bool energy = energy_columns(analysis.energy);
  if (energy) out += energy_ratio_paragraph(analysis.energy);
  const auto energy_cell = [energy](const std::optional<RateRatio>& ratio) {
    return energy ? fmt::format(" {} |", ratio_cell(ratio)) : std::string();
  };
  const auto head = [energy](const char* pairing) {
    return fmt::format(
        "| precision | N | {0} CPU | {0} GPU | GPU/CPU ({0}) |{1}\n|---|---:|---|---|---|{2}\n",
        pairing, energy ? fmt::format(" CPU J / GPU J ({}) |", pairing) : "", energy ? "---|" : "");
  };
  out += head("best");
  for (const HeadlineRow& row : headline.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} |{}\n", to_string(row.precision), row.n,
                       optional_rate_cell(row.best_cpu), optional_rate_cell(row.best_gpu),
                       ratio_cell(row.best_ratio), energy_cell(row.best_energy_ratio));
  }
  out += "\n" + head("naive");
  for (const HeadlineRow& row : headline.rows) {
    if (!row.naive_cpu && !row.naive_gpu) continue;
    out += fmt::format("| {} | {} | {} | {} | {} |{}\n", to_string(row.precision), row.n,
                       optional_rate_cell(row.naive_cpu), optional_rate_cell(row.naive_gpu),
                       ratio_cell(row.naive_ratio), energy_cell(row.naive_energy_ratio));
  }
  out += "\n";
  if (const std::vector<AnswerSpan> line = equal_accuracy_line(analysis); !line.empty()) {
    out += "**" + linked(line) + "**\n\n";
  }
  disturbed_list(out,
                 "⚠ These figures of the headline were measured while the machine was busy with "
                 "other work and may read low (re-measured, still disturbed):",
                 headline.disturbed_figures);
}

// A bar's fastest formulation of one device: time per evaluation, what it is, its errors.
std::string time_cell(const std::optional<TimeFigure>& f, bool measured) {
  if (!f) return "— (" + no_figure_text(measured) + ")";
  return fmt::format("{} per evaluation, {} ({}; L2 {:.1e}, max {:.1e}){}", seconds(f->seconds),
                     si(f->bodies_per_second(), "bodies/s"), escape(time_figure_label(*f)),
                     f->relative_l2, f->max_relative, f->disturbance.empty() ? "" : " ⚠");
}

void across_algorithms_section(std::string& out, const AlgorithmComparison& a,
                               const EnergyAnalysis& energy_analysis) {
  if (!a.any_tree()) return;
  out += fmt::format("## {}\n\n{}\n\n", kAlgorithmsHeading, escape(across_algorithms_intro()));
  const bool energy = energy_columns(energy_analysis);
  if (energy) out += energy_ratio_paragraph(energy_analysis);
  out += fmt::format(
      "| accuracy bar | N | fastest CPU | fastest GPU | GPU speed / CPU speed |{}\n"
      "|---|---:|---|---|---|{}\n",
      energy ? " CPU J / GPU J |" : "", energy ? "---|" : "");
  for (const BarHeadlineRow& row : a.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} |{}\n", escape(a.bars.at(row.bar).label), row.n,
                       time_cell(row.cpu, row.cpu_measured), time_cell(row.gpu, row.gpu_measured),
                       ratio_cell(row.gpu_over_cpu),
                       energy ? fmt::format(" {} |", ratio_cell(row.energy_ratio)) : std::string());
  }
  out +=
      "\n**Crossovers** (the smallest N from which the device's fastest formulation meeting the "
      "bar is a tree there and at every larger N where both algorithms were measured):\n\n";
  for (const Crossover& c : a.crossovers) out += "- " + escape(crossover_sentence(a, c)) + "\n";
  out +=
      "\n**Pareto fronts** (no formulation of the device at that N is as accurate and faster; "
      "relative L2 error, time per evaluation; report.html draws every point):\n\n";
  for (const ParetoFront& front : a.fronts) {
    std::vector<std::string> points;
    for (const ParetoPoint& p : front.points) {
      if (!p.on_front) continue;
      points.push_back(fmt::format("{} ({:.1e}, {})", p.figure.implementation, p.figure.relative_l2,
                                   seconds(p.figure.seconds)));
    }
    out += fmt::format("- {}, N = {}: {}\n", front.device == DeviceKind::gpu ? "GPU" : "CPU",
                       front.n, fmt::join(points, " → "));
  }
  out += "\n";
}

std::string optional_cell(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("—");
}

// A part of a tree's evaluation against its own bound: "42% (bound 1.53 ms)", or "—".
std::string bound_cell(const std::optional<double>& fraction,
                       const std::optional<double>& bound_s) {
  if (!fraction || !bound_s) return "—";
  return fmt::format("{:.0f}% (bound {})", 100 * *fraction, seconds(*bound_s));
}

void tree_codes_section(std::string& out, const AlgorithmComparison& a,
                        const EnergyAnalysis& energy_analysis) {
  if (!a.any_tree()) return;
  out += "## Tree codes\n\n" + escape(tree_codes_intro()) + "\n\n";
  const bool energy = energy_columns(energy_analysis);
  out += fmt::format(
      "| implementation | θ | N | device | precision | time / evaluation | CI of median "
      "(coverage) | bodies/s | tree build (share) | walk: of its bound | build: of its bound | "
      "body-body / body | body-cell / body | rel. L2 error (bound) | max rel. error | accuracy "
      "|{}\n"
      "|---|---:|---:|---|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|{}\n",
      energy ? " J / evaluation | bodies/J | mean W |" : "", energy ? "---:|---:|---:|" : "");
  bool unresolved = false;
  for (const TreeRow& t : a.trees) {
    const std::optional<EnergyFigure>& e = t.energy;
    unresolved = unresolved || (energy && e && !e->resolved);
    const std::string status =
        t.status == Status::ok ? (t.passed ? "pass" : "**FAIL**")
                               : fmt::format("**{}**: {}", to_string(t.status), escape(t.reason));
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} {}|\n",
        t.implementation, theta_text(t.theta), t.n, to_string(t.device), to_string(t.precision),
        t.median_s ? seconds(*t.median_s) : "—", t.disturbance.empty() ? "" : " ⚠",
        t.median_s ? fmt::format("{} – {} ({:.0f}%)", seconds(t.ci_low_s), seconds(t.ci_high_s),
                                 100 * t.ci_confidence)
                   : "—",
        t.bodies_per_second ? si(*t.bodies_per_second) : "—",
        t.build_s
            ? fmt::format("{} ({})", seconds(*t.build_s),
                          optional_cell(t.build_share ? std::optional<double>(100 * *t.build_share)
                                                      : std::nullopt,
                                        "{:.0f}%"))
            : "—",
        bound_cell(t.walk_fraction_of_bound, t.walk_bound_s),
        bound_cell(t.build_fraction_of_bound, t.build_bound_s),
        optional_cell(t.body_body_per_body, "{:.4g}"),
        optional_cell(t.body_cell_per_body, "{:.4g}"),
        t.relative_l2 ? fmt::format("{:.2e} ({:.1e})", *t.relative_l2, t.relative_l2_bound) : "—",
        optional_cell(t.max_relative, "{:.2e}"), status,
        energy ? energy_cells(e, true) : std::string());
  }
  out += "\n";
  if (const std::string note = tree_bounds_note(a); !note.empty()) out += escape(note) + "\n\n";
  if (unresolved) out += unresolved_footnote();
}

void ladders_section(std::string& out, const std::vector<Ladder>& ladders) {
  if (ladders.empty()) return;
  out +=
      "## Optimization ladders\n\n"
      "Each side's full-accuracy formulations from its naive port up, at each N: the rate, the "
      "speedup over the previous rung measured, and over naive.\n\n";
  for (const Ladder& ladder : ladders) {
    out += fmt::format("**{} {}, N = {}:** ", to_string(ladder.device), to_string(ladder.precision),
                       ladder.n);
    std::vector<std::string> steps;
    for (const LadderStep& step : ladder.steps) {
      if (!step.interactions_per_second) {
        steps.push_back(fmt::format("{} (—)", step.implementation));
        continue;
      }
      std::vector<std::string> speedups;
      if (step.over_previous) speedups.push_back(fmt::format("×{:.3g}", *step.over_previous));
      if (step.over_naive && step.over_previous) {
        speedups.push_back(fmt::format("×{:.3g} over naive", *step.over_naive));
      }
      steps.push_back(fmt::format(
          "{} {}{}", step.implementation, si(*step.interactions_per_second, "int/s"),
          speedups.empty() ? std::string() : fmt::format(" ({})", fmt::join(speedups, "; "))));
    }
    out += fmt::format("{}\n\n", fmt::join(steps, " → "));
  }
}

// The timings, one row per measurement; accuracy and end-to-end have tables of their own.
void timing_table(std::string& out, const ResultsDocument& doc, bool approximate_class,
                  const EnergyAnalysis& energy_analysis) {
  const bool energy = energy_columns(energy_analysis);
  out += approximate_class
             ? "## Approximate accuracy class (not ranked beside full-accuracy results)\n\n"
             : "## Results\n\n";
  if (!approximate_class) {
    out +=
        "CI of median: a distribution-free confidence interval of the median time, between two "
        "order statistics of the repetitions; in brackets its exact coverage, which depends only "
        "on the number of repetitions. From 6 repetitions on it covers at least 95%; with fewer "
        "the best such interval is [min, max], covering 1 − 2^(1−K) of K repetitions: 93.75% for "
        "5 (shown rounded, 94%).\n\n";
  }
  if (energy) {
    out +=
        "J / evaluation: the energy its device's counters read over its timing, per force "
        "evaluation; int/J: credited interactions per joule; mean W: over the timing (see "
        "Energy).\n\n";
  }
  out += fmt::format(
      "| implementation | N | status | interactions/s (median) | slowest–fastest rep | time "
      "(median) | CI of median (coverage) | cv |{}\n|---|---:|---|---:|---|---:|---|---:|{}\n",
      energy ? " J / evaluation | int/J | mean W |" : "", energy ? "---:|---:|---:|" : "");
  bool unresolved = false;
  for (std::size_t i = 0; i < doc.results.size(); ++i) {
    const ResultRecord& r = doc.results[i];
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl || (impl->accuracy_class == AccuracyClass::approximate) != approximate_class ||
        is_tree(*impl)) {
      continue;  // a tree has no rate: its figures are under "Tree codes"
    }
    if (r.status == Status::skipped) continue;  // listed, grouped, under "Skipped"
    std::string timing = "| — | — | — | — | — ";
    const std::optional<EnergyFigure> e =
        energy && r.kernel && r.kernel_rate && i < energy_analysis.of_results.size()
            ? energy_analysis.of_results[i]
            : std::nullopt;
    unresolved = unresolved || (e && !e->resolved);
    if (r.kernel && r.kernel_rate) {
      const TimingStatistics& t = *r.kernel;
      timing = fmt::format("| {} | {} – {} | {} | {} – {} ({:.0f}%) | {:.1f}%{} ",
                           si(r.kernel_rate->interactions_per_second),
                           si(r.kernel_rate->interactions_per_second_min),
                           si(r.kernel_rate->interactions_per_second_max), seconds(t.median_s),
                           seconds(t.ci_low_s), seconds(t.ci_high_s), 100 * t.ci_confidence,
                           100 * t.cv, t.noisy ? " ⚠ noisy" : "");
    }
    std::string status = r.status == Status::ok
                             ? "ok"
                             : fmt::format("**{}**: {}", to_string(r.status), escape(r.reason));
    if (const std::string why = describe_disturbance(r); !why.empty()) {
      status += " ⚠ disturbed: " + escape(why);
    }
    out += fmt::format("| {} | {} | {} {}{}|\n", r.implementation, r.n, status, timing,
                       energy ? energy_cells(e, false) : std::string());
  }
  out += "\n";
  if (unresolved) out += unresolved_footnote();
}

void accuracy_table(std::string& out, const std::vector<AccuracyPoint>& points) {
  if (points.empty()) return;
  out +=
      "## Accuracy against the float64 reference\n\n"
      "| implementation | N | rel. L2 error | bound | max rel. error | accuracy |\n"
      "|---|---:|---:|---:|---:|---|\n";
  for (const AccuracyPoint& p : points) {
    out += fmt::format(
        "| {} | {} | {:.2e} | {:.1e} | {:.2e} | {}{} |\n", p.implementation, p.n, p.relative_l2,
        p.relative_l2_bound, p.max_relative, p.passed ? "pass" : "**FAIL**",
        p.accuracy_class == AccuracyClass::approximate ? " (approximate class)" : "");
  }
  out += "\n";
}

void end_to_end_table(std::string& out, const std::vector<EndToEndRow>& rows) {
  if (rows.empty()) return;
  out +=
      "## Kernel against end to end (GPU, ranks)\n\n"
      "End to end: on the GPU the bodies copied to it, the kernel, the accelerations copied back; "
      "decomposed over ranks, the slowest rank's slice and the all-gather of the slices; the "
      "same repetitions timed on both clocks.\n\n"
      "| implementation | N | kernel | end to end | copies' or gather's share |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const EndToEndRow& r : rows) {
    out += fmt::format("| {} | {} | {} | {} | {:.1f}% |\n", r.implementation, r.n,
                       seconds(r.kernel_s), seconds(r.end_to_end_s), 100 * r.copy_share());
  }
  out += "\n";
}

const char* device_name(DeviceKind device) {
  return device == DeviceKind::gpu ? "GPU" : "CPU";
}

// How each device's energy was read (FAIRNESS rule 10), or why not, and whether the two compare.
void energy_section(std::string& out, const EnergyAnalysis& energy) {
  out += "## Energy\n\n";
  if (energy.devices.empty()) {
    out += "Energy not read: " + escape(energy.no_ratio_reason) + ".\n\n";
    return;
  }
  out += fmt::format(
      "FAIRNESS rule 10: energy as each device's own counters read it around each timing, never a "
      "datasheet's figure, shown beside each time. Idle power {} on both sides; idle shown beside "
      "(measured once at the run's start, with nothing of the suite running).\n\n",
      energy.idle_accounting);
  const bool any_measured = std::any_of(energy.devices.begin(), energy.devices.end(),
                                        [](const EnergyDevice& d) { return d.measured; });
  if (any_measured) {
    out +=
        "| device | source | domains | idle W | update period | board limit W |\n"
        "|---|---|---|---:|---:|---:|\n";
    for (const EnergyDevice& d : energy.devices) {
      if (!d.measured) continue;
      out += fmt::format("| {} | {} | {} | {:.1f} | {} | {} |\n", device_name(d.device), d.source,
                         escape(fmt::format("{}", fmt::join(d.domains, ", "))), d.idle_watts,
                         seconds(d.update_period_s),
                         d.limit_watts ? fmt::format("{:.0f}", *d.limit_watts) : "—");
    }
    out += "\n";
  }
  bool listed = false;
  for (const EnergyDevice& d : energy.devices) {
    if (d.measured) continue;
    out += fmt::format("- {}: energy not read: {}\n", device_name(d.device),
                       escape(d.unavailable_reason));
    listed = true;
  }
  if (listed) out += "\n";
  if (!energy.compares()) {
    out += "No GPU/CPU energy ratio: " + escape(energy.no_ratio_reason) + ".\n\n";
  }
}

void skipped_table(std::string& out, const std::vector<SkippedGroup>& groups) {
  if (groups.empty()) return;
  out += "## Skipped\n\n| implementation | N | reason |\n|---|---|---|\n";
  for (const SkippedGroup& g : groups) {
    out += fmt::format("| {} | {} | {} |\n", g.implementation, fmt::join(g.sizes, ", "),
                       escape(g.reason));
  }
  out += "\n";
}

std::string derived_cell(const std::optional<double>& figure, const char* format,
                         double scale = 1) {
  if (!figure) return "—";
  return fmt::format(fmt::runtime(format), *figure * scale);
}

// "disassembly of the hot loop (avx512f loop, 512-bit, in <signature>)" -> "disassembly of the hot
// loop (avx512f loop)"; results.json keeps the whole text.
std::string short_source(const std::string& source) {
  const auto paren = source.find(" (");
  const auto comma = source.find(',', paren == std::string::npos ? 0 : paren);
  if (paren == std::string::npos || comma == std::string::npos) return source;
  return source.substr(0, comma) + ")";
}

// A fraction of a ceiling or bound; above 100% it cannot be a fact (the ceiling read low, or the
// timing is disturbed), so it is marked and explained under the table.
std::string fraction_cell(const std::optional<double>& fraction) {
  if (!fraction) return "—";
  if (*fraction <= 1.0) return fmt::format("{:.0f}%", 100 * *fraction);
  return fmt::format("{:.0f}% ⚠", 100 * *fraction);
}

// Hardware counters and fractions of peak (FAIRNESS rules 4 and 6), in two narrow tables.
void counters_tables(std::string& out, const ResultsDocument& doc,
                     const std::vector<PeakFractions>& fractions) {
  if (fractions.empty()) return;
  out +=
      "## Counters and fraction of peak\n\n"
      "Counted flops: FADD + FMUL + 2·FFMA (CUPTI on the GPU; the compiled hot loop on the CPU). "
      "Fractions are of the ceilings measured on this machine (below); the instruction bound is "
      "each kernel's own instructions per interaction over the measured issue rate; the mix "
      "ceiling is the measured rate of the float32 interaction's 12 FP32 instructions and rsqrt "
      "alone (gpu.fp32_interaction_mix).\n\n";
  if (!doc.settings.counter_sizes.empty()) {
    out += fmt::format(
        "Read at N = {} (`--counters-at` chooses the sizes, `--counters-at all` every size).\n\n",
        fmt::join(doc.settings.counter_sizes, ", "));
  }
  out +=
      "| implementation | N | source | counted flops / interaction | GFLOP/s counted | of measured "
      "peak |\n|---|---:|---|---:|---:|---:|\n";
  bool above_one = false;
  for (const PeakFractions& f : fractions) {
    if (!f.unavailable_reason.empty()) {
      out += fmt::format("| {} | {} | counters unavailable: {} | | | |\n", f.implementation, f.n,
                         escape(f.unavailable_reason));
      continue;
    }
    above_one = above_one || f.above_one();
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", f.implementation, f.n,
                       short_source(f.counter_source),
                       derived_cell(f.counted_flops_per_interaction, "{:.2f}"),
                       derived_cell(f.gflops_counted, "{:.4g}"), fraction_cell(f.of_measured_peak));
  }
  out +=
      "\n| implementation | N | instructions / interaction | instruction-bound int/s | of own "
      "bound | of mix ceiling |\n|---|---:|---:|---:|---:|---:|\n";
  for (const PeakFractions& f : fractions) {
    if (!f.unavailable_reason.empty()) continue;
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", f.implementation, f.n,
                       derived_cell(f.instructions_per_interaction, "{:.3g}"),
                       derived_cell(f.instruction_bound_interactions_per_second, "{:.3g}"),
                       fraction_cell(f.of_own_bound), fraction_cell(f.of_interaction_mix_ceiling));
  }
  if (std::any_of(fractions.begin(), fractions.end(),
                  [](const PeakFractions& f) { return f.dram_bytes_per_second.has_value(); })) {
    out +=
        "\n| implementation | N | DRAM GB/s | flops / DRAM byte | occupancy |\n"
        "|---|---:|---:|---:|---:|\n";
    for (const PeakFractions& f : fractions) {
      if (!f.dram_bytes_per_second) continue;
      out += fmt::format("| {} | {} | {} | {} | {} |\n", f.implementation, f.n,
                         derived_cell(f.dram_bytes_per_second, "{:.3g}", 1e-9),
                         derived_cell(f.flops_per_dram_byte, "{:.3g}"),
                         derived_cell(f.achieved_occupancy, "{:.0f}%", 100));
    }
  }
  out += "\n";
  if (above_one) {
    out +=
        "⚠ A fraction above 100% is not a result: no kernel runs faster than its ceiling. The "
        "ceiling it divides by read low";
    if (doc.ceilings && !doc.ceilings->warnings.empty()) {
      out += fmt::format(", as the ceilings' own warnings say ({})",
                         escape(fmt::format("{}", fmt::join(doc.ceilings->warnings, "; "))));
    } else {
      out +=
          " (measured while the machine was busy, or on a core the kernel did not share with "
          "others); measure the ceilings again with `nbody-fair peaks --remeasure` on a quiet "
          "machine";
    }
    out += ".\n\n";
  }
}

// Where the run's time went: each phase summed over the measurements, with the run's own parts.
void time_table(std::string& out, const ResultsDocument& doc) {
  std::map<std::string, double> phases;
  for (const ResultRecord& r : doc.results) {
    for (const auto& [phase, seconds] : r.phase_seconds) phases[phase] += seconds;
  }
  if (phases.empty() && doc.phase_seconds.empty()) return;
  out += "## Where the time went\n\n| phase | seconds |\n|---|---:|\n";
  for (const auto& [phase, seconds] : doc.phase_seconds) {
    out += fmt::format("| {} (whole run) | {:.1f} |\n", phase, seconds);
  }
  for (const auto& [phase, seconds] : phases) {
    out += fmt::format("| {} (all measurements) | {:.1f} |\n", phase, seconds);
  }
  out += "\n";
}

// Microseconds to three digits (the analysis has zeroed rounding-level parts).
std::string micro(double s) {
  return fmt::format("{:.3g}", s * 1e6);
}

std::string percent_of(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "—";
}

void integration_table(std::string& out, const std::vector<IntegrationRow>& rows) {
  out +=
      "## Time per step\n\nMicroseconds per step by phase, on the simulation's own clock. On "
      "the host every step is timed by phase (force kernel; integration = kicks, drifts and "
      "layout copies). On the GPU a step is one kernel where the formulation fuses the "
      "leapfrog into its force kernel, else a CUDA graph (kick+drift, force, kick); for the "
      "first steps a graph of the force kernel alone is launched as often, integration is the "
      "step less that, and those shares are applied to the later steps' time; other = what "
      "neither covers (zero here). A tree formulation's force time includes its tree's build, "
      "shown in brackets. Diagnostics (state copied back; the potential summed in "
      "float64 on the GPU for GPU formulations, on the host for CPU ones) and snapshots on the "
      "wall clock, spread over all steps. Steps/s counts every cost.\n\n";
  // Energy columns where any simulation's device had its energy read.
  const bool energy = std::any_of(rows.begin(), rows.end(), [](const IntegrationRow& r) {
    return r.joules_per_step.has_value();
  });
  if (energy) {
    out +=
        "J / step: the energy its device's counters read over the whole simulation, per step "
        "(idle power accounted as under Energy); mean W over the same time.\n\n";
  }
  out += fmt::format(
      "| implementation | N | steps | steps/s | step µs | force µs | integration µs | other µs | "
      "diagnostics µs | snapshots µs | force share | max \\|ΔE/E\\| | divergence x, v |{}\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|{}\n",
      energy ? " J / step | mean W |" : "", energy ? "---:|---:|" : "");
  for (const IntegrationRow& r : rows) {
    if (r.status == Status::skipped) continue;
    const StepSplit& p = r.per_step;
    out += fmt::format(
        "| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2e} | {} |{}\n",
        r.implementation, r.status == Status::failed ? " (failed: " + escape(r.reason) + ")" : "",
        r.n, r.steps, si(r.steps_per_second), micro(p.step_s),
        p.tree_build_s > 0
            ? fmt::format("{} (tree build {})", micro(p.force_s), micro(p.tree_build_s))
            : micro(p.force_s),
        micro(p.integration_s), micro(p.other_s), micro(p.diagnostics_s), micro(p.snapshots_s),
        percent_of(p.force_s, r.application_step_s), r.max_relative_energy_error,
        r.divergence ? fmt::format("{:.2e}, {:.2e}", r.divergence->position, r.divergence->velocity)
                     : "—",
        energy ? fmt::format(" {} | {} |", r.joules_per_step ? joules(*r.joules_per_step) : "—",
                             r.mean_watts ? fmt::format("{:.0f}", *r.mean_watts) : "—")
               : std::string());
  }
  out += "\n";
}

void conservation_table(std::string& out, const std::vector<IntegrationRow>& rows) {
  out +=
      "## Conservation\n\nEach simulation's largest relative energy error against 1e-4, what a "
      "trustworthy integration keeps (25× the surveyed default runs' largest); where the float64 "
      "leapfrog of the same steps was followed, the error at its last step against 2 × its error "
      "+ 4u, what the precision may add; and the largest drift of total momentum over sqrt(M "
      "|W0|) against u √steps (docs/tolerances.md, \"Time integration\").\n\n"
      "| implementation | N | max \\|ΔE/E\\| (bound) | at the float64 leapfrog's last step "
      "(bound) | momentum drift (bound) | verdict | likely cause |\n"
      "|---|---:|---:|---:|---:|---|---|\n";
  for (const IntegrationRow& r : rows) {
    if (!r.conservation) continue;
    const ConservationCheck& c = *r.conservation;
    out += fmt::format(
        "| {} | {} | {:.2e} ({:.0e}) | {} | {} | {} | {} |\n", r.implementation, r.n,
        c.energy_error, c.energy_bound,
        c.end_energy_error ? fmt::format("{:.2e} ({:.2e})", *c.end_energy_error, c.end_energy_bound)
                           : std::string("—"),
        c.momentum_drift ? fmt::format("{:.2e} ({:.2e})", *c.momentum_drift, c.momentum_bound)
                         : std::string("—"),
        c.within() ? "within" : "**outside: not to be trusted**",
        c.within() ? std::string("—") : escape(c.likely_cause));
  }
  out += "\n";
}

void application_speedup_table(std::string& out, const std::vector<ApplicationSpeedup>& rows) {
  out +=
      "## Kernel speedup against application speedup\n\nFastest full-accuracy GPU against "
      "fastest full-accuracy CPU of the same precision, by whole step (diagnostics included): "
      "the force kernel's speedup, and what it becomes per application step.\n\n";
  if (rows.empty()) {
    out += "No N has both a CPU and a GPU simulation that finished.\n\n";
    return;
  }
  out +=
      "| precision | N | CPU | GPU | kernel speedup | application speedup |\n"
      "|---|---:|---|---|---:|---:|\n";
  for (const ApplicationSpeedup& r : rows) {
    out += fmt::format("| {} | {} | {} | {} | {:.3g}× | {:.3g}× |\n", to_string(r.precision), r.n,
                       r.cpu, r.gpu, r.kernel_speedup, r.application_speedup);
  }
  out += "\n";
}

void implementations_table(std::string& out, const ResultsDocument& doc) {
  out +=
      "## Implementations\n\n| name | device | layout | precision | accuracy class | pairs | "
      "threads | available | optimizations |\n|---|---|---|---|---|---|---:|---|---|\n";
  for (const ImplementationRecord& i : doc.implementations) {
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", i.name, to_string(i.device),
                    to_string(i.layout), to_string(i.precision), to_string(i.accuracy_class),
                    is_tree(i) ? fmt::format("tree at θ = {}, none credited", theta_text(i.theta))
                    : i.pairs == PairScheme::symmetric ? "N(N−1)/2 evaluated, N² credited"
                                                       : "N²",
                    i.threads, i.available ? "yes" : "no: " + escape(i.unavailable_reason),
                    escape(fmt::format("{}", fmt::join(i.optimizations, "; "))));
  }
}

// What every report opens with: who generated it, from which runs, and what it cannot compare.
// A run that cannot compare says so first; then the answer, each figure linking to its table.
void opening(std::string& out, const ResultsDocument& doc, const Analysis& analysis) {
  if (const std::string sides = sides_sentence(analysis.sides); !sides.empty()) {
    out += "**" + escape(sides) + "**\n\n";
  }
  if (const std::vector<AnswerSpan> answer = answer_paragraph(analysis.answer); !answer.empty()) {
    // The energy line continues the paragraph on a line of its own.
    const std::vector<AnswerSpan> energy = energy_answer_line(analysis.answer);
    out += linked(answer) + (energy.empty() ? "" : "\n" + linked(energy)) + "\n\n";
  }
  out += fmt::format("Generated {} by `{}`.\n\n", doc.generated_at,
                     escape(fmt::format("{}", fmt::join(doc.command_line, " "))));
  if (!doc.sides_from.empty()) {
    out += "**Two runs, one side each: " + escape(sides_from_sentence(doc.sides_from)) + ".**\n\n";
  }
}

std::string render_simulation_markdown(const ResultsDocument& doc, const Analysis& analysis) {
  std::string out = "# nbody-fair simulation report\n\n";
  opening(out, doc, analysis);
  if (const std::string wrong = conservation_sentence(analysis.integration); !wrong.empty()) {
    out += "**⚠ " + escape(wrong) + "**\n\n";
  }
  if (doc.interrupted) {
    out += "**This run was interrupted: the results below are what it had measured.**\n\n";
  }
  const RunSettings& s = doc.settings;
  out += fmt::format(
      "Kick-drift-kick leapfrog, dt = {}, {} steps, softening {}; initial condition {}{}; "
      "conservation checked {}; the float64 trajectory followed up to N = {}.\n\n",
      s.dt, s.steps, s.softening, s.initial_condition,
      s.ic_file.empty() ? fmt::format(", seed {}", s.seed) : " (" + escape(s.ic_file) + ")",
      s.diag_every > 0 ? fmt::format("every {} steps", s.diag_every) : "at the first and last step",
      s.divergence_up_to);
  if (const std::string decomposed = decomposition_sentence(s); !decomposed.empty()) {
    out += escape(decomposed) + "\n\n";
  }
  out +=
      "Charts of these figures (application and kernel speedup against N; at each N the relative "
      "energy error against time and the time per step by phase as stacked bars) are in "
      "report.html beside this file.\n\n";
  application_speedup_table(out, analysis.application_speedups);
  integration_table(out, analysis.integration);
  conservation_table(out, analysis.integration);
  if (!analysis.energy.devices.empty()) energy_section(out, analysis.energy);
  audit_section(out, analysis.audit);
  std::string skipped;
  for (const IntegrationRow& r : analysis.integration) {
    if (r.status == Status::skipped) {
      skipped += fmt::format("- {} at N = {}: {}\n", r.implementation, r.n, escape(r.reason));
    }
  }
  if (!skipped.empty()) out += "## Skipped\n\n" + skipped + "\n";
  return out;
}

}  // namespace

std::string render_markdown(const ResultsDocument& doc, const Analysis& analysis) {
  std::string out = "# nbody-fair report\n\n";
  if (kind_of(doc.settings) == DocumentKind::simulate) {
    return render_simulation_markdown(doc, analysis);
  }
  const RunSummary& summary = analysis.summary;
  opening(out, doc, analysis);
  if (doc.interrupted) {
    out += "**This run was interrupted: the results below are what it had measured.**\n\n";
  } else if (!doc.complete) {
    out +=
        "**This run did not finish (it was stopped before its last measurement): the results "
        "below are what it had measured.**\n\n";
  }
  out += fmt::format(
      "{} measurements: {} ok, {} failed, {} skipped. Initial condition: {}, seed {}, "
      "softening {}; {} repetitions of at least {} s each after a discarded warm-up{}.\n\n",
      summary.measurements, summary.ok, summary.failed, summary.skipped,
      doc.settings.initial_condition, doc.settings.seed, doc.settings.softening,
      doc.settings.repetitions, doc.settings.min_time_s,
      doc.settings.warmup_s > 0
          ? fmt::format(" (the validation evaluation, followed by evaluations up to {} s where it "
                        "was shorter)",
                        doc.settings.warmup_s)
          : "");
  if (const std::string budget = budget_sentence(summary); !budget.empty()) {
    out += escape(budget) + "\n\n";
  }
  if (const std::string decomposed = decomposition_sentence(doc.settings); !decomposed.empty()) {
    out += escape(decomposed) + "\n\n";
  }
  audit_section(out, analysis.audit);
  if (kind_of(doc.settings) == DocumentKind::run) {
    headline_section(out, analysis);
    across_algorithms_section(out, analysis.algorithms, analysis.energy);
  }
  out +=
      "Charts of these figures (throughput against N, ratios, ladders, rooflines, accuracy "
      "against speed, repetitions) are in report.html beside this file.\n\n";
  ladders_section(out, analysis.ladders);
  tree_codes_section(out, analysis.algorithms, analysis.energy);
  timing_table(out, doc, false, analysis.energy);
  trees_elsewhere(out, analysis.algorithms);
  if (std::any_of(doc.implementations.begin(), doc.implementations.end(),
                  [](const ImplementationRecord& i) {
                    return i.accuracy_class == AccuracyClass::approximate;
                  })) {
    timing_table(out, doc, true, analysis.energy);
  }
  accuracy_table(out, analysis.accuracy);
  end_to_end_table(out, analysis.end_to_end);
  energy_section(out, analysis.energy);
  skipped_table(out, analysis.skipped);
  counters_tables(out, doc, analysis.peak_fractions);
  time_table(out, doc);
  if (doc.ceilings) out += render_ceilings_table(doc.ceilings) + "\n";

  implementations_table(out, doc);

  const MachineRecord& m = doc.machine;
  out += fmt::format(
      "\n## Machine and build\n\n- CPU: {} ({} physical cores, {} logical CPUs; ISA: {})\n",
      m.cpu_model, m.physical_cores, m.logical_cpus, fmt::join(m.isa_features, ", "));
  out += fmt::format("- Memory: {:.1f} GiB; OS: {}; host: {}\n",
                     static_cast<double>(m.memory_bytes) / (1u << 30), m.os, m.hostname);
  if (m.gpus.empty()) out += "- GPU: none found\n";
  for (const GpuDescription& g : m.gpus) {
    out += fmt::format(
        "- GPU {}: {} (compute capability {}, {} SMs, SM clock {} MHz, {:.1f} GiB, driver {}, "
        "runtime {})\n",
        g.ordinal, g.name, g.compute_capability, g.sm_count, g.sm_clock_khz / 1000,
        static_cast<double>(g.memory_bytes) / (1u << 30), g.driver_version, g.runtime_version);
  }
  const BuildRecord& b = doc.build;
  out += fmt::format("- nbody-fair {} ({}); C++: {} `{}`; CUDA: {} `{}` (architectures {})\n",
                     b.tool_version, b.build_type, b.cxx_compiler, escape(b.cxx_flags),
                     b.cuda_compiler.empty() ? "not built" : b.cuda_compiler, escape(b.cuda_flags),
                     b.cuda_architectures);
  out += "- Libraries:";
  for (const auto& [name, version] : b.libraries) out += fmt::format(" {} {};", name, version);
  out +=
      "\n\n## Inputs\n\n| initial condition | N | seed | hash (float64) | hash (float32) "
      "|\n|---|---:|---:|---|---|\n";
  for (const InputRecord& in : doc.inputs) {
    out += fmt::format("| {} | {} | {} | `{}` | `{}` |\n", in.initial_condition, in.n, in.seed,
                       in.hash_f64, in.hash_f32);
  }
  return out;
}

std::string render_summary(const ResultsDocument& doc, const Analysis& analysis) {
  std::string out;
  if (const std::string sides = sides_sentence(analysis.sides); !sides.empty()) {
    out += sides + "\n\n";
  }
  if (const std::string answer = plain_text(answer_paragraph(analysis.answer)); !answer.empty()) {
    const std::string energy = plain_text(energy_answer_line(analysis.answer));
    out += answer + (energy.empty() ? "" : "\n" + energy) + "\n\n";
  }
  if (kind_of(doc.settings) == DocumentKind::simulate) {
    if (const std::string wrong = conservation_sentence(analysis.integration); !wrong.empty()) {
      out += "⚠ " + wrong + "\n\n";
    }
    application_speedup_table(out, analysis.application_speedups);
    integration_table(out, analysis.integration);
    out += fmt::format("Fairness audit: {}.\n\n", analysis.audit.verdict);
    return out;
  }
  if (!doc.sides_from.empty()) {
    out += "Two runs, one side each: " + sides_from_sentence(doc.sides_from) + ".\n\n";
  }
  if (const std::string budget = budget_sentence(analysis.summary); !budget.empty()) {
    out += budget + "\n\n";
  }
  out += fmt::format("Fairness audit: {}.\n\n", analysis.audit.verdict);
  headline_section(out, analysis);
  across_algorithms_section(out, analysis.algorithms, analysis.energy);
  return out;
}

std::string render_summary(const ResultsDocument& document) {
  return render_summary(document, analyze(document));
}

void write_markdown(const ResultsDocument& document, const Analysis& analysis,
                    const std::filesystem::path& directory) {
  write_file_atomically(directory / "report.md", render_markdown(document, analysis));
}

}  // namespace nbody::reports
