#pragma once
// The fairness audit: each rule of docs/FAIRNESS.md checked from a document's own data, one
// function per rule (audit.cpp), and the line that sums them up.
#include <vector>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// A run's ten rules, or a simulation's (whose force-evaluation rules say where they are audited
// instead); `algorithms` is what the report shows of trees against all-pairs, `simulations` the
// document's integration rows, `energy` what the run read of each device's energy.
FairnessAudit make_audit(const ResultsDocument& document, const Headline& headline,
                         const MeasuredSides& sides, const AlgorithmComparison& algorithms,
                         const std::vector<IntegrationRow>& simulations,
                         const EnergyAnalysis& energy);

}  // namespace nbody::reports
