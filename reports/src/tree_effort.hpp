#pragma once
// Rule 3 ("Same effort") for tree formulations: each device's tree beside its own bounds, walk
// and build apart, and whether one side stands so much further from its bounds than the other
// that the ratio at equal accuracy may lean.
#include <string>

#include "nbody/reports/analysis.hpp"

namespace nbody::reports {

// Where the walks' (or else the whole evaluations') fractions of their bounds differ by more than
// this factor between the CPU's tree and the GPU's, the ratio at equal accuracy may lean.
inline constexpr double kTreeEffortGap = 1.5;

// Per precision of the trees that ran, at the largest N where each device that ran such trees
// timed one ok, each device's tree there (the fastest meeting relative L2 <= 1e-3, else the
// fastest) with its walk's and build's fractions of their bounds; a gap over kTreeEffortGap
// between the two sides, named with the side further from its bounds; and where a fraction is
// missing, that rule 3 cannot tell for trees, and why. Empty where no tree ran.
std::string tree_effort(const AlgorithmComparison& algorithms);

}  // namespace nbody::reports
