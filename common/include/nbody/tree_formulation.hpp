#pragma once
// What every tree formulation's registration shares: it is registered once, at a default opening
// angle under its plain name, and Registry::bind_opening_angles replaces it by one formulation
// bound to each angle a run sweeps, named "<name>[theta=<theta>]", each with its angle's tolerance
// (barnes_hut_tolerance) and runs at that angle.
#include <functional>
#include <memory>
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/execution_options.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// A tree formulation's run at one opening angle (throws std::invalid_argument for what it refuses,
// as Implementation::prepare does).
using PrepareAtAngle = std::function<std::unique_ptr<PreparedRun>(
    std::span<const Body<double>> bodies, double softening, const ExecutionOptions& options,
    double theta)>;

// `unbound` (its info and checks; its prepare and at_opening_angle are set here) as registered:
// at `default_theta` under its own name, bindable to any angle in [0, 1].
Implementation tree_formulation(Implementation unbound, double default_theta,
                                PrepareAtAngle prepare_at);

}  // namespace nbody
