#include "nbody/app/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "nbody/diagnostics.hpp"
#include "nbody/errors.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/io/snapshot.hpp"
#include "nbody/simulation.hpp"
#include "nbody/sizes.hpp"
#include "nbody/steady_clock.hpp"

namespace nbody {
namespace {

using Clock = SteadyClock;

ConservationSample sample_of(const ConservedQuantities& q, const ConservedQuantities& initial,
                             std::int64_t step, double dt) {
  return {.step = step,
          .time = static_cast<double>(step) * dt,
          .kinetic_energy = q.kinetic_energy,
          .potential_energy = q.potential_energy,
          .relative_energy_error = relative_energy_error(q, initial),
          .momentum = {q.momentum.x, q.momentum.y, q.momentum.z},
          .angular_momentum = {q.angular_momentum.x, q.angular_momentum.y, q.angular_momentum.z},
          .virial_ratio = q.virial_ratio()};
}

// The first body whose position or velocity is not finite, in words; empty when all are.
std::optional<std::string> non_finite_body(const PhaseSpaceState& state) {
  for (std::size_t i = 0; i < state.bodies.size(); ++i) {
    const Body<double>& b = state.bodies[i];
    const Vec3<double>& v = state.velocities[i];
    if (!std::isfinite(b.x) || !std::isfinite(b.y) || !std::isfinite(b.z))
      return fmt::format("body {} has a non-finite position", i);
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
      return fmt::format("body {} has a non-finite velocity", i);
  }
  return std::nullopt;
}

// RMS of |a - b| over the RMS of |b|.
template <class V>
double relative_rms(std::span<const V> a, std::span<const V> b) {
  CompensatedSum difference, scale;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double dx = a[i].x - b[i].x, dy = a[i].y - b[i].y, dz = a[i].z - b[i].z;
    difference.add(dx * dx + dy * dy + dz * dz);
    scale.add(b[i].x * b[i].x + b[i].y * b[i].y + b[i].z * b[i].z);
  }
  return scale.value() > 0 ? std::sqrt(difference.value() / scale.value()) : 0.0;
}

PhaseSpaceState generated_state(const SimulateOptions& options, std::size_t n) {
  Snapshot snapshot =
      make_initial_condition(options.suite.initial_condition, n, options.suite.seed);
  return {std::move(snapshot.bodies), std::move(snapshot.velocities)};
}

// Steps until the next diagnostic or snapshot boundary (or the end).
std::int64_t chunk_end(std::int64_t done, const SimulateOptions& options) {
  std::int64_t end = options.steps;
  for (const std::int64_t every : {options.diag_every, options.snapshot_every}) {
    if (every > 0) end = std::min(end, (done / every + 1) * every);
  }
  return end;
}

// The smallest N whose step time scales as N^2 closely enough to predict a larger N's.
constexpr std::size_t kSmallestScalableN = 1024;

// A step's seconds at a smaller N, for the budget's estimate before anything is prepared.
struct MeasuredStep {
  std::size_t n = 0;
  double seconds = 0;
};

struct SimulationInput {
  const PhaseSpaceState& initial;
  const std::optional<PhaseSpaceState>& reference_end;  // the float64 trajectory's last state
  double reference_energy_error;        // of that last state against the initial one
  std::optional<MeasuredStep> smaller;  // this formulation's step at the last smaller N
  std::optional<double> budget_left_s;  // of SimulateOptions::budget_s; empty: no budget
};

// Why the simulation would overrun --max-seconds, or what is left of --budget, from its step at a
// smaller N scaled to this one (seconds_scaled_to), before a first evaluation at this N costs what
// the estimate saves. Every rank asks, in the same order, and agrees on the slowest's estimate.
std::optional<std::string> over_budget_from_smaller(const SimulateOptions& options,
                                                    Algorithm algorithm,
                                                    const MeasuredStep& smaller, std::size_t n,
                                                    std::optional<double> budget_left_s) {
  // Below about 1K bodies a step is mostly fixed costs (threads woken, launches), which (N/n)^2
  // would multiply: a step at N = 7 once predicted 21 s at N = 200. The first step decides there.
  if (smaller.n < kSmallestScalableN) return std::nullopt;
  double predicted = seconds_scaled_to(algorithm, n, smaller.n, smaller.seconds) *
                     static_cast<double>(options.steps);
  if (const auto& max_over = options.suite.timing.max_over_processes)
    predicted = max_over(predicted);
  if (predicted > options.max_seconds) {
    return fmt::format(
        "{} steps estimated to take {:.0f} s (a step at N = {} took {:.3g} s; × (N/{})² here), "
        "over the --max-seconds budget of {:.0f} s",
        options.steps, predicted, format_size(smaller.n), smaller.seconds, format_size(smaller.n),
        options.max_seconds);
  }
  if (budget_left_s && predicted > *budget_left_s) {
    return fmt::format(
        "left out by the budget: {} steps estimated to take {:.0f} s (a step at N = {} took "
        "{:.3g} s) where {:.0f} s of the --budget were left",
        options.steps, predicted, format_size(smaller.n), smaller.seconds,
        std::max(0.0, *budget_left_s));
  }
  return std::nullopt;
}

// Why this formulation does not simulate at this N: unavailable, over its size limit, or
// estimated from its step at a smaller N to overrun the budget.
std::optional<std::string> why_skip(const Implementation& impl, const SimulateOptions& options,
                                    const SimulationInput& input) {
  const std::size_t n = input.initial.bodies.size();
  std::optional<std::string> skip = impl.cannot_run(n, options.suite.execution);
  if (!skip && input.smaller) {
    skip = over_budget_from_smaller(options, impl.info.algorithm, *input.smaller, n,
                                    input.budget_left_s);
  }
  return skip;
}

// One simulation in progress: the steps, the conservation checks and snapshots due between them,
// and the seconds each took, for the record's split of a step.
class SimulationRun {
 public:
  SimulationRun(const Implementation& impl, const SimulateOptions& options,
                const SimulationInput& input, SimulationRecord& record)
      : impl_(impl),
        options_(options),
        input_(input),
        record_(record),
        snapshot_folder_(options.snapshot_dir /
                         fmt::format("{}-N{}", impl.info.name, input.initial.bodies.size())) {}

