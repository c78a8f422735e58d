#include "nbody/reports/comparison_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "nbody/files.hpp"
#include "nbody/reports/html_report.hpp"

namespace nbody::reports {
namespace {

// The cells of one row, plain text; each printer escapes them for its format.
struct RowCells {
  std::vector<std::string> cells;
  bool bad = false;    // slower, or no longer passing
  bool good = false;   // faster
  bool maybe = false;  // possibly slower or faster
};

const char* const kHeader[] = {"verdict",
                               "implementation",
                               "N",
                               "initial condition",
                               "median NEW/BASE",
                               "fastest NEW/BASE",
                               "fastest, machine shift removed",
                               "int/s NEW/BASE",
                               "p (U test)",
                               "end-to-end NEW/BASE",
                               "rel. L2 BASE → NEW",
                               "accuracy",
                               "notes"};

std::string ratio(const std::optional<double>& value) {
  return value ? fmt::format("{:.3f}×", *value) : "—";
}

std::string passed(const std::optional<bool>& value) {
  return value ? (*value ? "pass" : "FAIL") : "—";
}

RowCells cells_of(const ComparedRow& row) {
  RowCells out;
  out.bad = row.verdict == Verdict::slower || row.verdict == Verdict::accuracy_regression ||
            row.verdict == Verdict::now_failing;
  out.good = row.verdict == Verdict::faster;
  out.maybe = row.verdict == Verdict::possibly_slower || row.verdict == Verdict::possibly_faster;
  std::string p = "—";
  if (row.test) p = fmt::format("{}{:.3g}", row.test->exact ? "" : "≈ ", row.test->p_value);
  std::string l2 = "—";
  if (row.base_relative_l2 || row.new_relative_l2) {
    const auto e = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.2e}", *v) : std::string("—");
    };
    l2 = e(row.base_relative_l2) + " → " + e(row.new_relative_l2);
  }
  out.cells = {std::string(to_string(row.verdict)),
               row.implementation,
               std::to_string(row.n),
               row.initial_condition,
               ratio(row.time_ratio),
               ratio(row.fastest_ratio),
               ratio(row.corrected_ratio),
               ratio(row.rate_ratio),
               p,
               ratio(row.end_to_end_ratio),
               l2,
               passed(row.base_passed) + " → " + passed(row.new_passed),
               fmt::format("{}", fmt::join(row.notes, "; "))};
  return out;
}

std::string unmatched_text(const UnmatchedRow& row) {
  return fmt::format("{} at N = {} ({}): {}", row.implementation, row.n, row.initial_condition,
                     to_string(row.status));
}

// The summary line and the rows that make the exit code 1, named one by one.
struct Summary {
  std::string counts;
  std::vector<std::string> regressions;
  std::vector<std::string> possible;  // possibly slower or faster: said, not failed
  std::string formulations;           // those slower or faster as a whole
  std::vector<std::string> energy;    // joules per evaluation moved beyond the threshold
  std::size_t energy_compared = 0;    // rows with both energies resolved
};

