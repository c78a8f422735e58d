#pragma once
// The registry of formulations. A formulation is one source file (in cpu/formulations/ or
// gpu/formulations/) that defines its kernel and one `register_...` function adding an
// Implementation here, plus that function's line in its side's formulations.inc. The runner, the
// tests, the micro-benchmarks and the reports find formulations only through this interface,
// chosen by their properties (device, precision, accuracy class, pairs, role, ISA choice).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/accuracy.hpp"
#include "nbody/bodies.hpp"
#include "nbody/execution_options.hpp"
#include "nbody/implementation_info.hpp"
#include "nbody/properties.hpp"
#include "nbody/simulation.hpp"
#include "nbody/tree_costs.hpp"

namespace nbody {

// Pairs a formulation evaluates for N bodies: N^2, or N(N-1)/2 for symmetric ones. Either way N^2
// interactions are credited (FAIRNESS rule 4).
inline std::uint64_t pairs_evaluated(PairScheme pairs, std::uint64_t n) {
  return pairs == PairScheme::all_pairs ? n * n : n * (n - 1) / 2;
}

// One formulation bound to one input. Created by Implementation::prepare, which does all setup
// (layout conversion, allocation, host-to-device copies of the resident input) outside timing.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;

  // One force evaluation, timed on the implementation's own clock: a steady wall clock on the
  // CPU, device events on the GPU. Returns seconds.
  //   kernel:     the force computation only (inputs already resident where the kernel runs).
  //   end_to_end: host-to-device copy of the bodies, kernel, device-to-host copy of the results.
  //               Identical to `kernel` on the CPU, where nothing moves.
  enum class Scope { kernel, end_to_end };
  // Seconds of one evaluation: all of it, and the force computation alone within it (its own
  // device events on the GPU), so that one end-to-end timing yields both figures. A run decomposed
  // over ranks or devices adds the all-gather of the slices to `total` and says how
  // long it took in `communication`; its `kernel` is the slowest slice's.
  struct Seconds {
    double total = 0;
    double kernel = 0;
    double communication = 0;  // within total: the all-gather of the slices; 0 in one process
    double tree_build = 0;     // within kernel: a tree formulation's build of its tree; else 0
    // Where nothing but the kernel was timed (kernel scope, the CPU).
    static Seconds kernel_only(double seconds) { return {seconds, seconds}; }
  };
  virtual Seconds evaluate(Scope scope) = 0;

  // Accelerations of the last evaluation, promoted to double, in body order: of the targets the
  // run was prepared for (ExecutionOptions::targets, all bodies by default), element k being body
  // targets.begin + k's.
  virtual std::vector<Vec3<double>> accelerations() = 0;

  // Tree formulations: the interactions the last evaluation really evaluated, counted (body-body
  // and body-cell, every target's), and what bounds its walk and build (nbody/tree_costs.hpp).
  // Empty for all-pairs ones, whose count is their pair scheme's.
  struct TreeInteractions {
    std::uint64_t body_body = 0;
    std::uint64_t body_cell = 0;
    std::optional<TreeCostModel> costs;
  };
  virtual std::optional<TreeInteractions> tree_interactions() const { return std::nullopt; }

  // Facts decided at prepare time that a reader needs (ISA chosen, threads, launch configuration).
  virtual std::map<std::string, std::string> details() const { return {}; }

  // Time integration on the host (simulate): replaces the bodies later evaluations read by
  // `bodies` (the same count), rounded to the run's precision and laid out as its kernel reads
  // them, outside any timing. Runs that cannot take new bodies keep this default, which throws.
  virtual void set_bodies(std::span<const Body<double>> bodies);
};