  // Prepares the simulation (its first force evaluation); returns that evaluation's seconds, setup
  // included, the slowest process's where the simulation is decomposed.
  double prepare() {
    const SimulationSetup setup{.bodies = input_.initial.bodies,
                                .velocities = input_.initial.velocities,
                                .softening = options_.suite.softening,
                                .execution = options_.suite.execution};
    const auto start = Clock::now();
    simulation_ = make_simulation(impl_, setup);
    double first_force_s = seconds_since(start);
    if (const auto& max_over = options_.suite.timing.max_over_processes) {
      first_force_s = max_over(first_force_s);
    }
    record_.details = simulation_->details();
    return first_force_s;
  }

  // Conservation at `done` steps; false (and the record failed) where the state is not finite.
  bool check(std::int64_t done) {
    const auto start = Clock::now();
    const PhaseSpaceState state = simulation_->state();
    if (const auto bad = non_finite_body(state)) {
      record_.status = Status::failed;
      record_.reason = fmt::format("step {}: {}", done, *bad);
      diagnostics_s_ += seconds_since(start);
      return false;
    }
    const std::optional<double> potential = simulation_->potential_energy();
    const ConservedQuantities q =
        potential ? conserved_quantities_given_potential(state.bodies, state.velocities, *potential)
                  : conserved_quantities(state.bodies, state.velocities, options_.suite.softening);
    // Errors are measured from the formulation's own rounded initial state.
    if (!initial_quantities_) initial_quantities_ = q;
    record_.conservation.push_back(sample_of(q, *initial_quantities_, done, options_.dt));
    record_.max_relative_energy_error = std::max(record_.max_relative_energy_error,
                                                 record_.conservation.back().relative_energy_error);
    if (done == options_.steps && input_.reference_end) {
      const PhaseSpaceState& end = *input_.reference_end;
      record_.divergence = TrajectoryDivergence{
          .steps = done,
          .position = relative_rms<Body<double>>(state.bodies, end.bodies),
          .velocity = relative_rms<Vec3<double>>(state.velocities, end.velocities),
          .reference_energy_error = input_.reference_energy_error};
    }
    diagnostics_s_ += seconds_since(start);
    return true;
  }

