#pragma once
// The plain Markdown report of a results document. A printer: it reads results, never measures.
#include <filesystem>
#include <string>

#include "nbody/results.hpp"

namespace nbody::reports {

std::string render_markdown(const ResultsDocument& document);

// What a terminal shows at the end of a run: the audit's verdict, the disturbed measurements and
// the headline, in Markdown; the reports hold the rest.
std::string render_summary(const ResultsDocument& document);

// Writes DIR/report.md atomically.
void write_markdown(const ResultsDocument& document, const std::filesystem::path& directory);

}  // namespace nbody::reports
