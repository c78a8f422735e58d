#pragma once
// What the analysis and its audit both read of a measurement.
#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// Measured ok with a kernel time and rate.
bool timed_ok(const ResultRecord& record);

// Timed ok, and of an all-pairs formulation: what interactions per second rank (a tree has none).
bool timed_all_pairs(const ResultsDocument& document, const ResultRecord& record);

// A timed record's kernel rate with its interval, disturbances and scale.
RateFigure rate_figure(const ResultsDocument& document, const ResultRecord& record);

// Sets the GPU/CPU energy ratios of the headline and of the equal-accuracy rows, where the run's
// energy compares (a.energy) and both figures are resolved.
void add_energy_ratios(Analysis& a);

}  // namespace nbody::reports
