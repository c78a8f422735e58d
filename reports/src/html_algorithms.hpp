#pragma once
// report.html's parts of FAIRNESS rules 9 and 10: the headline at each accuracy bar with the
// crossovers, the tree table, and per N the accuracy-against-time chart's data and card; the
// energy ratios' and measurements' cells, and the Energy section with its energy-against-time
// chart. Formatting only.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_page.hpp"
#include "nbody/reports/analysis.hpp"
#include "sentences.hpp"

namespace nbody::reports {

// "Across algorithms at equal accuracy"; empty where no tree ran. Where the run's energy compares,
// a column of each row's energy ratio; where it read energy but does not, why not.
std::string across_algorithms_html(const AlgorithmComparison& algorithms,
                                   const EnergyAnalysis& energy);

// "Tree codes"; empty where no tree ran. Each tree's energy beside its time where the run read any.
std::string tree_codes_html(const AlgorithmComparison& algorithms, const EnergyAnalysis& energy);

// Per N, every ok formulation's (relative L2, seconds per evaluation) and each device's Pareto
// front; empty where no tree ran.
nlohmann::json accuracy_time_data(const AlgorithmComparison& algorithms);

// One chart per N of `data` (accuracy_time_data's).
std::vector<ChartCard> accuracy_time_charts(const nlohmann::json& data);

// "1.23 ms"
std::string format_seconds(double seconds);

// ---- energy (FAIRNESS rule 10) ----

// A linked sentence's spans, escaped, each linked one an anchor to its section.
std::string linked_html(const std::vector<AnswerSpan>& spans);

// Above a table of energy ratios, a paragraph: what they are, or why there are none; empty for a
// run that read no energy (results older than version 10).
std::string energy_ratio_intro_html(const EnergyAnalysis& energy);

// A ratio of CPU joules over GPU joules per evaluation with its interval, or "—".
std::string energy_ratio_cell(const std::optional<RateRatio>& ratio);

// The headers of a measurement's energy cells: joules per evaluation, interactions (a tree: bodies)
// per joule, mean watts.
std::vector<std::string> energy_headers(bool tree);

// The energy cells of `implementation` at `n` ("—" where not read); an unresolved figure is
// marked "†" for energy_footnote(). `unresolved` is set where one is.
std::vector<std::string> energy_cells(const EnergyAnalysis& energy,
                                      const std::string& implementation, std::size_t n,
                                      bool& unresolved);

// The same of a figure a row carries (TreeRow::energy).
std::vector<std::string> energy_cells(const std::optional<EnergyFigure>& figure, bool& unresolved);

// Under a table that marked an unresolved figure: what the mark means.
std::string energy_footnote();

// The energy-against-time chart's data: per device its points and its idle power.
nlohmann::json joules_data(const EnergyAnalysis& energy);

// "Energy": each device's meter or why it was not read, the idle accounting, why no ratio where
// none, and the energy-against-time chart of `data` (joules_data's).
std::string energy_section_html(const EnergyAnalysis& energy, const nlohmann::json& data,
                                const ChartJsSource& chartjs);

}  // namespace nbody::reports
