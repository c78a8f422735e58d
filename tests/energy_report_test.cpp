// What report.md and results.csv print of energy (FAIRNESS.md rule 10), on the hand-made run of
// tests/data/results-schema-10-energy-hand-made.json (energy on both sides): the energy line of
// the answer, the energy ratios beside the speed ratios, each measurement's joules, the Energy
// section, and what a run without the CPU's energy prints instead.
#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "energy_documents.hpp"

#include "nbody/reports/analysis.hpp"
#include "nbody/reports/csv_report.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "nbody/results.hpp"
#include "simulation_document.hpp"

namespace nbody::reports {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The first line of `text` after `from` that starts with `prefix`, or empty.
std::string line_starting(const std::string& text, const std::string& prefix,
                          const std::string& from = "") {
  std::size_t at = from.empty() ? 0 : text.find(from);
  if (at == std::string::npos) return {};
  at = text.find("\n" + prefix, at);
  if (at == std::string::npos) return {};
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// The section of report.md under `heading`, up to the next.
std::string section(const std::string& markdown, const std::string& heading) {
  const std::size_t at = markdown.find("## " + heading + "\n");
  if (at == std::string::npos) return {};
  return markdown.substr(at, markdown.find("\n## ", at + 1) - at);
}

std::string ratio_cell(const RateRatio& r) {
  return fmt::format("{:.3g}× ({:.3g}–{:.3g})", r.value, r.low, r.high);
}

ResultRecord& record(ResultsDocument& doc, const std::string& name, std::size_t n) {
  const auto it = std::find_if(doc.results.begin(), doc.results.end(), [&](const ResultRecord& r) {
    return r.implementation == name && r.n == n;
  });
  if (it == doc.results.end()) throw std::runtime_error("no " + name);
  return *it;
}

// Splits RFC 4180 text without quoted line breaks into rows of fields.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find("\r\n", start);
    std::vector<std::string> row(1);
    bool quoted = false;
    for (std::size_t i = start; i < end; ++i) {
      if (text[i] == '"') {
        quoted = !quoted;
      } else if (text[i] == ',' && !quoted) {
        row.emplace_back();
      } else {
        row.back() += text[i];
      }
    }
    rows.push_back(row);
    start = end + 2;
  }
  return rows;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return static_cast<std::size_t>(it - header.begin());
}

// The answer paragraph gains one line on energy; the headline and the equal-accuracy table an
// energy ratio beside each speed ratio, with its interval.
TEST(EnergyReport, RatioColumnsAndTheAnswersLineHoldTheAnalysisRatios) {
  const ResultsDocument doc = energy_run();
  const Analysis a = analyze(doc);
  ASSERT_TRUE(a.energy.compares()) << a.energy.no_ratio_reason;
  const std::string md = render_markdown(doc, a);
  const std::string opening = md.substr(0, md.find("Generated "));
  EXPECT_TRUE(has(opening, "\nBy energy, the best GPU used [")) << opening;
  EXPECT_TRUE(has(opening, "idle power included on both sides.")) << opening;

  const std::string headline = section(md, "Headline: best against best, naive against naive");
  EXPECT_TRUE(has(headline, "| GPU/CPU (best) | CPU J / GPU J (best) |")) << headline;
  EXPECT_TRUE(has(headline, "| GPU/CPU (naive) | CPU J / GPU J (naive) |")) << headline;
  std::size_t ratios = 0;
  for (const HeadlineRow& row : a.headline.rows) {
    const std::string line =
        line_starting(headline, fmt::format("| {} | {} |", to_string(row.precision), row.n));
    ASSERT_FALSE(line.empty()) << row.n;
    const std::string cell = row.best_energy_ratio ? ratio_cell(*row.best_energy_ratio) : "—";
    EXPECT_TRUE(line.ends_with(" | " + cell + " |")) << line;
    ratios += row.best_energy_ratio ? 1 : 0;
  }
  EXPECT_GT(ratios, 0u);

  const std::string across = section(md, "Across algorithms at equal accuracy");
  EXPECT_TRUE(has(across, "| GPU speed / CPU speed | CPU J / GPU J |")) << across;
  const auto bar = std::find_if(a.algorithms.rows.begin(), a.algorithms.rows.end(),
                                [](const BarHeadlineRow& r) { return r.energy_ratio.has_value(); });
  ASSERT_NE(bar, a.algorithms.rows.end());
  const std::string line = line_starting(
      across, fmt::format("| {} | {} |", a.algorithms.bars.at(bar->bar).label, bar->n));
  EXPECT_TRUE(line.ends_with(" | " + ratio_cell(*bar->energy_ratio) + " |")) << line;

  // The terminal's summary says the same, plain.
  EXPECT_TRUE(has(render_summary(doc, a), "\nBy energy, the best GPU used "))
      << render_summary(doc, a);
}

