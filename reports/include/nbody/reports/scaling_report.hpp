#pragma once
// A scaling study (scaling.hpp) as Markdown, as one self-contained HTML page with charts
// (efficiency against devices, the time split compute/communication) and as CSV. Printers: they
// format the analysis, never redo it.
#include <filesystem>
#include <string>
#include <vector>

#include "nbody/reports/html_report.hpp"
#include "nbody/reports/scaling.hpp"

namespace nbody::reports {

std::string render_scaling_markdown(const ScalingStudy& study);

// Without Chart.js the page has the tables and one line saying why there are no charts.
std::string render_scaling_html(const ScalingStudy& study, const ChartJsSource& chartjs);

// One row per implementation × N × scale (docs/results-schema.md lists the columns), RFC 4180.
std::string render_scaling_csv(const ScalingStudy& study);

// Writes DIR/scaling.md, DIR/scaling.html and DIR/scaling.csv, each atomically; returns them.
std::vector<std::filesystem::path> write_scaling_files(const ScalingStudy& study,
                                                       const std::filesystem::path& directory);

}  // namespace nbody::reports
