#pragma once
// The HTML report of a results document: one self-contained page (report.html) that opens offline,
// with charts drawn by Chart.js inlined into the page and the Markdown report's tables. A printer:
// it formats an Analysis, it decides nothing.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// Chart.js's source for the page, or why there is none.
struct ChartJsSource {
  std::optional<std::string> source;
  std::string missing_reason;  // set when `source` is empty
};

// Reads Chart.js from $NBODY_FAIR_CHARTJS, else from the path configured at build time
// (NBODY_CHARTJS, Debian's libjs-chart.js by default).
ChartJsSource load_chartjs();

// Text made safe inside HTML elements and attribute values (& < > ").
std::string html_escape(std::string_view text);

// The page. Without Chart.js it has the tables and one line saying why the charts are absent.
std::string render_html(const ResultsDocument& document, const Analysis& analysis,
                        const ChartJsSource& chartjs);

// Writes DIR/report.html atomically.
void write_html(const ResultsDocument& document, const Analysis& analysis,
                const std::filesystem::path& directory);

}  // namespace nbody::reports
