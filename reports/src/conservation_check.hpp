#pragma once
// Whether a simulation's energy and momentum stayed within the bounds of a trustworthy run
// (docs/tolerances.md, "Time integration"), for the analysis's integration rows.
#include <optional>

#include "nbody/reports/analysis.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// The largest energy error a trustworthy integration shows: 25 times the largest of the surveyed
// default runs (Plummer, dt = 1/256, up to 256 steps: 4.1e-6 at N = 1024).
inline constexpr double kTrustedEnergyError = 1e-4;

// Empty where the simulation did no step or kept fewer than two conservation samples.
std::optional<ConservationCheck> check_conservation(const SimulationRecord& record,
                                                    const ImplementationRecord* implementation,
                                                    const RunSettings& settings);

}  // namespace nbody::reports
