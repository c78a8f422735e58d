#pragma once
// What every nbody-fair page shares (report.html, scaling.html): the head with the stylesheet,
// tables in scrollable boxes, chart cards, and the end with the data island, Chart.js and the
// script that draws. Formatting only.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "nbody/reports/analysis.hpp"
#include "nbody/reports/html_report.hpp"

namespace nbody::reports {

// JSON inside <script>: '<', '>' and '&' only occur inside JSON strings, where \u escapes mean
// the same, so no "</script>" or "<!--" in a string can end or change the element.
std::string script_safe_json(const nlohmann::json& data);

// A library inlined into <script> must not contain "</script" (it would end the element); in
// JavaScript source that text can only sit in a string, regex or comment, where "<\/" reads alike.
std::string script_safe_js(std::string source);

// `html` with every number or option that a line break at its hyphen would cut ("4.3e-02",
// "1e-3", "23.9–31.7", "2026-11-26T06:27:47Z", "--budget") wrapped in <span class="nw">, which
// report.css keeps on one line. Text only: tags, attribute values, scripts and styles are kept as
// they are, and the text itself is unchanged, so a copied option still runs.
std::string keep_tokens_whole(std::string_view html);

// A table inside a horizontally scrollable box, so wide tables never widen the page.
struct Table {
  std::string html;
  explicit Table(std::initializer_list<std::string_view> headers, std::string_view css = "");
  // Columns that only some runs have (energy): headers and cells gathered first.
  static Table of(const std::vector<std::string>& headers, std::string_view css = "");
  // Cells are HTML already (escape text with html_escape()).
  void row(std::initializer_list<std::string> cells);
  void row(const std::vector<std::string>& cells);
  std::string done();

 private:
  Table() = default;
};

// A fairness rule's verdict as a coloured badge.
std::string verdict_badge(RuleVerdict verdict);

// A chart: a canvas where there is data, one line saying why where there is none.
struct ChartCard {
  std::string id, kind, title, note;
  int index = 0;
  std::string absent;  // why there is no chart
  bool wide = false;   // spans the grid's row
};

std::string chart_html(const ChartCard& c);

// The charts' grid, the charts without data listed under it; without Chart.js, why.
std::string charts_section(const std::vector<ChartCard>& charts, const ChartJsSource& chartjs);

// From <!DOCTYPE html> to <body><main>, with the error recorder and the stylesheet.
std::string page_head(std::string_view title);

// The page's end: the data island, Chart.js and the script that draws.
std::string page_scripts(const nlohmann::json& data, const ChartJsSource& chartjs);

}  // namespace nbody::reports
