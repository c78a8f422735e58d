#pragma once
// Energy in a run decomposed over MPI ranks (FAIRNESS.md rule 10): each rank meters its own share
// of the job's devices, every CPU package and GPU once however many ranks share it, and each
// timing's figure is the sum over the ranks of the same evaluations.
#include <set>
#include <span>
#include <string>

#include "nbody/app/runner.hpp"
#include "nbody/distributed/decomposition.hpp"

namespace nbody {

// Of the CPU packages this rank may run on, those it meters: none that a lower rank of its host
// (`hosts`: each rank's, in rank order) may run on too. A collective.
std::set<int> packages_this_rank_meters(distributed::Decomposition& decomposition,
                                        std::span<const std::string> hosts,
                                        const std::set<int>& packages);

// This rank's meters (`own`: made over its share, metered_by_another_process for the rest, their
// idle power measured) joined with every other rank's: each device's record combined
// (combine_energy_records, labelled "rank R"), and the collectives each timing's reading calls. A
// collective, called once every rank has measured its idle power: the ranks meet asleep, so that
// one still measuring does not read another's waiting. `decomposition` must outlive the result.
EnergyMeters join_rank_energy(distributed::Decomposition& decomposition, EnergyMeters own);

}  // namespace nbody
