#pragma once
// The sentences the run and simulation reports share: every printer says the same words, in its
// own markup (the Markdown report, the summary a terminal shows, the HTML page). Formatting only:
// each reads what the analysis or the settings hold and decides nothing.
#include <string>
#include <vector>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// "Planned within a budget of 75 s: estimated 72 s, took 74 s; 2 measurements left out by the
// plan (under Skipped, with why)." Empty for a run without a budget.
std::string budget_sentence(const RunSummary& summary);

// "2 simulations kept energy or momentum outside their bounds and are not to be trusted: cpu.soa
// at N = 1024 (|ΔE/E| 2.6e-03, bound 1.0e-04: <likely cause>); …" Empty where every checked
// simulation kept them.
std::string conservation_sentence(const std::vector<IntegrationRow>& rows);

// "No GPU/CPU ratio from this run: no GPU measured: <why>. It measured the CPU side only; for the
// ratio, <remedy>." Empty where both sides were measured.
std::string sides_sentence(const MeasuredSides& sides);

// For a run or simulation decomposed over MPI ranks (settings.ranks > 1): how, and what its kernel
// and end-to-end figures (or a step's other time) then hold; empty in one process.
std::string decomposition_sentence(const RunSettings& settings);

}  // namespace nbody::reports