  // A snapshot at `done` steps of `state`, where the simulation has moved on since (else of its
  // state now).
  void snapshot(std::int64_t done, const PhaseSpaceState* state = nullptr) {
    const auto start = Clock::now();
    if (snapshot_index_ == 0) std::filesystem::create_directories(snapshot_folder_);
    SnapshotData data;
    data.header = {.time = static_cast<double>(done) * options_.dt,
                   .step = done,
                   .softening = options_.suite.softening,
                   .dt = options_.dt,
                   .implementation = impl_.info.name,
                   .precision = std::string(to_string(impl_.info.precision)),
                   .initial_condition = record_.initial_condition,
                   .seed = options_.suite.seed};
    data.state = state != nullptr ? *state : simulation_->state();
    write_snapshot(snapshot_path(snapshot_folder_, snapshot_index_++), data);
    snapshots_s_ += seconds_since(start);
  }

  // Steps from done() to `end`, timed by phase while within the first phase_steps; returns the
  // seconds of one of them.
  double step_to(std::int64_t end) {
    const bool time_phases = done_ < options_.phase_steps;
    const int count = static_cast<int>(end - done_);
    const StepSeconds seconds = simulation_->advance(count, options_.dt, time_phases);
    if (seconds.phases) {
      phase_total_s_ += seconds.total;
      phase_force_s_ += seconds.force;
      phase_integration_s_ += seconds.integration;
      phase_communication_s_ += seconds.communication;
      phase_tree_build_s_ += seconds.tree_build;
      phase_steps_ += count;
    }
    if (!time_phases) {
      whole_s_ += seconds.total;
      whole_steps_ += count;
    }
    stepped_s_ += seconds.total;
    done_ = end;
    return seconds.total / static_cast<double>(count);
  }

  // The diagnostics and snapshot due after done() steps; false where the state went non-finite.
  bool after_steps() {
    bool finite = true;
    const bool diagnose =
        done_ == options_.steps || (options_.diag_every > 0 && done_ % options_.diag_every == 0);
    if (diagnose) finite = check(done_);
    if (finite && options_.snapshot_every > 0 &&
        (done_ % options_.snapshot_every == 0 || done_ == options_.steps)) {
      snapshot(done_);
    }
    return finite;
  }

  PhaseSpaceState state() { return simulation_->state(); }
  std::int64_t done() const { return done_; }

  // The record's steps, per-step split and rate from what was measured.
  void finish() {
    record_.steps = done_;
    if (done_ == 0) return;
    const auto steps = static_cast<double>(done_);
    StepSplit& split = record_.per_step;
    const auto phase_steps = static_cast<double>(phase_steps_);
    // Where every step was timed by phase (the host, where that costs nothing) they all count;
    // otherwise a step is what the whole steps (the GPU's graphs) took.
    split.step_s = phase_steps_ == done_ || whole_steps_ == 0
                       ? phase_total_s_ / phase_steps
                       : whole_s_ / static_cast<double>(whole_steps_);
    if (phase_steps_ > 0 && phase_total_s_ > 0) {
      // The phase-timed steps' shares of a step, applied to the step's time: subtracting their
      // own averages from whole steps' left a remainder of +-2 us of noise at small N on the GPU.
      const double scale = split.step_s / (phase_total_s_ / phase_steps);
      split.force_s = scale * phase_force_s_ / phase_steps;
      split.integration_s = scale * phase_integration_s_ / phase_steps;
      split.communication_s = scale * phase_communication_s_ / phase_steps;
      split.tree_build_s = scale * phase_tree_build_s_ / phase_steps;
    }
    split.other_s = split.step_s - split.force_s - split.integration_s;
    split.diagnostics_s = diagnostics_s_ / steps;
    split.snapshots_s = snapshots_s_ / steps;
    record_.steps_per_second = steps / (stepped_s_ + diagnostics_s_ + snapshots_s_);
  }

