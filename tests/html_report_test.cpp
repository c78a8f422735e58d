// report.html's printer on hand-made data: strings cannot break out of the page's <script>
// elements, and a page without Chart.js says why and still has its tables.
#include <gtest/gtest.h>

#include <string>

#include "nbody/reports/html_report.hpp"

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

}  // namespace
}  // namespace nbody::reports
