#pragma once
// report.html's part of FAIRNESS rule 9: the headline at each accuracy bar with the crossovers,
// the tree table, and per N the accuracy-against-time chart's data and card. Formatting only.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_page.hpp"
#include "nbody/reports/analysis.hpp"

namespace nbody::reports {

// "Across algorithms at equal accuracy"; empty where no tree ran.
std::string across_algorithms_html(const AlgorithmComparison& algorithms);

// "Tree codes"; empty where no tree ran.
std::string tree_codes_html(const AlgorithmComparison& algorithms);

// Per N, every ok formulation's (relative L2, seconds per evaluation) and each device's Pareto
// front; empty where no tree ran.
nlohmann::json accuracy_time_data(const AlgorithmComparison& algorithms);

// One chart per N of `data` (accuracy_time_data's).
std::vector<ChartCard> accuracy_time_charts(const nlohmann::json& data);

// "1.23 ms"
std::string format_seconds(double seconds);

}  // namespace nbody::reports
