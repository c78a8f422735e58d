#pragma once
// `nbody-fair simulate`: the kick-drift-kick leapfrog with each selected formulation as its force
// engine, the conservation checks, the divergence from the float64 trajectory, and the Amdahl
// split of a step.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "nbody/app/runner.hpp"
#include "nbody/leapfrog.hpp"
#include "nbody/results.hpp"

namespace nbody {

struct SimulateOptions {
  SuiteOptions suite;  // initial condition, seed, softening, sizes, selection, execution
  double dt = 1.0 / 256;
  std::int64_t steps = 256;
  std::int64_t diag_every = 0;      // 0: at the first and the last step only
  std::int64_t snapshot_every = 0;  // 0: none
  std::filesystem::path snapshot_dir;
  std::int64_t phase_steps = 16;  // the first steps, timed phase by phase
  std::size_t divergence_up_to = 4096;
  double max_seconds = 20;  // skip (implementation, N) whose steps are predicted longer
  // Seconds all the simulations may take (suite.budget_s overrides it): a simulation estimated
  // from its smaller N's step not to fit what is left is left out. Empty: 100 s for the default
  // sizes, none for sizes given; not applied over ranks.
  std::optional<double> budget_s;
  // An initial condition read from a file (--ic-file): its N replaces the sizes.
  std::optional<PhaseSpaceState> initial_state;
  std::string ic_file;
};

// Default sizes of simulate: powers of four from 1K to 64K (the float64 diagnostics run on the
// host, and their O(N^2) potential sum sets how large a default run can go).
std::vector<std::size_t> default_simulation_sizes();

ResultsDocument run_simulations(const SuiteContext& context, const SimulateOptions& options);

}  // namespace nbody