// Each measurement's time has its joules, work per joule and mean watts beside it; a figure that
// spanned too few counter updates is marked and footnoted, and forms no ratio.
TEST(EnergyReport, EachMeasurementHasItsJoulesAndAnUnresolvedOneIsMarked) {
  ResultsDocument doc = energy_run();
  EnergyStatistics& brief = *record(doc, "gpu.tuned", 1024).kernel->energy;
  brief.periods_spanned = 4;
  brief.resolved = false;
  EnergyStatistics& tree = *record(doc, "gpu.tree[theta=0.5]", 4096).kernel->energy;
  tree.periods_spanned = 4;
  tree.resolved = false;
  const Analysis a = analyze(doc);
  const std::string md = render_markdown(doc, a);

  const std::string results = section(md, "Results");
  EXPECT_TRUE(has(results, "| cv | J / evaluation | int/J | mean W |")) << results;
  EXPECT_TRUE(
      line_starting(results, "| cpu.tbb | 1024 | ok |").ends_with(" | 9.32 mJ | 112 M | 200 |"))
      << results;
  EXPECT_TRUE(
      line_starting(results, "| gpu.tuned | 1024 | ok |").ends_with(" | 2.98 mJ † | 352 M | 381 |"))
      << results;
  EXPECT_TRUE(has(results, "† spanned fewer than 5 counter updates")) << results;

  const std::string trees = section(md, "Tree codes");
  EXPECT_TRUE(has(trees, "| accuracy | J / evaluation | bodies/J | mean W |")) << trees;
  EXPECT_TRUE(has(line_starting(trees, "| gpu.tree[theta=0.5] | 0.5 | 4096 |"), " mJ † | "))
      << trees;
  EXPECT_TRUE(has(trees, "† spanned fewer than 5 counter updates")) << trees;

  // The unresolved GPU figure forms no ratio at its N.
  const std::string headline = section(md, "Headline: best against best, naive against naive");
  EXPECT_TRUE(line_starting(headline, "| f32 | 1024 |").ends_with(" | — |")) << headline;
}

// The Energy section: each device's meter, the idle accounting; the audit's rule 10.
TEST(EnergyReport, EnergySectionListsBothDevicesAndTheAuditHasRule10) {
  const ResultsDocument doc = energy_run();
  const std::string md = render_markdown(doc, analyze(doc));
  const std::string energy = section(md, "Energy");
  ASSERT_FALSE(energy.empty()) << md;
  EXPECT_TRUE(has(energy, "Idle power included on both sides; idle shown beside")) << energy;
  EXPECT_TRUE(has(energy, "| CPU | powercap | package-0, package-0 dram | 44.5 | 1 ms | — |"))
      << energy;
  EXPECT_TRUE(has(energy, "| GPU | nvml | GPU 0 board | 72.9 | 100 ms | 700 |")) << energy;
  EXPECT_FALSE(has(energy, "No GPU/CPU energy ratio")) << energy;
  EXPECT_TRUE(has(md, "| 10. Same energy accounting | kept |")) << md;
}

// Without the CPU's energy: the answer's line and the Energy section say why, and no energy ratio
// is printed anywhere.
TEST(EnergyReport, WithoutTheCpusEnergyItSaysWhyAndPrintsNoRatio) {
  const ResultsDocument doc = energy_run_without_cpu_energy();
  const Analysis a = analyze(doc);
  ASSERT_FALSE(a.energy.compares());
  const std::string md = render_markdown(doc, a);
  const std::string opening = md.substr(0, md.find("Generated "));
  EXPECT_TRUE(has(opening,
                  "\nEnergy: no GPU/CPU ratio — the CPU's energy is not read: no "
                  "/sys/class/powercap, and no perf power PMU.\n"))
      << opening;
  EXPECT_FALSE(has(opening, "By energy")) << opening;
  const std::string energy = section(md, "Energy");
  EXPECT_TRUE(has(energy, "- CPU: energy not read: no /sys/class/powercap, and no perf power PMU"))
      << energy;
  EXPECT_TRUE(has(energy, "| GPU | nvml | GPU 0 board |")) << energy;
  EXPECT_FALSE(has(energy, "| CPU |")) << energy;
  EXPECT_TRUE(has(energy, "No GPU/CPU energy ratio: the CPU's energy is not read")) << energy;

  for (const char* heading : {"Headline: best against best, naive against naive",
                              "Across algorithms at equal accuracy"}) {
    const std::string table = section(md, heading);
    EXPECT_TRUE(has(table, "CPU J / GPU J: no energy ratio — the CPU's energy is not read"))
        << table;
    std::size_t rows = 0;
    for (std::size_t at = table.find("\n| "); at != std::string::npos;
         at = table.find("\n| ", at + 1)) {
      const std::string row = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
      if (!std::isdigit(static_cast<unsigned char>(row[row.find(" | ") + 3]))) continue;
      EXPECT_TRUE(row.ends_with(" | — |")) << row;  // the energy ratio's cell
      ++rows;
    }
    EXPECT_GT(rows, 0u) << table;
  }
  // The CPU's measurements have no joules; the GPU's keep theirs.
  const std::string results = section(md, "Results");
  EXPECT_TRUE(line_starting(results, "| cpu.tbb | 1024 | ok |").ends_with(" | — | — | — |"))
      << results;
  EXPECT_TRUE(line_starting(results, "| gpu.tuned | 1024 | ok |").ends_with(" | 381 |")) << results;
}

