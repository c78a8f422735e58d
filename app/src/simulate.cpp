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
// smaller N scaled by (N/n)^2 (all-pairs work), before a first evaluation at this N costs what the
// estimate saves. Every rank asks, in the same order, and agrees on the slowest's estimate.
std::optional<std::string> over_budget_from_smaller(const SimulateOptions& options,
                                                    const MeasuredStep& smaller, std::size_t n,
                                                    std::optional<double> budget_left_s) {
  // Below about 1K bodies a step is mostly fixed costs (threads woken, launches), which (N/n)^2
  // would multiply: a step at N = 7 once predicted 21 s at N = 200. The first step decides there.
  if (smaller.n < kSmallestScalableN) return std::nullopt;
  const double ratio = static_cast<double>(n) / static_cast<double>(smaller.n);
  double predicted = smaller.seconds * ratio * ratio * static_cast<double>(options.steps);
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

SimulationRecord simulate_one(const Implementation& impl, const SimulateOptions& options,
                              const SimulationInput& input, ProgressSink& progress,
                              std::size_t step_index, std::size_t total) {
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
  std::optional<std::string> skip = impl.unavailable_reason();
  if (!skip && impl.size_limit_reason) skip = impl.size_limit_reason(n, options.suite.execution);
  if (!skip && input.smaller) {
    skip = over_budget_from_smaller(options, *input.smaller, n, input.budget_left_s);
  }
  if (skip) {
    record.status = Status::skipped;
    record.reason = *skip;
    progress.update(step_index, total, label + ": skipped");
    return record;
  }
  const auto wall_start = Clock::now();
  progress.update(step_index, total, label + ": preparing");
  const SimulationSetup setup{.bodies = input.initial.bodies,
                              .velocities = input.initial.velocities,
                              .softening = options.suite.softening,
                              .execution = options.suite.execution};
  const auto prepare_start = Clock::now();
  std::unique_ptr<Simulation> simulation = make_simulation(impl, setup);
  // Preparing computed the first accelerations: one force evaluation, setup included, bounds a
  // step's cost from above for the time budget.
  double first_force_s = seconds_since(prepare_start);
  // Decomposed over processes, every one skips, or not, on the slowest one's figure.
  if (const auto& max_over = options.suite.timing.max_over_processes) {
    first_force_s = max_over(first_force_s);
  }
  // Over budget by that bound, one step measured alone decides (below): setup made cpu.tbb's
  // first evaluation at 64K read enough over a step to skip, on some days, a run that fits.
  const bool over_budget_with_setup =
      first_force_s * static_cast<double>(options.steps) > options.max_seconds;
  record.details = simulation->details();

  double diagnostics_s = 0, snapshots_s = 0;
  double stepped_s = 0, whole_s = 0, phase_total_s = 0, phase_force_s = 0, phase_integration_s = 0;
  double phase_communication_s = 0;
  std::int64_t whole_steps = 0, phase_steps = 0;
  std::optional<ConservedQuantities> initial_quantities;
  int snapshot_index = 0;
  const std::filesystem::path snapshot_folder =
      options.snapshot_dir / fmt::format("{}-N{}", impl.info.name, n);

  // Conservation at `done` steps; false (and the record failed) when the state is not finite.
  const auto check = [&](std::int64_t done) {
    const auto start = Clock::now();
    const PhaseSpaceState state = simulation->state();
    if (const auto bad = non_finite_body(state)) {
      record.status = Status::failed;
      record.reason = fmt::format("step {}: {}", done, *bad);
      diagnostics_s += seconds_since(start);
      return false;
    }
    const std::optional<double> potential = simulation->potential_energy();
    const ConservedQuantities q =
        potential ? conserved_quantities_given_potential(state.bodies, state.velocities, *potential)
                  : conserved_quantities(state.bodies, state.velocities, options.suite.softening);
    // Errors are measured from the formulation's own rounded initial state.
    if (!initial_quantities) initial_quantities = q;
    record.conservation.push_back(sample_of(q, *initial_quantities, done, options.dt));
    record.max_relative_energy_error = std::max(record.max_relative_energy_error,
                                                record.conservation.back().relative_energy_error);
    if (done == options.steps && input.reference_end) {
      record.divergence = TrajectoryDivergence{
          .steps = done,
          .position = relative_rms<Body<double>>(state.bodies, input.reference_end->bodies),
          .velocity = relative_rms<Vec3<double>>(state.velocities, input.reference_end->velocities),
          .reference_energy_error = input.reference_energy_error};
    }
    diagnostics_s += seconds_since(start);
    return true;
  };
  // `state`: the state at `done` where the simulation has moved on since (else its state now).
  const auto snapshot = [&](std::int64_t done, const PhaseSpaceState* state = nullptr) {
    const auto start = Clock::now();
    if (snapshot_index == 0) std::filesystem::create_directories(snapshot_folder);
    SnapshotData data;
    data.header = {.time = static_cast<double>(done) * options.dt,
                   .step = done,
                   .softening = options.suite.softening,
                   .dt = options.dt,
                   .implementation = impl.info.name,
                   .precision = std::string(to_string(impl.info.precision)),
                   .initial_condition = record.initial_condition,
                   .seed = options.suite.seed};
    data.state = state != nullptr ? *state : simulation->state();
    write_snapshot(snapshot_path(snapshot_folder, snapshot_index++), data);
    snapshots_s += seconds_since(start);
  };

  std::int64_t done = 0;
  // Steps from `done` to `end`, timed by phase while within the first phase_steps; returns their
  // seconds.
  const auto step_to = [&](std::int64_t end) {
    const bool time_phases = done < options.phase_steps;
    const int count = static_cast<int>(end - done);
    const StepSeconds seconds = simulation->advance(count, options.dt, time_phases);
    if (seconds.phases) {
      phase_total_s += seconds.total;
      phase_force_s += seconds.force;
      phase_integration_s += seconds.integration;
      phase_communication_s += seconds.communication;
      phase_steps += count;
    }
    if (!time_phases) {
      whole_s += seconds.total;
      whole_steps += count;
    }
    stepped_s += seconds.total;
    done = end;
    return seconds.total / static_cast<double>(count);
  };
  // The diagnostics and snapshot due after `done` steps; false where the state went non-finite.
  const auto after_steps = [&] {
    bool finite = true;
    const bool diagnose =
        done == options.steps || (options.diag_every > 0 && done % options.diag_every == 0);
    if (diagnose) finite = check(done);
    if (finite && options.snapshot_every > 0 &&
        (done % options.snapshot_every == 0 || done == options.steps)) {
      snapshot(done);
    }
    return finite;
  };

  bool finite = check(0);
  if (finite && over_budget_with_setup) {
    // Snapshot 0 waits for the decision: a skipped simulation writes nothing.
    std::optional<PhaseSpaceState> start_state;
    if (options.snapshot_every > 0) start_state = simulation->state();
    double step_s = step_to(1);
    if (const auto& max_over = options.suite.timing.max_over_processes) step_s = max_over(step_s);
    const double predicted = step_s * static_cast<double>(options.steps);
    if (predicted > options.max_seconds) {
      record.status = Status::skipped;
      record.reason = fmt::format(
          "{} steps predicted to take {:.0f} s (one step {:.3g} s; the first force evaluation "
          "with setup {:.3g} s), over the --max-seconds budget of {:.0f} s",
          options.steps, predicted, step_s, first_force_s, options.max_seconds);
      record.conservation.clear();
      record.max_relative_energy_error = 0;
      record.details.clear();
      progress.update(step_index, total, label + ": skipped");
      return record;
    }
    if (start_state) snapshot(0, &*start_state);
    finite = after_steps();
  } else if (finite && options.snapshot_every > 0) {
    snapshot(0);
  }
  while (finite && done < options.steps) {
    if (interrupt_requested()) break;
    progress.update(step_index, total,
                    fmt::format("{}: step {} of {}", label, done, options.steps));
    std::int64_t end = chunk_end(done, options);
    if (done < options.phase_steps) end = std::min(end, options.phase_steps);
    step_to(end);
    finite = after_steps();
  }
  record.steps = done;
  record.wall_seconds = seconds_since(wall_start);
  if (done > 0) {
    StepSplit& split = record.per_step;
    // Where every step was timed by phase (the host, where that costs nothing) they all count;
    // otherwise a step is what the whole steps (the GPU's graphs) took.
    split.step_s = phase_steps == done || whole_steps == 0
                       ? phase_total_s / static_cast<double>(phase_steps)
                       : whole_s / static_cast<double>(whole_steps);
    if (phase_steps > 0 && phase_total_s > 0) {
      // The phase-timed steps' shares of a step, applied to the step's time: subtracting their
      // own averages from whole steps' left a remainder of +-2 us of noise at small N on the GPU.
      const double scale = split.step_s / (phase_total_s / static_cast<double>(phase_steps));
      split.force_s = scale * phase_force_s / static_cast<double>(phase_steps);
      split.integration_s = scale * phase_integration_s / static_cast<double>(phase_steps);
      split.communication_s = scale * phase_communication_s / static_cast<double>(phase_steps);
    }
    split.other_s = split.step_s - split.force_s - split.integration_s;
    split.diagnostics_s = diagnostics_s / static_cast<double>(done);
    split.snapshots_s = snapshots_s / static_cast<double>(done);
    const double stepping_s = stepped_s + diagnostics_s + snapshots_s;
    record.steps_per_second = static_cast<double>(done) / stepping_s;
  }
  if (record.status != Status::failed && done < options.steps) {
    record.status = Status::failed;
    record.reason = fmt::format("interrupted after {} of {} steps", done, options.steps);
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
        record = simulate_one(
            *impl, options, {initial, reference_end, reference_energy_error, smaller, budget_left},
            context.progress, step_index, total);
        if (record.status == Status::ok && record.steps > 0) {  // as on every rank
          last_step[impl->info.name] = {.n = n, .seconds = record.per_step.step_s};
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
  return doc;
}

}  // namespace nbody
