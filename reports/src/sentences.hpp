#pragma once
// The sentences the run and simulation reports share: every printer says the same words, in its
// own markup (the Markdown report, the summary a terminal shows, the HTML page). Formatting only:
// each reads what the analysis or the settings hold and decides nothing.
#include <optional>
#include <string>
#include <vector>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// "Planned within a budget of 75 s: estimated 72 s, took 74 s; 2 measurements left out by the
// plan (under Skipped, with why)." Empty for a run without a budget.
std::string budget_sentence(const RunSummary& summary);

// Where a part of a linked sentence (the answer paragraph, an energy ratio intro) links to: the
// table its figure comes from, or the Energy section.
enum class AnswerLink { none, headline, algorithms, energy };

// A piece of a linked sentence; a printer links the linked ones to their table (Markdown, HTML)
// or prints them plain (a terminal).
struct AnswerSpan {
  std::string text;
  AnswerLink link = AnswerLink::none;
};

// "On this machine, best against best the GPU is 25.7× (23.9–31.7) at N = 256K to 32.1×
// (31.2–33.1) at 64K faster (float32), …; naive against naive …; and with the fastest formulation
// of each side at relative L2 ≤ 1e-3 at N = 1M, 41.3× (…) (gpu.tree[theta=0.5] against …)." A run
// of one side gets what it has instead (the sides sentence says first why there is no ratio).
// Empty where the run measured neither side.
std::vector<AnswerSpan> answer_paragraph(const Answer& answer);

// For the headline: the ratio at equal accuracy at N = 1M, which formulation of each side and its
// time, or why there is none. Empty for a run of one side.
std::vector<AnswerSpan> equal_accuracy_line(const Analysis& analysis);

// The answer paragraph's line on energy (FAIRNESS rule 10), of answer.energy: "By energy, the best
// GPU used 12.1× (11–13.4) less per evaluation than the best CPU at N = 256K (float32), …; idle
// power included on both sides.", or "Energy: no GPU/CPU ratio — <why>." Empty where the answer
// paragraph is.
std::vector<AnswerSpan> energy_answer_line(const Answer& answer);

// Where a table shows an energy ratio's interval: in brackets after it (Markdown), or below it in
// its cell (HTML).
enum class IntervalPlacement { in_brackets, below };

// Above a table of energy ratios: "CPU J / GPU J: the CPU's joules per evaluation over the GPU's
// …; see Energy); only where …", or "CPU J / GPU J: no energy ratio — <why> (see Energy).", the
// word Energy linked to its section. Empty for a run that read no energy (results older than
// version 10).
std::vector<AnswerSpan> energy_ratio_intro(const EnergyAnalysis& energy, IntervalPlacement where);

// The spans' text without links: what a terminal prints.
std::string plain_text(const std::vector<AnswerSpan>& spans);

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

// Where the trees are, said under every all-pairs analysis that leaves them out (they are credited
// no interactions); empty where no tree ran.
std::string trees_elsewhere_sentence(const AlgorithmComparison& algorithms);

// What "Across algorithms at equal accuracy" compares, and how (FAIRNESS rule 9).
std::string across_algorithms_intro();

// What "Tree codes" tabulates.
std::string tree_codes_intro();

// Under the tree table: why fractions of bound are missing, each reason once with its count, and
// what a fraction above 100% means where one is; empty where neither.
std::string tree_bounds_note(const AlgorithmComparison& algorithms);

// "0.5", or "—" for a formulation bound to no opening angle.
std::string theta_text(const std::optional<double>& theta);

// "cpu.tree[theta=0.5] (tree, f32)": a figure at a bar, with what it is.
std::string time_figure_label(const TimeFigure& figure);

// Where a device has no figure at a bar, in the cell under the device's name: "nothing meets it"
// or "not measured at this N".
std::string no_figure_text(bool measured);

// "CPU, relative L2 ≤ 1e-3: a tree overtakes all-pairs at N = 65536 (compared at N = 4096, 16384,
// 65536)", or "… not within the measured sizes (up to N = 65536)".
std::string crossover_sentence(const AlgorithmComparison& algorithms, const Crossover& crossover);

}  // namespace nbody::reports
