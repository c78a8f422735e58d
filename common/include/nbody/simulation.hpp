#pragma once
// Time integration with a registered formulation as the force engine (`nbody-fair simulate`):
// the kick-drift-kick leapfrog of nbody/leapfrog.hpp, in the formulation's precision,
// its state kept where its kernel runs (the GPU's memory for GPU formulations; the host, with the
// formulation's threads, for CPU ones).
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "nbody/bodies.hpp"
#include "nbody/execution_options.hpp"
#include "nbody/leapfrog.hpp"

namespace nbody {

struct Implementation;

// What a simulation starts from: the whole initial state on every rank or device, and in
// execution.targets the slice of bodies this one integrates when they are decomposed by target
// range, so a formulation's simulation is created the same way for one or several.
struct SimulationSetup {
  std::span<const Body<double>> bodies;      // positions and masses
  std::span<const Vec3<double>> velocities;  // one per body
  double softening = 0;
  ExecutionOptions execution;
};

// Seconds of steps advanced, on the simulation's own clock (device events on the GPU, a steady
// clock on the host). On the host `force` and `integration` cost nothing to measure and always
// are. On the GPU, where every step is one CUDA graph launch, they are measured when phases are
// asked for: the steps' graphs, then as many launches of a graph of the force kernel alone
// (integration = the rest of the step).
struct StepSeconds {
  double total = 0;
  double force = 0;
  double integration = 0;
  // Decomposed over ranks: the agreements and the all-gathers of positions, waiting
  // for slower ranks included; 0 in one process.
  double communication = 0;
  double tree_build = 0;  // a tree formulation's builds of its tree, within force
  bool phases = false;    // force and integration were measured (always on the host)
};

class Simulation {
 public:
  virtual ~Simulation() = default;
  // Advances `steps` kick-drift-kick steps of `dt`. The first step's opening kick uses the
  // accelerations computed when the simulation was created.
  virtual StepSeconds advance(int steps, double dt, bool time_phases) = 0;
  // The state now, promoted to float64 (a device-to-host copy on the GPU).
  virtual PhaseSpaceState state() = 0;
  // The softened potential energy of the state now, in float64 with compensated sums as
  // conserved_quantities sums it, where the simulation can sum it beside its state: the GPU, where
  // the host's O(N^2) sum would cost hundreds of steps (its terms use the device's rsqrt and add
  // in chunks: the host's figure to about 1e-16). Empty: the caller sums it.
  virtual std::optional<double> potential_energy() { return std::nullopt; }
  // Facts a reader needs (the force run's details, how steps are launched).
  virtual std::map<std::string, std::string> details() const { return {}; }
};

// The largest relative energy error a full-accuracy formulation of unit roundoff `u` may show where
// the float64 leapfrog of the same initial condition and steps shows `float64_error`
// (docs/tolerances.md, "Time integration").
inline double energy_error_bound(double float64_error, double unit_roundoff) {
  return 2 * float64_error + 4 * unit_roundoff;
}

// What an approximate force's own error adds to the conservation bounds after `time` (in the
// suite's units, G = M = 1) at a truncation bound `relative_l2_truncation` (a tree's, at its
// opening angle): its forces are neither exact nor equal and opposite, so energy and momentum
// drift with it. Linear in time, 5 times the worst of the survey (docs/tolerances.md, "Time
// integration": cpu.tree, Plummer, N = 2K and 4K, theta 0.3 to 1, 4 time units).
struct TruncationDrift {
  double energy = 0;    // added to |dE/E|
  double momentum = 0;  // added to the momentum drift over sqrt(M |W0|)
};
inline TruncationDrift truncation_drift(double relative_l2_truncation, double time) {
  return {.energy = 5e-4 * relative_l2_truncation * time,
          .momentum = 3e-3 * relative_l2_truncation * time};
}

// The implementation's own simulation where it has one, else the host leapfrog around its
// prepared run (PreparedRun::set_bodies: a GPU tree's run uploads each step's bodies), integrating
// in its precision with its threads. Throws std::logic_error where the run cannot take new bodies,
// and std::invalid_argument for a slice of targets: the host leapfrog integrates every body (the
// decomposed simulation of nbody/distributed integrates a slice and all-gathers the rest).
std::unique_ptr<Simulation> make_simulation(const Implementation& implementation,
                                            const SimulationSetup& setup);

}  // namespace nbody
