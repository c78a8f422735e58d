#pragma once
// A comparison of two results documents (comparison.hpp) as Markdown and as one self-contained
// HTML page. Printers: they format the analysis, never redo it.
#include <filesystem>
#include <string>
#include <vector>

#include "nbody/reports/comparison.hpp"

namespace nbody::reports {

// How the report names the two documents compared, e.g. their paths.
struct ComparedSources {
  std::string base, now;
};

std::string render_comparison_markdown(const Comparison& comparison,
                                       const ComparedSources& sources);

// A page with no external resources: inline CSS, the table in a horizontally scrollable box so it
// reads at a phone's width, slow and failing rows highlighted.
std::string render_comparison_html(const Comparison& comparison, const ComparedSources& sources);

// Writes DIR/compare.md and DIR/compare.html, each atomically; returns them.
std::vector<std::filesystem::path> write_comparison_files(const Comparison& comparison,
                                                          const ComparedSources& sources,
                                                          const std::filesystem::path& directory);

}  // namespace nbody::reports
