#pragma once
// The answer to the suite's question, gathered from the headline and the comparison across
// algorithms: what every report says first.
#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// `analysis` holds the sides, the headline (its energy ratios set), the comparison across
// algorithms and the energy analysis of `document`.
Answer make_answer(const ResultsDocument& document, const Analysis& analysis);

}  // namespace nbody::reports