Summary summarize(const Comparison& c) {
  constexpr int kVerdicts = static_cast<int>(Verdict::not_compared) + 1;
  std::size_t counts[kVerdicts] = {};
  Summary summary;
  for (const MachineShift& shift : c.shifts) {
    if (!shift.beyond_drift || shift.time_ratio <= 1) continue;
    const char* device = shift.device == DeviceKind::cpu ? "CPU" : "GPU";
    summary.regressions.push_back(fmt::format(
        "the whole {0}: NEW's {0} ran {1:.1f}% slower across the board (the median of {2} "
        "measurements of {3} formulations), beyond the {4:.1f}% it drifts ({5}): the machine or "
        "the build changed",
        device, 100 * (shift.time_ratio - 1), shift.measurements, shift.formulations,
        100 * (shift.drift_bound - 1), shift.drift_source));
  }
  for (const ComparedRow& row : c.rows) {
    ++counts[static_cast<int>(row.verdict)];
    if (row.energy_ratio) ++summary.energy_compared;
    if (row.energy_changed) {
      summary.energy.push_back(
          fmt::format("{} at N = {} ({}): {:.3g} J → {:.3g} J per evaluation "
                      "({:.3f}×)",
                      row.implementation, row.n, row.initial_condition, *row.base_joules,
                      *row.new_joules, *row.energy_ratio));
    }
    const std::string corrected =
        row.corrected_ratio
            ? fmt::format(" ({:.3f}× with the machine's shift removed)", *row.corrected_ratio)
            : "";
    if (row.verdict == Verdict::slower) {
      summary.regressions.push_back(fmt::format(
          "{} at N = {} ({}): {:.3f}× the fastest time{}, p = {:.3g}", row.implementation, row.n,
          row.initial_condition, *row.fastest_ratio, corrected, row.test->p_value));
    } else if (row.verdict == Verdict::possibly_slower || row.verdict == Verdict::possibly_faster) {
      summary.possible.push_back(
          fmt::format("{} at N = {} ({}): {}, {:.3f}× the fastest time{}, p = {:.3g}",
                      row.implementation, row.n, row.initial_condition, to_string(row.verdict),
                      *row.fastest_ratio, corrected, row.test->p_value));
    } else if (row.verdict == Verdict::accuracy_regression || row.verdict == Verdict::now_failing) {
      const std::string l2 = row.base_relative_l2 && row.new_relative_l2
                                 ? fmt::format(" (rel. L2 {:.2e} → {:.2e})", *row.base_relative_l2,
                                               *row.new_relative_l2)
                                 : "";
      summary.regressions.push_back(fmt::format("{} at N = {} ({}): {}{}", row.implementation,
                                                row.n, row.initial_condition,
                                                to_string(row.verdict), l2));
    }
  }
  std::vector<std::string> changed[2];  // slower, faster
  for (const FormulationChange& f : c.formulations) {
    if (f.verdict != Verdict::slower && f.verdict != Verdict::faster) continue;
    changed[f.verdict == Verdict::slower ? 0 : 1].push_back(fmt::format(
        "{} ({} of {} measurements, median {:.3f}×)", f.implementation,
        f.verdict == Verdict::slower ? f.slower : f.faster, f.measurements, f.median_ratio));
  }
  for (int k = 0; k < 2; ++k) {
    if (changed[k].empty()) continue;
    summary.formulations +=
        fmt::format("{}{} formulations: {}.", summary.formulations.empty() ? "" : " ",
                    k == 0 ? "Slower" : "Faster", fmt::join(changed[k], "; "));
  }
  std::vector<std::string> parts;
  for (int v = 0; v < kVerdicts; ++v) {
    if (counts[v] > 0) parts.push_back(fmt::format("{} {}", counts[v], to_string(Verdict(v))));
  }
  summary.counts = fmt::format("{} measurements in both: {}.", c.rows.size(),
                               parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", ")));
  return summary;
}

std::string method(const Comparison& c) {
  const double t = c.settings.threshold;
  const std::string gate =
      c.repetitions_gate()
          ? fmt::format("p < {} (one run on a side: its repetitions are all the evidence) and ",
                        c.settings.alpha)
          : "";
  return fmt::format(
      "Median and fastest: NEW / BASE kernel medians and fastest repetitions (above 1 is "
      "slower); the verdicts stand on the fastest, as other processes only ever add time; machine "
      "shift removed: the fastest ratio over the common shift of its device (above); int/s: the "
      "interaction rates' ratio (above 1 is faster). p: the two-sided Mann-Whitney U test on the "
      "repetitions' times, NEW's with the machine's shift removed (exact permutation "
      "distribution, ties at their midranks, up to 50 repetitions in all; ≈ marks the normal "
      "approximation){}. A measurement is slower when {}its ratio, shift removed, is above "
      "{:.4g}, faster when below 1/{:.4g} = {:.4g}, so that swapping BASE and NEW swaps the two; "
      "a formulation is slower (or faster) when at least {:.0f}% of its measurements are, and a "
      "measurement slower alone in its formulation is only possibly slower. Possibly slower or "
      "faster also: {}beyond {:.4g} (or 1/{:.4g}); said, not failed. The exit code is 1 when a "
      "formulation is slower, a measurement passed in BASE and fails in NEW (its accuracy "
      "bound, or an error), or a whole device is slower beyond the machine's drift.",
      c.repetitions_gate() ? ""
                           : "; shown, not deciding: with several runs a side the runs are the "
                             "replication, and repetitions pooled from different runs are not "
                             "exchangeable samples",
      gate, 1 + t, 1 + t, 1 / (1 + t), 100 * kFormulationAgreement, gate, 1 + t / 2, 1 + t / 2);
}

