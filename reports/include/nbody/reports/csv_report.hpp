#pragma once
// results.csv: one row per result record (a simulate run's: per simulation) with the figures
// people plot, for spreadsheets and pandas. A printer: it reads results, never measures.
#include <string>
#include <vector>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// A header row and one row per result record, or for a simulate run (settings.command) per
// simulation, with that header; RFC 4180: CRLF line ends, a field holding a comma, a quote or a
// line break quoted (quotes doubled). An absent value is an empty cell. Of the analysis it reads
// each result's energy alone (EnergyAnalysis::of_results: per evaluation, and per joule); a row
// is otherwise a record as measured, figures unrounded.
std::string render_csv(const ResultsDocument& document, const Analysis& analysis);

// One RFC 4180 record: the cells, quoted where they must be, joined by commas, ended by CRLF.
std::string csv_record(const std::vector<std::string>& cells);

}  // namespace nbody::reports
