#pragma once
// Trees beside all-pairs (FAIRNESS rule 9): the tree table, the headline at each accuracy bar, each
// device's Pareto front of error against time, and where a tree overtakes all-pairs.
#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// Empty (no bars, rows, fronts or crossovers) where no tree formulation ran.
AlgorithmComparison compare_algorithms(const ResultsDocument& document);

// The implementation of `record` is a tree formulation.
bool is_tree_result(const ResultsDocument& document, const ResultRecord& record);

}  // namespace nbody::reports