// How many runs each side combined, and how far one measurement strays between runs.
std::string sides_sentence(const Comparison& c) {
  const std::string selection = c.settings.implementation_pattern.empty()
                                    ? ""
                                    : fmt::format(
                                          " Only the implementations that --impl '{}' finds are "
                                          "judged; each device's shift is "
                                          "measured on all its measurements.",
                                          c.settings.implementation_pattern);
  if (c.base_runs == 1 && c.new_runs == 1) {
    return "One run a side: a measurement that strays from one run to the next cannot be told "
           "from a change (give each side a folder of several runs)." +
           selection;
  }
  const auto side = [](const char* name, std::size_t runs, double scatter) {
    return runs == 1 ? fmt::format("{}: one run", name)
                     : fmt::format(
                           "{}: the fastest of {} runs (between them one measurement "
                           "strays ±{:.1f}%, each run's own shift removed)",
                           name, runs, 100 * std::expm1(scatter));
  };
  return fmt::format("{}; {}.{}", side("BASE", c.base_runs, c.base_scatter),
                     side("NEW", c.new_runs, c.new_scatter), selection);
}

std::string percent_change(double time_ratio) {
  return fmt::format("{:.1f}% {}", 100 * std::abs(time_ratio - 1),
                     time_ratio >= 1 ? "slower" : "faster");
}

// One sentence per device on how far the machine itself moved between the runs.
std::vector<std::string> shift_sentences(const Comparison& c) {
  std::vector<std::string> sentences;
  for (const MachineShift& shift : c.shifts) {
    const std::string device = shift.device == DeviceKind::cpu ? "CPU" : "GPU";
    const std::string control =
        shift.ceiling_ratio ? fmt::format("the float32 FMA ceiling each run measured ran {}",
                                          percent_change(*shift.ceiling_ratio))
                            : "both runs read their ceilings from one cache (no control measured)";
    const std::string basis = fmt::format(
        "the median of {} measurements of {} formulations; single measurements stray ±{:.1f}% "
        "around it",
        shift.measurements, shift.formulations, 100 * std::expm1(shift.spread));
    if (shift.applied) {
      sentences.push_back(fmt::format(
          "NEW's {} ran {} across the board ({}); {}. That is within the {:.1f}% the machine "
          "drifts ({}), so the verdicts on its rows use each ratio with that shift removed.",
          device, percent_change(shift.time_ratio), basis, control, 100 * (shift.drift_bound - 1),
          shift.drift_source));
    } else {
      sentences.push_back(
          fmt::format("NEW's {} measurements moved {} together ({}); not removed: {}.", device,
                      percent_change(shift.time_ratio), basis, shift.why_not_applied));
    }
  }
  return sentences;
}

// Energy changes are listed and never fail: a board's idle power and fans move its joules between
// runs more than anything a kernel does to its time.
std::string energy_paragraph(const Summary& summary) {
  if (summary.energy_compared == 0) {
    return "Energy: no measurement has resolved energy in both runs, so none is compared.";
  }
  if (summary.energy.empty()) {
    return fmt::format(
        "Energy (listed, never failed): none of the {} measurements with energy in both runs "
        "moved beyond the threshold.",
        summary.energy_compared);
  }
  return fmt::format(
      "Energy (listed, never failed): {} of the {} measurements with energy in both runs moved "
      "beyond the threshold:",
      summary.energy.size(), summary.energy_compared);
}

