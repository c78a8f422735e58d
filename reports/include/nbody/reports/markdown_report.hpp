#pragma once
// The plain Markdown report of a results document. A printer: it formats the document and its
// analysis, it decides nothing.
#include <filesystem>
#include <string>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// `analysis` is analyze(document).
std::string render_markdown(const ResultsDocument& document, const Analysis& analysis);

// What a terminal shows at the end of a run: the audit's verdict, the disturbed measurements and
// the headline, in Markdown; the reports hold the rest.
std::string render_summary(const ResultsDocument& document, const Analysis& analysis);

// The same, analyzing the document first.
std::string render_summary(const ResultsDocument& document);

// Writes DIR/report.md atomically.
void write_markdown(const ResultsDocument& document, const Analysis& analysis,
                    const std::filesystem::path& directory);

}  // namespace nbody::reports