 private:
  const Implementation& impl_;
  const SimulateOptions& options_;
  const SimulationInput& input_;
  SimulationRecord& record_;
  std::filesystem::path snapshot_folder_;
  std::unique_ptr<Simulation> simulation_;
  std::optional<ConservedQuantities> initial_quantities_;
  int snapshot_index_ = 0;
  std::int64_t done_ = 0, whole_steps_ = 0, phase_steps_ = 0;
  double diagnostics_s_ = 0, snapshots_s_ = 0, stepped_s_ = 0, whole_s_ = 0;
  double phase_total_s_ = 0, phase_force_s_ = 0, phase_integration_s_ = 0;
  double phase_communication_s_ = 0;
  double phase_tree_build_s_ = 0;
};

// Where the first force evaluation with its setup says the steps would overrun --max-seconds,
// one step measured alone decides: setup made cpu.tbb's first evaluation at 64K read enough over
// a step to skip, on some days, a run that fits. Returns why it is skipped, or nothing (the step
// taken, its diagnostics and snapshots done; `finite` false where the state went non-finite).
// `step_s` is the step measured, which says what a step costs here even where it is skipped.
std::optional<std::string> decide_on_one_step(SimulationRun& run, const SimulateOptions& options,
                                              double first_force_s, bool& finite, double& step_s) {
  // Snapshot 0 waits for the decision: a skipped simulation writes nothing.
  std::optional<PhaseSpaceState> start_state;
  if (options.snapshot_every > 0) start_state = run.state();
  step_s = run.step_to(1);
  if (const auto& max_over = options.suite.timing.max_over_processes) step_s = max_over(step_s);
  const double predicted = step_s * static_cast<double>(options.steps);
  if (predicted > options.max_seconds) {
    return fmt::format(
        "{} steps predicted to take {:.0f} s (one step {:.3g} s; the first force evaluation "
        "with setup {:.3g} s), over the --max-seconds budget of {:.0f} s",
        options.steps, predicted, step_s, first_force_s, options.max_seconds);
  }
  if (start_state) run.snapshot(0, &*start_state);
  finite = run.after_steps();
  return std::nullopt;
}

// `skipped_step_s`: the one step measured where it alone decided to skip the simulation. A slower
// machine (or a sanitized build) that skips N = 1K so still estimates N = 1M from it, rather than
// preparing 1M's bodies and first force evaluation, which take hours there.
SimulationRecord simulate_one(const Implementation& impl, const SimulateOptions& options,
                              const SimulationInput& input, ProgressSink& progress,
                              std::size_t step_index, std::size_t total,
                              std::optional<double>& skipped_step_s,
                              const EnergyObservation& energy) {
  const std::size_t n = input.initial.bodies.size();
  SimulationRecord record;
  record.implementation = impl.info.name;
  record.initial_condition =
      options.initial_state ? "file" : std::string(to_string(options.suite.initial_condition));
  record.n = n;
  record.dt = options.dt;
  record.input_hash = hash_to_hex(input_hash(input.initial.bodies));
  record.threads = impl.threads_used(options.suite.execution);
  const std::string label = fmt::format("{} N={}", impl.info.name, format_size(n));
  const auto skipped = [&](const std::string& why) {
    record.status = Status::skipped;
    record.reason = why;
    progress.update(step_index, total, label + ": skipped");
    return record;
  };
  if (const auto skip = why_skip(impl, options, input)) return skipped(*skip);
  const auto wall_start = Clock::now();
  progress.update(step_index, total, label + ": preparing");
  SimulationRun run(impl, options, input, record);
  // One force evaluation, setup included, bounds a step's cost from above.
  const double first_force_s = run.prepare();
  bool finite = run.check(0);
  if (finite && first_force_s * static_cast<double>(options.steps) > options.max_seconds) {
    double step_s = 0;
    if (const auto skip = decide_on_one_step(run, options, first_force_s, finite, step_s)) {
      skipped_step_s = step_s;
      record.conservation.clear();
      record.max_relative_energy_error = 0;
      record.details.clear();
      return skipped(*skip);
    }
  } else if (finite && options.snapshot_every > 0) {
    run.snapshot(0);
  }
  const std::int64_t steps_before = run.done();
  EnergyReading steps_energy(&energy);
  while (finite && run.done() < options.steps) {
    if (interrupt_requested()) break;
    progress.update(step_index, total,
                    fmt::format("{}: step {} of {}", label, run.done(), options.steps));
    std::int64_t end = chunk_end(run.done(), options);
    if (run.done() < options.phase_steps) end = std::min(end, options.phase_steps);
    run.step_to(end);
    finite = run.after_steps();
  }
  record.energy = steps_energy.close(run.done() - steps_before);
  run.finish();
  record.wall_seconds = seconds_since(wall_start);
  if (record.status != Status::failed && run.done() < options.steps) {
    record.status = Status::failed;
    record.reason = fmt::format("interrupted after {} of {} steps", run.done(), options.steps);
  }
  return record;
}

}  // namespace

std::vector<std::size_t> default_simulation_sizes() {
  return {1024, 4096, 16384, 65536};
}