std::string md_escape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

constexpr const char* kStyle =
    "body{font:15px/1.45 system-ui,sans-serif;margin:1rem auto;padding:0 1rem;max-width:90rem;"
    "color:#222}"
    ".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid #ddd}"
    "table{border-collapse:collapse;font-size:.9rem;min-width:100%}"
    "th,td{border-bottom:1px solid #ddd;padding:.35rem .6rem;text-align:left;white-space:nowrap;"
    "vertical-align:top}"
    "th{background:#f4f4f4}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "td.notes{white-space:normal;color:#555;padding-top:0}"
    "tr.has-notes td{border-bottom:none}"
    "tr.bad{background:#fde4e1}tr.bad td:first-child{font-weight:bold;color:#a40000}"
    "tr.good{background:#e6f5e6}tr.maybe{background:#fff6d6}"
    "code{word-break:break-all}"
    "@media (max-width:40rem){body{padding:0 .5rem;font-size:14px}}";

}  // namespace

std::string render_comparison_markdown(const Comparison& c, const ComparedSources& sources) {
  const Summary summary = summarize(c);
  std::string out = "# nbody-fair compare\n\n";
  out += fmt::format("BASE: `{}`  \nNEW: `{}`\n\n", sources.base, sources.now);
  out += summary.counts + "\n\n";
  if (!summary.formulations.empty()) out += summary.formulations + "\n\n";
  if (summary.regressions.empty()) {
    out += "No regression.\n\n";
  } else {
    out += "**Regressions:**\n\n";
    for (const std::string& line : summary.regressions) out += "- " + line + "\n";
    out += "\n";
  }
  if (!summary.possible.empty()) {
    out += "Possible changes (not failed):\n\n";
    for (const std::string& line : summary.possible) out += "- " + line + "\n";
    out += "\n";
  }
  out += energy_paragraph(summary) + "\n\n";
  for (const std::string& line : summary.energy) out += "- " + md_escape(line) + "\n";
  if (!summary.energy.empty()) out += "\n";
  for (const std::string& flag : c.flags) out += "⚠ " + md_escape(flag) + "\n\n";
  out += sides_sentence(c) + "\n\n";
  for (const std::string& sentence : shift_sentences(c)) out += sentence + "\n\n";
  out += method(c) + "\n\n";
  out += "|";
  for (const char* heading : kHeader) out += fmt::format(" {} |", heading);
  out += "\n|---|---|---:|---|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const ComparedRow& row : c.rows) {
    const RowCells cells = cells_of(row);
    out += "|";
    for (std::size_t i = 0; i < cells.cells.size(); ++i) {
      const std::string text = md_escape(cells.cells[i]);
      out += i == 0 && cells.bad ? fmt::format(" **{}** |", text) : fmt::format(" {} |", text);
    }
    out += "\n";
  }
  out += "\n";
  for (const auto& [title, rows] :
       {std::pair{"Only in BASE", &c.only_in_base}, std::pair{"Only in NEW", &c.only_in_new}}) {
    if (rows->empty()) continue;
    out += fmt::format("## {}\n\n", title);
    for (const UnmatchedRow& row : *rows) out += "- " + md_escape(unmatched_text(row)) + "\n";
    out += "\n";
  }
  return out;
}

