// report.html's printer on hand-made data: strings cannot break out of the page's <script>
// elements, a page without Chart.js says why and still has its tables, a simulate run's page
// has its charts (speedups, energy error, step split) or one line saying why each is absent, and
// a run's energy (FAIRNESS rule 10) has its ratios, its cells and its chart, or says why not.
#include <gtest/gtest.h>

#include "energy_documents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "nbody/energy_meter.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "nbody/reports/html_report.hpp"
#include "simulation_document.hpp"
#include "tree_results.hpp"

namespace nbody::reports {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// A document and analysis whose strings try to end the script elements.
std::pair<ResultsDocument, Analysis> hostile() {
  ResultsDocument doc;
  doc.settings.command = "run";
  doc.machine.cpu_model = "CPU </script><script>alert(1)</script>";
  ImplementationRecord impl;
  impl.name = "cpu.</script>";
  doc.implementations.push_back(impl);
  Analysis a;
  a.audit.verdict = "verdict </script>";
  a.audit.rules.push_back({1, "Same problem", RuleVerdict::kept, "<!-- </script> -->"});
  RepetitionSamples samples;
  samples.implementation = "cpu.</script><script>x()</script>";
  samples.n = 1024;
  samples.interactions_per_second = {1e9, 1.1e9};
  samples.median = 1.05e9;
  a.repetitions.push_back(samples);
  return {doc, a};
}

TEST(HtmlReport, StringsCannotEndTheScriptElements) {
  const auto [doc, a] = hostile();
  const std::string page = render_html(doc, a, {"/* chart.js */ var s = \"</script>\";", ""});
  // Four scripts: the error recorder, the data island, Chart.js and the page's own.
  EXPECT_EQ(count(page, "<script"), 4u);
  EXPECT_EQ(count(page, "</script>"), 4u);
  EXPECT_EQ(count(page, "alert(1)"), 2u);  // escaped in the summary line and in the data island
  EXPECT_NE(page.find("\\u003c/script\\u003e"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;"), std::string::npos);
}

TEST(HtmlReport, WithoutChartJsTheTablesStayAndOneLineSaysWhy) {
  const auto [doc, a] = hostile();
  const std::string page = render_html(doc, a, {std::nullopt, "Chart.js was not found at /x"});
  EXPECT_NE(page.find("No charts: Chart.js was not found at /x"), std::string::npos);
  EXPECT_EQ(page.find("<canvas"), std::string::npos);
  EXPECT_NE(page.find("<table"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
}

TEST(HtmlReport, ChartsWithoutDataSayWhy) {
  const auto [doc, a] = hostile();
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  // Only the strip plot has data; the others are one line each under the grid.
  EXPECT_EQ(count(page, "<canvas"), 1u);
  EXPECT_NE(page.find("no chart, a ratio needs both a CPU and a GPU figure"), std::string::npos);
}

std::string simulation_page(const ResultsDocument& doc,
                            const ChartJsSource& chartjs = {"var Chart;", ""}) {
  return render_html(doc, analyze(doc), chartjs);
}

// The page's data island, parsed.
nlohmann::json report_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const std::size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  if (from == std::string::npos) return {};
  const std::size_t start = from + open.size();
  return nlohmann::json::parse(page.substr(start, page.find("</script>", start) - start));
}

// Trees beside all-pairs: the headline at each accuracy bar, the tree table, and at each N an
// accuracy-against-time chart whose data has every ok formulation, each device's front marked.
TEST(HtmlReport, TreesHaveTheirSectionsAndAnAccuracyAgainstTimeChartPerN) {
  const ResultsDocument doc = testing::all_pairs_and_trees();
  const std::string page = render_html(doc, analyze(doc), {"var Chart;", ""});
  EXPECT_NE(page.find("<h2>Across algorithms at equal accuracy</h2>"), std::string::npos);
  EXPECT_NE(page.find("<h3>Tree codes</h3>"), std::string::npos);
  EXPECT_NE(page.find("a tree overtakes all-pairs at N = 4096"), std::string::npos);
  EXPECT_EQ(count(page, "data-kind=\"accuracyTime\""), 4u);  // N = 1024, 4096, 16384, 65536
  const nlohmann::json data = report_data(page);
  ASSERT_EQ(data["accuracy_time"].size(), 4u);
  const nlohmann::json& largest = data["accuracy_time"].back();
  EXPECT_EQ(largest["n"], 65536);
  ASSERT_EQ(largest["devices"].size(), 2u);
  EXPECT_EQ(largest["devices"][0]["points"].size(), 2u);  // the CPU's two trees
  // No tree among the rates' series.
  for (const auto& group : data["throughput"]) {
    for (const auto& series : group["series"]) {
      EXPECT_EQ(series["name"].get<std::string>().find("tree"), std::string::npos);
    }
  }
  // Without a tree, none of it.
  const ResultsDocument one_algorithm = testing::simulation_document();
  EXPECT_EQ(simulation_page(one_algorithm).find("<h2>Across algorithms"), std::string::npos);
}

// Each tree's walk and build against their own bounds: two columns of the tree table, a line
// under it where some are missing, and the tree's point of its accuracy-against-time chart.
TEST(HtmlReport, TreesShowTheirWalkAndBuildAgainstTheirBounds) {
  ResultsDocument doc = testing::all_pairs_and_trees();
  testing::add_tree_bounds(doc);
  const Analysis a = analyze(doc);
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  EXPECT_NE(page.find("<th>walk: of its bound</th><th>build: of its bound</th>"),
            std::string::npos);
  EXPECT_EQ(count(page, "<small>bound "), 2 * a.algorithms.trees.size());
  EXPECT_EQ(page.find("fractions of bound missing"), std::string::npos);
  const nlohmann::json data = report_data(page);
  const nlohmann::json& cpu = data["accuracy_time"].back()["devices"][0]["points"];
  const auto tree = std::find_if(cpu.begin(), cpu.end(), [](const nlohmann::json& p) {
    return p["name"] == "cpu.tree[theta=0.2]";
  });
  ASSERT_NE(tree, cpu.end());
  EXPECT_DOUBLE_EQ((*tree)["walk_bound"].get<double>(), 250.0 * 65536 / (2e9 * 1.6e-2));
  EXPECT_TRUE(tree->contains("build_bound"));
  // A run without ceilings says why under the table, once per reason.
  doc.ceilings.reset();
  const std::string bare = render_html(doc, analyze(doc), {"var Chart;", ""});
  EXPECT_NE(bare.find("24 fractions of bound missing: the run measured no ceilings."),
            std::string::npos);
  EXPECT_EQ(count(bare, "<small>bound "), 0u);
}

TEST(HtmlReport, SimulationPageHasItsChartsAndTheirData) {
  const std::string page = simulation_page(testing::simulation_document());
  // The speedups, and at each of the two N the energy error and the step split.
  EXPECT_EQ(count(page, "<canvas"), 5u);
  EXPECT_EQ(count(page, "data-kind=\"speedups\""), 1u);
  EXPECT_EQ(count(page, "data-kind=\"energy\""), 2u);
  EXPECT_EQ(count(page, "data-kind=\"split\""), 2u);
  EXPECT_EQ(page.find("class=\"absent\""), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 4u);  // error recorder, data, Chart.js, the page's own
  // The tables stay.
  EXPECT_NE(page.find("<section id=\"steps\">"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"application\">"), std::string::npos);

  const nlohmann::json data = report_data(page);
  ASSERT_EQ(data["speedups"].size(), 1u);
  EXPECT_EQ(data["speedups"][0]["precision"], "f32");
  EXPECT_NEAR(data["speedups"][0]["points"][0]["kernel"].get<double>(), 60, 1e-9);
  EXPECT_NEAR(data["speedups"][0]["points"][0]["application"].get<double>(), 35, 1e-9);
  ASSERT_EQ(data["energy"].size(), 2u);
  const nlohmann::json& at_1k = data["energy"][0];
  EXPECT_EQ(at_1k["n"], 1024);
  ASSERT_EQ(at_1k["series"].size(), 2u);  // cpu.tbb and gpu.tuned
  EXPECT_EQ(at_1k["series"][0]["name"], "cpu.tbb");
  // Step 0's error is 0, which a log axis cannot show: four points of five.
  ASSERT_EQ(at_1k["series"][0]["points"].size(), 4u);
  EXPECT_EQ(at_1k["series"][0]["points"][0]["step"], 25);
  EXPECT_DOUBLE_EQ(at_1k["series"][0]["points"][0]["t"].get<double>(), 0.25);
  ASSERT_EQ(data["splits"].size(), 2u);
  const nlohmann::json& split = data["splits"][0];
  // Snapshots took no time at this N, and other is noise below zero: neither is in the legend.
  EXPECT_EQ(split["phases"], nlohmann::json({"force", "integration", "diagnostics"}));
  ASSERT_EQ(split["rows"].size(), 2u);
  EXPECT_EQ(split["rows"][1]["shares"]["other"], 0);
  EXPECT_DOUBLE_EQ(split["rows"][1]["seconds"]["other"].get<double>(), -1e-6);  // for the tooltip
  EXPECT_EQ(data["splits"][1]["rows"].size(), 1u);  // N = 4096: the CPU one was skipped
}

TEST(HtmlReport, SimulationChartsWithoutDataSayWhy) {
  // A CPU-only run: no speedup; conservation at the first and last step only: no curve.
  const std::string page = simulation_page(testing::simulation_document(false, 0));
  EXPECT_NE(page.find("GPU over CPU: application speedup and kernel speedup against N</b>: no "
                      "chart, a speedup needs a CPU and a GPU simulation"),
            std::string::npos);
  // One line for the energy error, not one per N.
  EXPECT_EQ(count(page, "Relative energy error against time"), 1u);
  EXPECT_NE(page.find("no chart, conservation was checked only at the first and the last step"),
            std::string::npos);
  // The split at N = 1024; at 4096 the only simulation was skipped.
  EXPECT_EQ(count(page, "<canvas"), 1u);
  EXPECT_EQ(count(page, "data-kind=\"split\""), 1u);
  EXPECT_NE(page.find("no chart, no simulation at this N was timed"), std::string::npos);
}

TEST(HtmlReport, SimulationPageWithoutChartJsKeepsItsTables) {
  const std::string page = simulation_page(testing::simulation_document(),
                                           {std::nullopt, "Chart.js was not found at /x"});
  EXPECT_NE(page.find("No charts: Chart.js was not found at /x"), std::string::npos);
  EXPECT_EQ(page.find("<canvas"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"steps\">"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 3u);  // no Chart.js
}

// Every setting names a value: the defaults of --threads and --isa say what they mean instead of
// "threads 0; ISA " with nothing after it.
TEST(HtmlReport, SettingsNameEveryValue) {
  ResultsDocument doc;
  doc.settings.command = "run";
  const std::string page = render_html(doc, analyze(doc), ChartJsSource{std::nullopt, "none"});
  EXPECT_NE(page.find("threads all the machine has; ISA the widest each CPU kernel could use</li>"),
            std::string::npos);
  doc.settings.threads = 4;
  doc.settings.isa = "avx2";
  const std::string forced = render_html(doc, analyze(doc), ChartJsSource{std::nullopt, "none"});
  EXPECT_NE(forced.find("threads 4; ISA avx2</li>"), std::string::npos);
}

// ---- the top of the page, as a newcomer reads it ----

// A committed sample's results (docs/samples).
ResultsDocument sample(const std::string& folder) {
  return load_results(std::filesystem::path(NBODY_SOURCE_DIR) / "docs" / "samples" / folder /
                      "results.json");
}

std::string page_of(const ResultsDocument& doc) {
  return render_html(doc, analyze(doc), {"var Chart;", ""});
}

// The text a reader sees from `at` on: tags dropped, up to `length` characters.
std::string text_from(const std::string& page, std::size_t at, std::size_t length) {
  std::string text;
  for (bool in_tag = false; at < page.size() && text.size() < length; ++at) {
    if (page[at] == '<') in_tag = true;
    if (!in_tag) text += page[at];
    if (page[at] == '>') in_tag = false;
  }
  return text;
}

// The answer comes first, before the audit; each of its links, and the headline's, goes to an id
// of the page; the headline gives the ratio at equal accuracy at 1M.
TEST(HtmlReport, TheAnswerComesFirstAndItsLinksResolve) {
  const std::string page = page_of(sample("tree-codes"));
  const std::size_t answer = page.find("<p class=\"answer\" id=\"answer\">On this machine, ");
  ASSERT_NE(answer, std::string::npos);
  EXPECT_LT(answer, page.find("<p class=\"summary\">"));
  EXPECT_LT(answer, page.find("<section id=\"audit\">"));
  int links = 0;
  for (std::size_t at = page.find("href=\"#"); at != std::string::npos;
       at = page.find("href=\"#", at + 1)) {
    const std::string id = page.substr(at + 7, page.find('"', at + 7) - at - 7);
    EXPECT_NE(page.find("id=\"" + id + "\""), std::string::npos) << id;
    ++links;
  }
  EXPECT_GE(links, 5);
  const std::size_t line = page.find("<p class=\"equal-accuracy\">At equal accuracy at N = 1M");
  EXPECT_LT(page.find("<section id=\"headline\">"), line);
  EXPECT_LT(line, page.find("<section id=\"algorithms\">"));
}

// Where a phone stacks a table's cells under their labels, no cell repeats its label ("GPU GPU
// not measured").
TEST(HtmlReport, NoCellRepeatsItsLabel) {
  ResultsDocument doc = sample("tree-codes");
  // The GPU measured nothing at 1M: its cells there say so.
  std::erase_if(doc.results, [](const ResultRecord& r) {
    return r.implementation.starts_with("gpu.") && r.n == (std::size_t{1} << 20);
  });
  const std::string page = page_of(doc);
  int labelled = 0;
  for (std::size_t at = page.find("data-label=\""); at != std::string::npos;
       at = page.find("data-label=\"", at + 1)) {
    const std::size_t from = at + 12;
    const std::string label = page.substr(from, page.find('"', from) - from);
    const std::string text = text_from(page, page.find('>', at) + 1, 40);
    EXPECT_FALSE(text.starts_with(label + " ")) << label << " | " << text;
    ++labelled;
  }
  EXPECT_GT(labelled, 20);
  EXPECT_EQ(page.find("GPU GPU"), std::string::npos);
  EXPECT_NE(page.find("not measured at this N"), std::string::npos);
}

// A CPU-only run says first that there is no ratio, then what it has. No chart stands empty: a
// float64 ladder whose naive rung the plan left out at every N has no speedup over naive to draw,
// and says so in one line instead.
TEST(HtmlReport, ACpuOnlyRunSaysSoFirstAndDrawsNoEmptyChart) {
  ResultsDocument doc = sample("cpu-only-run");
  for (ResultRecord& r : doc.results) {
    if (r.implementation != "cpu.soa.f64") continue;
    r.status = Status::skipped;
    r.reason = "left out by the plan: about 8 s where 6 s of the --budget of 75 s were left";
    r.kernel.reset();
    r.kernel_rate.reset();
  }
  const std::string page = page_of(doc);
  const std::size_t one_side = page.find("id=\"one-side\">No GPU/CPU ratio from this run");
  ASSERT_NE(one_side, std::string::npos);
  EXPECT_LT(one_side, page.find("id=\"answer\">What this run has: the CPU's best rates"));
  const nlohmann::json data = report_data(page);
  for (std::size_t at = page.find("data-kind=\"ladder\""); at != std::string::npos;
       at = page.find("data-kind=\"ladder\"", at + 1)) {
    const std::size_t from = page.find("data-index=\"", at) + 12;
    const int index = std::stoi(page.substr(from, page.find('"', from) - from));
    const nlohmann::json& steps = data["ladders"][index]["steps"];
    EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [](const nlohmann::json& s) {
      return !s["over_naive"].is_null();
    })) << data["ladders"][index].dump();
  }
  EXPECT_NE(page.find("<b>CPU optimization ladder, f64</b>: no chart, its naive rung (cpu.soa.f64) "
                      "was measured at no N"),
            std::string::npos);
  EXPECT_NE(page.find("data-kind=\"ladder\""), std::string::npos);  // float32's is drawn
}

// Numbers and options are not cut at their hyphens where a line wraps, and their text stays as
// it was (a copied option still runs).
TEST(HtmlReport, NumbersAndOptionsAreKeptWhole) {
  const ResultsDocument doc = sample("gpu-host-run");
  const std::string page = page_of(doc);
  EXPECT_NE(page.find("<span class=\"nw\">--budget</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"nw\">--max-eval-seconds</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"nw\">" + doc.generated_at + "</span>"), std::string::npos)
      << doc.generated_at;
  // Not inside tags, scripts or attribute values.
  EXPECT_EQ(page.find("\"<span"), std::string::npos);
  const std::string data = report_data(page).dump();
  EXPECT_EQ(data.find("class=\\\"nw\\\""), std::string::npos);
}

// A report combined from a CPU run and a GPU run of two hosts has no one plan: it says nothing of
// one rather than "estimated 0 s, took 0 s".
TEST(HtmlReport, ACombinedReportSaysNothingOfAPlanItDoesNotHave) {
  const ResultsDocument both = combine_sides({sample("cpu-only-run"), "cpu-only-run/"},
                                             {sample("gpu-host-run"), "gpu-host-run/"});
  const std::string page = page_of(both);
  EXPECT_EQ(page.find("Planned within"), std::string::npos);
  EXPECT_EQ(page.find("estimated 0 s"), std::string::npos);
  EXPECT_NE(page.find("id=\"answer\">With each side measured on its own machine, "),
            std::string::npos);
}

// ---- energy (FAIRNESS rule 10) ----

ResultRecord& record(ResultsDocument& doc, const std::string& name, std::size_t n) {
  const auto it = std::find_if(doc.results.begin(), doc.results.end(), [&](const ResultRecord& r) {
    return r.implementation == name && r.n == n;
  });
  if (it == doc.results.end()) throw std::runtime_error("no " + name);
  return *it;
}

// The part of `page` from `from` to the next `to`.
std::string part(const std::string& page, const std::string& from, const std::string& to) {
  const std::size_t at = page.find(from);
  if (at == std::string::npos) return {};
  return page.substr(at, page.find(to, at) - at);
}

// Energy on both sides: the answer's energy line, the ratio columns beside the speed ratios, the
// Energy section with both meters, and its chart's data: every measurement with energy, per device.
TEST(HtmlReport, EnergyOnBothSidesHasItsRatiosAndItsChart) {
  ResultsDocument doc = energy_run();
  const Analysis a = analyze(doc);
  ASSERT_TRUE(a.energy.compares()) << a.energy.no_ratio_reason;
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  const std::string answer = part(page, "<p class=\"answer\"", "</p>");
  EXPECT_NE(answer.find("<span class=\"energy-line\">By energy, the best GPU used "),
            std::string::npos)
      << answer;
  EXPECT_NE(answer.find("idle power included on both sides."), std::string::npos) << answer;

  const std::string headline = part(page, "<section id=\"headline\">", "</section>");
  EXPECT_NE(headline.find("<th>CPU J / GPU J<br>(best)</th>"), std::string::npos);
  EXPECT_NE(headline.find("<th>CPU J / GPU J<br>(naive)</th>"), std::string::npos);
  const HeadlineRow& first = a.headline.rows.front();
  ASSERT_TRUE(first.best_energy_ratio);
  EXPECT_NE(headline.find(fmt::format("data-label=\"CPU J / GPU J (best)\"><b>{:.3g}×</b>",
                                      first.best_energy_ratio->value)),
            std::string::npos)
      << headline;
  const std::string bars = part(page, "<section id=\"algorithms\">", "</section>");
  EXPECT_NE(bars.find("<th>CPU J / GPU J</th>"), std::string::npos);
  EXPECT_GT(count(bars, "data-label=\"CPU J / GPU J\"><b>"), 0u);

  const std::string energy = part(page, "<section id=\"energy\">", "</section>");
  // Text only: "package-0" is kept whole in a span.
  EXPECT_NE(
      text_from(energy, 0, energy.size())
          .find("CPU: powercap (package-0; package-0 dram); idle 44.5 W; counters updated every "
                "1 ms; no power limit read"),
      std::string::npos)
      << energy;
  EXPECT_NE(energy.find("<b>GPU</b>: nvml (GPU 0 board); idle 72.9 W; counters updated every "
                        "100 ms; power limit 700 W"),
            std::string::npos);
  EXPECT_NE(energy.find("Idle power is included on both sides"), std::string::npos);
  EXPECT_EQ(count(energy, "data-kind=\"joules\""), 1u);

  const nlohmann::json data = report_data(page)["joules"];
  ASSERT_EQ(data["devices"].size(), 2u);
  EXPECT_EQ(data["devices"][0]["device"], "cpu");
  EXPECT_EQ(data["devices"][1]["device"], "gpu");
  EXPECT_DOUBLE_EQ(data["devices"][1]["idle_watts"].get<double>(), 72.9);
  std::size_t points = 0;
  for (const nlohmann::json& d : data["devices"]) points += d["points"].size();
  EXPECT_EQ(points, a.energy.points.size());
  const nlohmann::json& tuned = data["devices"][1]["points"][0];
  EXPECT_EQ(tuned["name"], "gpu.tuned");
  EXPECT_EQ(tuned["n"], 1024);
  EXPECT_DOUBLE_EQ(tuned["y"].get<double>(), 0.002978754524976535);
  EXPECT_DOUBLE_EQ(tuned["x"].get<double>(), record(doc, "gpu.tuned", 1024).kernel->median_s);
  const auto tree =
      std::find_if(data["devices"][0]["points"].begin(), data["devices"][0]["points"].end(),
                   [](const nlohmann::json& p) { return p["tree"].get<bool>(); });
  ASSERT_NE(tree, data["devices"][0]["points"].end());
  // A tree is credited no interactions: its work per joule is bodies.
  EXPECT_DOUBLE_EQ(tree->at("per_j").get<double>(),
                   tree->at("n").get<double>() / tree->at("y").get<double>());
}

// A figure that spanned too few counter updates: marked in its table with the footnote, drawn
// hollow (its point says so), and in no ratio.
TEST(HtmlReport, AnUnresolvedEnergyIsMarkedAndFormsNoRatio) {
  ResultsDocument doc = energy_run();
  EnergyStatistics& brief = *record(doc, "gpu.tuned", 1024).kernel->energy;
  brief.periods_spanned = kMinEnergyPeriods / 2;
  brief.resolved = false;
  EnergyStatistics& tree = *record(doc, "gpu.tree[theta=0.5]", 4096).kernel->energy;
  tree.periods_spanned = kMinEnergyPeriods / 2;
  tree.resolved = false;
  const Analysis a = analyze(doc);
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  const std::string results = part(page, "<h3>Results</h3>", "</table>");
  EXPECT_NE(results.find("<th>time (median)</th><th>J / evaluation</th><th>int/J</th><th>mean "
                         "W</th><th>CI of median</th>"),
            std::string::npos);
  EXPECT_NE(results.find("<td>2.98 mJ †</td><td>352 M</td><td>381</td>"), std::string::npos)
      << results;
  EXPECT_NE(page.find(fmt::format("† spanned fewer than {:g} counter updates", kMinEnergyPeriods)),
            std::string::npos);
  const std::string trees = part(page, "<h3>Tree codes</h3>", "</table>");
  EXPECT_NE(trees.find("<th>J / evaluation</th><th>bodies/J</th><th>mean W</th>"),
            std::string::npos);
  EXPECT_EQ(count(trees, " †</td>"), 1u);
  // The f32 row at N = 1024 has no energy ratio.
  const std::string row = part(page,
                               "<td data-label=\"precision\">f32</td><td class=\"num\" "
                               "data-label=\"N =\">1024</td>",
                               "</tr>");
  EXPECT_NE(row.find("data-label=\"CPU J / GPU J (best)\">—</td>"), std::string::npos) << row;
  const nlohmann::json gpu = report_data(page)["joules"]["devices"][1]["points"];
  EXPECT_FALSE(gpu[0]["resolved"].get<bool>());
  EXPECT_DOUBLE_EQ(gpu[0]["periods"].get<double>(), kMinEnergyPeriods / 2);
}

// Without the CPU's energy: the answer's line, the headline and the Energy section say why, no
// energy ratio is printed, and the chart has the GPU's points only.
TEST(HtmlReport, WithoutTheCpusEnergyItSaysWhyAndShowsNoRatio) {
  const ResultsDocument doc = energy_run_without_cpu_energy();
  const Analysis a = analyze(doc);
  ASSERT_FALSE(a.energy.compares());
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  const std::string answer = part(page, "<p class=\"answer\"", "</p>");
  EXPECT_NE(answer.find("Energy: no GPU/CPU ratio — the CPU's energy is not read: no "
                        "/sys/class/powercap, and no perf power PMU."),
            std::string::npos)
      << answer;
  EXPECT_EQ(answer.find("By energy"), std::string::npos);
  EXPECT_EQ(page.find("CPU J / GPU J<br>"), std::string::npos);
  EXPECT_EQ(page.find("class=\"eratio\""), std::string::npos);
  EXPECT_EQ(page.find("data-label=\"CPU J / GPU J\""), std::string::npos);
  EXPECT_NE(part(page, "<section id=\"headline\">", "</table>")
                .find("CPU J / GPU J: no energy ratio — the CPU's energy is not read"),
            std::string::npos);
  const std::string energy = part(page, "<section id=\"energy\">", "</section>");
  EXPECT_NE(energy.find("<b>CPU</b>: not read — no /sys/class/powercap, and no perf power PMU"),
            std::string::npos)
      << energy;
  EXPECT_NE(energy.find("No GPU/CPU energy ratio: the CPU's energy is not read"),
            std::string::npos);
  const nlohmann::json devices = report_data(page)["joules"]["devices"];
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0]["device"], "gpu");
  // The CPU's results have no energy to show: dashes.
  const std::string cpu = part(page, "<tr><td>cpu.tbb</td><td>1024</td>", "</tr>");
  EXPECT_NE(cpu.find(" µs</td><td>—</td><td>—</td><td>—</td><td>"), std::string::npos) << cpu;
}

// A file older than version 10 read no energy: one line under Energy, no energy columns, no chart.
TEST(HtmlReport, AnOlderRunHasNoEnergyColumnsAndSaysSo) {
  const std::string page = page_of(sample("tree-codes"));
  EXPECT_NE(page.find("No energy: the run read no energy (results written before version 10)"),
            std::string::npos);
  EXPECT_EQ(page.find("J / evaluation"), std::string::npos);
  EXPECT_EQ(page.find("data-kind=\"joules\""), std::string::npos);
  EXPECT_TRUE(report_data(page)["joules"]["devices"].empty());
}

// A simulation whose device's energy was read: joules per step and watts in the step table.
TEST(HtmlReport, SimulationStepsHaveTheirJoules) {
  ResultsDocument doc = testing::simulation_document();
  EXPECT_EQ(simulation_page(doc).find("J / step"), std::string::npos);
  for (SimulationRecord& s : doc.simulations) {
    if (s.implementation == "gpu.tuned" && s.n == 1024) {
      s.energy = EnergyStatistics{.joules = 400,
                                  .seconds = 1,
                                  .evaluations = 1000,
                                  .per_evaluation_j = 0.4,
                                  .mean_watts = 400,
                                  .periods_spanned = 10,
                                  .resolved = true};
    }
  }
  const std::string steps = part(simulation_page(doc), "<section id=\"steps\">", "</section>");
  EXPECT_NE(steps.find("<th>step</th><th>J / step</th><th>mean W</th><th>force</th>"),
            std::string::npos);
  EXPECT_NE(steps.find("<td class=\"num\">400 mJ</td><td class=\"num\">400</td>"),
            std::string::npos)
      << steps;
  EXPECT_NE(steps.find("</td><td>—</td><td>—</td><td class=\"num\">"),
            std::string::npos);  // cpu.tbb
}

}  // namespace
}  // namespace nbody::reports
