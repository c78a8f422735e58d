#pragma once
// results.csv: one row per result record with the figures people plot, for spreadsheets and
// pandas. A printer: it reads results, never measures.
#include <string>

#include "nbody/results.hpp"

namespace nbody::reports {

// A header row and one row per result record, RFC 4180: CRLF line ends, a field holding a comma,
// a quote or a line break quoted (quotes doubled). An absent value is an empty cell.
std::string render_csv(const ResultsDocument& document);

}  // namespace nbody::reports