std::string render_comparison_html(const Comparison& c, const ComparedSources& sources) {
  const Summary summary = summarize(c);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>nbody-fair compare</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>nbody-fair compare</h1>\n";
  out += fmt::format("<p>BASE: <code>{}</code><br>NEW: <code>{}</code></p>\n",
                     html_escape(sources.base), html_escape(sources.now));
  out += fmt::format("<p>{}</p>\n", html_escape(summary.counts));
  if (!summary.formulations.empty()) {
    out += fmt::format("<p><strong>{}</strong></p>\n", html_escape(summary.formulations));
  }
  if (summary.regressions.empty()) {
    out += "<p>No regression.</p>\n";
  } else {
    out += "<p><strong>Regressions:</strong></p>\n<ul>\n";
    for (const std::string& line : summary.regressions) {
      out += fmt::format("<li>{}</li>\n", html_escape(line));
    }
    out += "</ul>\n";
  }
  if (!summary.possible.empty()) {
    out += "<p>Possible changes (not failed):</p>\n<ul>\n";
    for (const std::string& line : summary.possible) {
      out += fmt::format("<li>{}</li>\n", html_escape(line));
    }
    out += "</ul>\n";
  }
  out += fmt::format("<p>{}</p>\n", html_escape(energy_paragraph(summary)));
  if (!summary.energy.empty()) {
    out += "<ul>\n";
    for (const std::string& line : summary.energy) {
      out += fmt::format("<li>{}</li>\n", html_escape(line));
    }
    out += "</ul>\n";
  }
  for (const std::string& flag : c.flags) out += fmt::format("<p>⚠ {}</p>\n", html_escape(flag));
  out += fmt::format("<p>{}</p>\n", html_escape(sides_sentence(c)));
  for (const std::string& sentence : shift_sentences(c)) {
    out += fmt::format("<p>{}</p>\n", html_escape(sentence));
  }
  out += fmt::format("<p>{}</p>\n", html_escape(method(c)));
  // The notes go on a line of their own under their row, across the table: as a last column
  // they were squeezed to a few letters a line beside ten columns of figures.
  const std::size_t columns = std::size(kHeader) - 1;
  out += "<div class=\"scroll\">\n<table>\n<thead><tr>";
  for (std::size_t i = 0; i < columns; ++i)
    out += fmt::format("<th>{}</th>", html_escape(kHeader[i]));
  out += "</tr></thead>\n<tbody>\n";
  for (const ComparedRow& row : c.rows) {
    const RowCells cells = cells_of(row);
    const std::string& notes = cells.cells.back();
    const std::string tone = cells.bad ? "bad" : cells.good ? "good" : cells.maybe ? "maybe" : "";
    out += fmt::format("<tr class=\"{}{}\">", tone, notes.empty() ? "" : " has-notes");
    for (std::size_t i = 0; i < columns; ++i) {
      const char* cls = i == 2 || (i >= 4 && i <= 8) ? " class=\"num\"" : "";
      out += fmt::format("<td{}>{}</td>", cls, html_escape(cells.cells[i]));
    }
    out += "</tr>\n";
    if (!notes.empty()) {
      out +=
          fmt::format("<tr class=\"{}\"><td></td><td class=\"notes\" colspan=\"{}\">{}</td></tr>\n",
                      tone, columns - 1, html_escape(notes));
    }
  }
  out += "</tbody>\n</table>\n</div>\n";
  for (const auto& [title, rows] :
       {std::pair{"Only in BASE", &c.only_in_base}, std::pair{"Only in NEW", &c.only_in_new}}) {
    if (rows->empty()) continue;
    out += fmt::format("<h2>{}</h2>\n<ul>\n", title);
    for (const UnmatchedRow& row : *rows) {
      out += fmt::format("<li>{}</li>\n", html_escape(unmatched_text(row)));
    }
    out += "</ul>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

std::vector<std::filesystem::path> write_comparison_files(const Comparison& comparison,
                                                          const ComparedSources& sources,
                                                          const std::filesystem::path& directory) {
  const std::vector<std::filesystem::path> files = {directory / "compare.md",
                                                    directory / "compare.html"};
  write_file_atomically(files[0], render_comparison_markdown(comparison, sources));
  write_file_atomically(files[1], render_comparison_html(comparison, sources));
  return files;
}

}  // namespace nbody::reports