ResultsDocument run_simulations(const SuiteContext& context, const SimulateOptions& options) {
  const auto started = Clock::now();
  const std::vector<const Implementation*> selected =
      context.registry.select(options.suite.implementation_pattern);
  SuiteOptions suite = options.suite;
  if (options.initial_state) {
    suite.sizes = {options.initial_state->bodies.size()};
  } else if (suite.sizes.empty()) {
    suite.sizes = default_simulation_sizes();
  }
  ResultsDocument doc = make_document(context, suite, SuiteMode::run, selected);
  RunSettings& s = doc.settings;
  s.command = "simulate";
  s.initial_condition = options.initial_state ? "file" : s.initial_condition;
  s.counters = false;
  s.repetitions = 0;
  s.min_time_s = 0;
  s.warmup_s = 0;
  s.separate_kernel_timing_below_s = 0;
  s.dt = options.dt;
  s.steps = options.steps;
  s.diag_every = options.diag_every;
  s.snapshot_every = options.snapshot_every;
  s.phase_steps = options.phase_steps;
  s.divergence_up_to = options.divergence_up_to;
  s.ic_file = options.ic_file;

  const std::size_t total = suite.sizes.size() * selected.size();
  std::size_t step_index = 0;
  std::map<std::string, MeasuredStep> last_step;  // per formulation, at the largest N done
  // Over ranks each would read its own clock: no budget there (SimulateOptions::budget_s).
  const double budget = options.suite.timing.max_over_processes ? 0
                        : options.budget_s                      ? *options.budget_s
                        : options.suite.sizes.empty()           ? 100
                                                                : 0;
  for (const std::size_t n : suite.sizes) {
    if (interrupt_requested()) break;
    const PhaseSpaceState initial =
        options.initial_state ? *options.initial_state : generated_state(options, n);
    if (!options.initial_state) {
      doc.inputs.push_back(
          {std::string(to_string(options.suite.initial_condition)), n, options.suite.seed,
           hash_to_hex(input_hash(initial.bodies)),
           hash_to_hex(input_hash(convert_precision<float, double>(initial.bodies)))});
    }
    std::optional<PhaseSpaceState> reference_end;
    double reference_energy_error = 0;
    if (n <= options.divergence_up_to) {
      context.progress.update(step_index, total,
                              fmt::format("float64 trajectory N={}", format_size(n)));
      PhaseSpaceState reference = initial;
      std::vector<Vec3<double>> accelerations;
      leapfrog(reference, options.dt, static_cast<int>(options.steps),
               reference_field(options.suite.softening), accelerations);
      reference_energy_error = relative_energy_error(
          conserved_quantities(reference.bodies, reference.velocities, options.suite.softening),
          conserved_quantities(initial.bodies, initial.velocities, options.suite.softening));
      reference_end = std::move(reference);
    }
    for (const Implementation* impl : selected) {
      if (interrupt_requested()) break;
      SimulationRecord record;
      try {
        std::optional<MeasuredStep> smaller;
        if (const auto it = last_step.find(impl->info.name); it != last_step.end()) {
          smaller = it->second;
        }
        std::optional<double> budget_left;
        if (budget > 0) budget_left = budget - seconds_since(started);
        std::optional<double> skipped_step_s;
        record = simulate_one(
            *impl, options, {initial, reference_end, reference_energy_error, smaller, budget_left},
            context.progress, step_index, total, skipped_step_s,
            context.energy ? context.energy->observe(impl->info.device) : EnergyObservation{});
        if (record.status == Status::ok && record.steps > 0) {  // as on every rank
          last_step[impl->info.name] = {.n = n, .seconds = record.per_step.step_s};
        } else if (skipped_step_s) {
          last_step[impl->info.name] = {.n = n, .seconds = *skipped_step_s};
        }
      } catch (const UsageError&) {
        throw;
      } catch (const std::exception& e) {
        record.implementation = impl->info.name;
        record.n = n;
        record.status = Status::failed;
        record.reason = e.what();
      }
      ++step_index;
      doc.simulations.push_back(std::move(record));
      if (context.checkpoint) context.checkpoint(doc);
    }
  }
  context.progress.finish();
  doc.interrupted = interrupt_requested();
  doc.complete = !doc.interrupted && doc.simulations.size() == total;
  doc.phase_seconds["measurements"] = seconds_since(started);
  if (context.checkpoint) context.checkpoint(doc);
  return doc;
}

}  // namespace nbody