// results.csv: each measurement's energy as read, empty cells where none was.
TEST(EnergyReport, CsvHasEachMeasurementsEnergyAndEmptyCellsWhereNone) {
  const ResultsDocument doc = energy_run();
  const auto rows = csv_rows(render_csv(doc, analyze(doc)));
  const std::vector<std::string>& header = rows.at(0);
  const auto row_of = [&](const std::string& name, const std::string& n) {
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const auto& row) { return row[0] == name && row[6] == n; });
    EXPECT_NE(it, rows.end()) << name;
    return it == rows.end() ? std::vector<std::string>(header.size()) : *it;
  };
  const auto cell = [&](const std::vector<std::string>& row, const char* name) {
    return row.at(column(header, name));
  };
  const std::vector<std::string> tbb = row_of("cpu.tbb", "1024");
  ResultsDocument copy = doc;
  const EnergyStatistics& tbb_energy = *record(copy, "cpu.tbb", 1024).kernel->energy;
  EXPECT_EQ(std::stod(cell(tbb, "energy_j_per_evaluation")), tbb_energy.per_evaluation_j);
  EXPECT_EQ(std::stod(cell(tbb, "energy_j_low")), tbb_energy.ci_low_j);
  EXPECT_EQ(std::stod(cell(tbb, "energy_j_high")), tbb_energy.ci_high_j);
  EXPECT_EQ(std::stod(cell(tbb, "mean_watts")), tbb_energy.mean_watts);
  EXPECT_NEAR(std::stod(cell(tbb, "interactions_per_joule")),
              1024.0 * 1024.0 / tbb_energy.per_evaluation_j, 1e-3);
  EXPECT_EQ(cell(tbb, "energy_resolved"), "true");

  const std::vector<std::string> tree = row_of("cpu.tree[theta=0.5]", "4096");
  EXPECT_NE(cell(tree, "energy_j_per_evaluation"), "");
  EXPECT_EQ(cell(tree, "interactions_per_joule"), "");  // a tree is credited none

  const std::vector<std::string> skipped = row_of("cpu.soa", "1024");
  for (const char* name : {"energy_j_per_evaluation", "energy_j_low", "energy_j_high", "mean_watts",
                           "interactions_per_joule", "energy_resolved"}) {
    EXPECT_EQ(cell(skipped, name), "") << name;
  }
}

// A simulation whose device's energy was read: joules per step in report.md and results.csv.
TEST(EnergyReport, SimulationHasItsJoulesPerStep) {
  ResultsDocument doc = testing::simulation_document();
  doc.simulations.at(0).energy = EnergyStatistics{
      .joules = 64, .seconds = 0.5, .evaluations = 128, .per_evaluation_j = 0.5, .mean_watts = 128};
  const Analysis a = analyze(doc);
  const std::string md = render_markdown(doc, a);
  const std::string steps = section(md, "Time per step");
  EXPECT_TRUE(has(steps, "| divergence x, v | J / step | mean W |")) << steps;
  EXPECT_TRUE(has(steps, " | 500 mJ | 128 |")) << steps;
  const auto rows = csv_rows(render_csv(doc, a));
  EXPECT_EQ(rows.at(1).at(column(rows.at(0), "joules_per_step")), "0.5");
  EXPECT_EQ(rows.at(3).at(column(rows.at(0), "joules_per_step")), "");
}

}  // namespace
}  // namespace nbody::reports