struct Implementation {
  ImplementationInfo info;
  // Empty when the implementation can run here; otherwise the reason it cannot (no GPU, ISA
  // missing, ...). Must be cheap and must not throw.
  std::function<std::optional<std::string>()> unavailable_reason;
  // Builds a run for the given float64 bodies (the implementation rounds them to its precision),
  // computing the accelerations of options.targets (all bodies when empty) from all of them.
  // Throws std::invalid_argument for a range it refuses (size_limit_reason says why first).
  std::function<std::unique_ptr<PreparedRun>(std::span<const Body<double>> bodies, double softening,
                                             const ExecutionOptions& options)>
      prepare;
  // Threads the run will use under `options` (recorded in results).
  std::function<int(const ExecutionOptions& options)> threads_used;
  // Optional: why N bodies cannot run (e.g. more than the GPU's free memory), or why this
  // formulation cannot compute only options.targets of them (symmetric pairs, which sum every body
  // at once; the GPU formulations for now), checked before anything is allocated. Empty function
  // or empty result: N is fine. Host memory is checked by the runner from bytes_per_body.
  std::function<std::optional<std::string>(std::size_t n, const ExecutionOptions& options)>
      size_limit_reason;
  // Optional: a time integration whose state stays where the kernel runs (the GPU's memory).
  // Empty: `simulate` integrates on the host around `prepare`'s run (make_simulation).
  std::function<std::unique_ptr<Simulation>(const SimulationSetup& setup)> simulate;
  // Tree formulations, as registered (at a default angle, under the plain name): this formulation
  // bound to the opening angle theta, named "<name>[theta=<theta>]", with theta's tolerance
  // (barnes_hut_tolerance). Registry::bind_opening_angles puts the bound ones in its place.
  std::function<Implementation(double theta)> at_opening_angle;

  // Why it cannot evaluate N bodies under `options`: unavailable here, or over its size limit.
  // Empty: it can (host memory aside, which the runner checks). Every command asks this first.
  std::optional<std::string> cannot_run(std::size_t n, const ExecutionOptions& options) const;
};

// An evaluation's seconds at N bodies predicted from one measured at `measured_n`: all-pairs work
// grows as N², a tree's as N log N. The one place the suite's plans and skips assume it.
double seconds_scaled_to(Algorithm algorithm, std::size_t n, std::size_t measured_n,
                         double measured_s);

// "cpu.tree[theta=0.5]": the name of a tree formulation bound to one opening angle.
std::string name_at_opening_angle(const std::string& name, double theta);

class Registry {
 public:
  // Throws std::logic_error on a duplicate name.
  void add(Implementation implementation);
  // Puts `implementation` in the place of the one of its name (a stand-in for an experiment, as
  // `run --extra-work`'s). Throws std::logic_error if none has that name.
  void replace(Implementation implementation);
  // Puts, in the place of each tree formulation as registered, the formulation bound to each of
  // `thetas` (Implementation::at_opening_angle), in that order: the angles a run sweeps.
  void bind_opening_angles(std::span<const double> thetas);
  const std::vector<Implementation>& all() const { return implementations_; }
  const Implementation* find(std::string_view name) const;
  // Checks of the user's ExecutionOptions that a part of the suite registers (an unknown --isa,
  // more --threads than the machine has); each throws UsageError. check_options runs them all,
  // before anything is measured or written.
  void add_option_check(std::function<void(const ExecutionOptions&)> check);
  void check_options(const ExecutionOptions& options) const;
  // Implementations whose name matches the ECMAScript regex (search, not full match), a tree
  // bound to an angle also by its own name (cpu.tree for cpu.tree[theta=0.5]), tuning variants
  // only when `include_variants`. Throws UsageError for an invalid regex or when nothing matches.
  std::vector<const Implementation*> select(const std::string& pattern,
                                            bool include_variants = false) const;
  // Implementations whose properties satisfy `predicate`, in registration order.
  std::vector<const Implementation*> where(
      const std::function<bool(const ImplementationInfo&)>& predicate) const;

 private:
  std::vector<Implementation> implementations_;
  std::vector<std::function<void(const ExecutionOptions&)>> option_checks_;
};

}  // namespace nbody
