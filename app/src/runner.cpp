#include "nbody/app/runner.hpp"

#include "nbody/app/run_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <unistd.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/build_description.hpp"
#include "nbody/errors.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/reference.hpp"
#include "nbody/sizes.hpp"

namespace nbody {
namespace {

RateFigures rates(const TimingStatistics& t, double credited_interactions) {
  RateFigures r;
  r.interactions_per_second = credited_interactions / t.median_s;
  r.interactions_per_second_min = credited_interactions / t.max_s;
  r.interactions_per_second_max = credited_interactions / t.min_s;
  r.gflops_at_20 = r.interactions_per_second * kConventionalFlopsPerInteraction * 1e-9;
  return r;
}

ImplementationRecord describe(const Implementation& impl, const ExecutionOptions& execution) {
  const std::optional<std::string> reason = impl.unavailable_reason();
  return ImplementationRecord(impl.info, !reason.has_value(), reason.value_or(""),
                              impl.threads_used(execution));
}

// Inputs as a formulation of the given precision sees them, promoted back to double: the
// reference must be computed on exactly these values.
std::vector<Body<double>> as_seen_by(Precision precision, const std::vector<Body<double>>& bodies) {
  if (precision == Precision::f64) return bodies;
  return convert_precision<double, float>(convert_precision<float, double>(bodies));
}

std::string describe_failure(const AccuracyRecord& a) {
  return fmt::format(
      "accuracy: relative L2 {:.3g} (bound {:.3g}), max relative {:.3g} (bound {:.3g})",
      a.metrics.relative_l2, a.relative_l2_bound, a.metrics.max_relative, a.max_relative_bound);
}

class StderrProgress final : public ProgressSink {
 public:
  StderrProgress()
      : tty_(::isatty(STDERR_FILENO) == 1), started_(std::chrono::steady_clock::now()) {}
  void update(std::size_t step, std::size_t total, const std::string& what) override {
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::steady_clock::now() - started_)
                             .count();
    const std::string line =
        fmt::format("[{}/{} {}:{:02}] {}", step, total, elapsed / 60, elapsed % 60, what);
    if (tty_) {
      fmt::print(stderr, "\r\033[K{}", line);
    } else {
      fmt::print(stderr, "{}\n", line);
    }
    std::fflush(stderr);
  }
  void finish() override {
    if (tty_) fmt::print(stderr, "\r\033[K");
  }

 private:
  bool tty_;
  std::chrono::steady_clock::time_point started_;
};

class SilentProgress final : public ProgressSink {
 public:
  void update(std::size_t, std::size_t, const std::string&) override {}
  void finish() override {}
};

constexpr std::size_t kFirstProbeSize = 1024;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Adds the wall time of its scope to phase `name` of `phases`.
class PhaseTimer {
 public:
  PhaseTimer(std::map<std::string, double>& phases, std::string name)
      : phases_(phases), name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    phases_[name_] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  std::map<std::string, double>& phases_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

// Seconds of an evaluation on the run's clock and on the host's: the medians of a few while they
// stay short (one evaluation at a small N reads well off on a shared machine).
std::pair<double, double> probe_evaluations(PreparedRun& run, PreparedRun::Scope scope) {
  constexpr int kMostEvaluations = 5;
  constexpr double kShortS = 0.02;
  std::vector<double> own, wall;
  double spent = 0;
  while (own.size() < kMostEvaluations && (own.empty() || spent < kShortS)) {
    const auto start = std::chrono::steady_clock::now();
    const PreparedRun::Seconds seconds = run.evaluate(scope);
    wall.push_back(seconds_since(start));
    own.push_back(scope == PreparedRun::Scope::kernel ? seconds.kernel : seconds.total);
    spent += wall.back();
  }
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(own), median(wall)};
}

// The inputs probes run on, generated once per probe size and shared by every formulation.
class ProbeInputs {
 public:
  explicit ProbeInputs(const SuiteOptions& options) : options_(options) {}
  const Snapshot& at(std::size_t n) {
    auto it = snapshots_.find(n);
    if (it == snapshots_.end()) {
      const auto start = std::chrono::steady_clock::now();
      it = snapshots_
               .emplace(n, make_initial_condition(options_.initial_condition, n, options_.seed))
               .first;
      generation_s_[n] = seconds_since(start);
    }
    return it->second;
  }
  // Seconds generating the input of N took (0 where none was).
  double generation_s(std::size_t n) const {
    const auto it = generation_s_.find(n);
    return it == generation_s_.end() ? 0 : it->second;
  }

 private:
  const SuiteOptions& options_;
  std::map<std::size_t, Snapshot> snapshots_;
  std::map<std::size_t, double> generation_s_;
};

// One formulation's probes, from 1K up by factors of four below `n` while the next would stay well
// inside --max-eval-seconds: a GPU is only busy, and so only shows its large-N rate, at large N.
// Empty if a probe fails (the real run will say why).
std::optional<ProbeCurve> probe_curve(const Implementation& impl, const SuiteOptions& options,
                                      std::size_t n, ProbeInputs& inputs) {
  ProbeCurve curve;
  try {
    for (std::size_t probe_n = kFirstProbeSize; probe_n < n; probe_n *= 4) {
      if (!curve.empty() && curve.back().kernel_s * 16 > options.max_eval_seconds / 4) break;
      const Snapshot& snapshot = inputs.at(probe_n);
      ProbeFigures figures{.n = probe_n};
      const auto start = std::chrono::steady_clock::now();
      auto run = impl.prepare(snapshot.bodies, options.softening, options.execution);
      figures.prepare_s = seconds_since(start);
      run->evaluate(PreparedRun::Scope::kernel);  // warm-up
      std::tie(figures.kernel_s, figures.kernel_wall_s) =
          probe_evaluations(*run, PreparedRun::Scope::kernel);
      if (impl.info.device == DeviceKind::gpu) {
        std::tie(figures.end_to_end_s, figures.end_to_end_wall_s) =
            probe_evaluations(*run, PreparedRun::Scope::end_to_end);
      }
      curve.push_back(figures);
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return curve;
}

// Seconds of one evaluation at a probe size below `n`, for an implementation that has not run yet
// in this suite, so a first large N cannot start an evaluation of hours. Empty if a probe fails.
std::optional<std::pair<std::size_t, double>> probe_evaluation_time(const Implementation& impl,
                                                                    const SuiteOptions& options,
                                                                    std::size_t n) {
  ProbeInputs inputs(options);
  const auto curve = probe_curve(impl, options, n, inputs);
  if (!curve || curve->empty()) return std::nullopt;
  return std::pair{curve->back().n, curve->back().kernel_s};
}

// What each size costs once: its input generated and hashed as the run does (measured at the
// largest probe size), and the float64 reference's seconds per interaction (a sample of targets).
SizeCosts measure_size_costs(const SuiteOptions& options, ProbeInputs& inputs,
                             std::size_t largest_probe) {
  SizeCosts costs{.validation_bodies = options.validation_bodies};
  const Snapshot& snapshot = inputs.at(largest_probe);  // generated, and timed, by the probes
  auto start = std::chrono::steady_clock::now();
  (void)hash_to_hex(input_hash(snapshot.bodies));
  (void)hash_to_hex(input_hash(convert_precision<float, double>(snapshot.bodies)));
  costs.input_seconds_per_body = (inputs.generation_s(largest_probe) + seconds_since(start)) /
                                 static_cast<double>(largest_probe);
  constexpr std::size_t kReferenceBodies = 16384, kReferenceTargets = 2048;
  const Snapshot& sample = inputs.at(kReferenceBodies);
  const std::vector<std::uint32_t> targets =
      validation_targets(kReferenceBodies, kReferenceTargets);
  start = std::chrono::steady_clock::now();
  (void)reference_accelerations(sample.bodies, options.softening, targets);
  costs.reference_seconds_per_interaction =
      seconds_since(start) / static_cast<double>(kReferenceBodies * kReferenceTargets);
  return costs;
}

// The budget a run's measurements are planned within (SuiteOptions::budget_s), 0 for none.
double budget_of(const SuiteOptions& options, std::span<const Implementation* const> selected,
                 bool decomposed) {
  if (decomposed) return 0;  // every rank would have to agree on the plan
  if (options.budget_s) return *options.budget_s;
  if (!options.sizes.empty()) return 0;
  return selects_usable_gpu(selected) ? 150 : 75;
}

// How many attempts a timing is expected to take: all of --max-attempts where other processes or
// the hypervisor took more than their share of the CPUs while the probes ran, else one.
int expected_attempts(const std::optional<CpuActivity>& before, const SuiteOptions& options) {
  const std::optional<CpuActivity> after = sample_cpu_activity();
  if (!before || !after) return 1;
  const MeasurementConditions c = conditions_between(*before, *after);
  return c.other_processes_cpu_share + c.steal_cpu_share > kMaxOtherCpuShare
             ? std::max(1, options.timing.max_attempts)
             : 1;
}

// The plan of a run at `options.sizes` within `budget` seconds, announced, its figures in `doc`;
// empty where the budget is 0.
std::optional<RunPlan> plan_within_budget(const SuiteContext& context, const SuiteOptions& options,
                                          std::span<const Implementation* const> selected,
                                          const std::vector<std::size_t>& counter_sizes,
                                          double budget, ResultsDocument& doc) {
  if (budget <= 0) return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  const std::optional<CpuActivity> before = sample_cpu_activity();
  context.progress.update(0, options.sizes.size() * selected.size(),
                          "planning: each formulation's evaluation time");
  const std::size_t probe_below =
      std::max(2 * kFirstProbeSize, *std::max_element(options.sizes.begin(), options.sizes.end()));
  ProbeInputs probe_inputs(options);
  PlanInputs inputs;
  std::size_t largest_probe = kFirstProbeSize;
  for (const Implementation* impl : selected) {
    if (impl->unavailable_reason()) continue;
    if (auto curve = probe_curve(*impl, options, probe_below, probe_inputs)) {
      if (!curve->empty()) largest_probe = std::max(largest_probe, curve->back().n);
      inputs.probes[impl->info.name] = std::move(*curve);
    }
  }
  inputs.size_costs = measure_size_costs(options, probe_inputs, largest_probe);
  inputs.expected_attempts = expected_attempts(before, options);
  inputs.spent_s = context.ceilings_seconds + seconds_since(started);
  RunPlan plan = plan_run(selected, options, options.sizes, counter_sizes, budget, inputs);
  doc.settings.budget_s = budget;
  doc.phase_seconds["planned"] = plan.planned_s;
  doc.phase_seconds["planning"] = seconds_since(started);
  if (context.announce) context.announce(plan.describe());
  return plan;
}

// The sizes whose measurements read counters (SuiteOptions::counter_sizes).
std::vector<std::size_t> sizes_with_counters(const SuiteOptions& options) {
  if (!options.counters) return {};
  if (options.counters_at_every_size) return options.sizes;
  if (!options.counter_sizes.empty()) return options.counter_sizes;
  constexpr std::size_t kLargestDefault = 65536;
  std::optional<std::size_t> chosen;
  for (const std::size_t n : options.sizes) {
    if (n <= kLargestDefault && (!chosen || n > *chosen)) chosen = n;
  }
  if (!chosen && !options.sizes.empty()) {
    chosen = *std::min_element(options.sizes.begin(), options.sizes.end());
  }
  return chosen ? std::vector<std::size_t>{*chosen} : std::vector<std::size_t>{};
}

// The suite's place in its steps, for the progress line.
struct SuiteProgress {
  ProgressSink& sink;
  std::size_t total = 0;
  std::size_t step = 0;

  void say(const std::string& what) const { sink.update(step, total, what); }
};

// What every measurement of one suite shares.
struct Measurement {
  const SuiteContext& context;
  const SuiteOptions& options;
  SuiteMode mode;
  const std::vector<std::size_t>& counter_sizes;
  const RunPlan* plan;  // null: no budget
  std::chrono::steady_clock::time_point started;
  SuiteProgress& progress;
  // Seconds of one evaluation at the last size each implementation ran, to predict the next.
  std::map<std::string, std::pair<std::size_t, double>> last_evaluation = {};
  // The planned measurements taken so far: their estimates, and what they took.
  double estimated_so_far = 0, took_so_far = 0;
  // What the measurements so far took over their estimates, once enough was measured to tell.
  double pace() const {
    constexpr double kEnoughToTell = 5;
    return estimated_so_far >= kEnoughToTell ? took_so_far / estimated_so_far : 1;
  }
};

// The bodies as a formulation of one precision sees them, and their float64 accelerations.
using Reference = std::pair<std::vector<Body<double>>, std::vector<Vec3<double>>>;

// One size's bodies and the float64 references computed on them, one per precision, as needed.
struct SizeInputs {
  const Snapshot& snapshot;
  const InputRecord& input;
  std::vector<std::uint32_t> targets;
  const ReferenceCache& cache;
  std::map<Precision, Reference> references = {};
};

// The record's identity, before anything is measured.
ResultRecord new_record(const Implementation& impl, const SizeInputs& inputs,
                        const ExecutionOptions& execution) {
  const ImplementationInfo& info = impl.info;
  const std::size_t n = inputs.snapshot.bodies.size();
  ResultRecord record;
  record.implementation = info.name;
  record.initial_condition = inputs.input.initial_condition;
  record.n = n;
  record.input_hash =
      info.precision == Precision::f32 ? inputs.input.hash_f32 : inputs.input.hash_f64;
  if (info.algorithm == Algorithm::all_pairs) {
    record.interactions_credited = static_cast<double>(n) * static_cast<double>(n);
    record.pairs_evaluated = pairs_evaluated(info.pairs, n);
  }
  record.threads = impl.threads_used(execution);
  return record;
}

// Why this measurement is not taken: unavailable, over its size limit, left out by the plan, or
// predicted (from its last evaluation, or a probe) to take longer than --max-eval-seconds.
std::optional<std::string> why_skip(Measurement& m, const Implementation& impl,
                                    const SizeInputs& inputs, ResultRecord& record,
                                    const std::string& label) {
  const std::string& name = impl.info.name;
  const std::size_t n = record.n;
  std::optional<std::string> skip = impl.cannot_run(n, m.options.execution);
  if (!skip && m.plan) skip = m.plan->left_out(name, n);
  if (!skip && m.plan) {
    const auto reference = inputs.references.find(impl.info.precision);
    const bool reference_pending =
        reference == inputs.references.end() || reference->second.first.empty();
    skip = m.plan->no_longer_fits(name, n, m.context.ceilings_seconds + seconds_since(m.started),
                                  m.pace(), reference_pending);
  }
  if (skip) return skip;
  if (!m.last_evaluation.contains(name) && n > kFirstProbeSize) {
    m.progress.say(label + ": estimating its time");
    const PhaseTimer timer(record.phase_seconds, "probe");
    if (auto probe = probe_evaluation_time(impl, m.options, n)) m.last_evaluation[name] = *probe;
  }
  if (const auto it = m.last_evaluation.find(name); it != m.last_evaluation.end()) {
    const double predicted =
        seconds_scaled_to(impl.info.algorithm, n, it->second.first, it->second.second);
    if (predicted > m.options.max_eval_seconds) {
      return fmt::format("one evaluation would take about {:.3g} s, over --max-eval-seconds {}",
                         predicted, m.options.max_eval_seconds);
    }
  }
  return std::nullopt;
}

// The float64 reference for the formulation's precision at this size, computed (or read from the
// cache) the first time a formulation of that precision asks.
const Reference& reference_for(Measurement& m, SizeInputs& inputs, Precision precision,
                               ResultRecord& record) {
  auto& reference = inputs.references[precision];
  if (reference.first.empty()) {
    m.progress.say(fmt::format("float64 reference N={}", format_size(record.n)));
    const PhaseTimer timer(record.phase_seconds, "reference");
    reference.first = as_seen_by(precision, inputs.snapshot.bodies);
    reference.second =
        inputs.cache.get_or_compute(reference.first, m.options.softening, inputs.targets);
  }
  return reference;
}

// Validates the prepared run against the reference; returns the seconds of that first, untimed
// evaluation (it doubles as the first warm-up).
double validate(PreparedRun& run, const ImplementationInfo& info, const Reference& reference,
                const std::vector<std::uint32_t>& targets, ResultRecord& record) {
  const double first_seconds = run.evaluate(PreparedRun::Scope::kernel).kernel;
  record.details = run.details();
  if (const auto counted = run.tree_interactions()) {
    record.tree_work = TreeWork{.body_body = counted->body_body,
                                .body_cell = counted->body_cell,
                                .build = std::nullopt,
                                .costs = counted->costs};
    record.pairs_evaluated = record.tree_work->interactions();
  }
  const std::size_t n = record.n;
  AccuracyRecord accuracy;
  accuracy.metrics =
      compare_with_reference(run.accelerations(), reference.second, targets, reference.first);
  accuracy.relative_l2_bound = info.tolerance.relative_l2_bound(n);
  accuracy.max_relative_bound = info.tolerance.max_relative_bound(n);
  accuracy.sampled = targets.size() < n;
  accuracy.passed = info.tolerance.accepts(accuracy.metrics, n);
  record.accuracy = accuracy;
  return first_seconds;
}

// Times the prepared run: on the GPU one end-to-end timing gives both figures (the kernel's own
// events sit inside it), the kernel timed alone again where it is too short to read so; on the CPU
// the kernel, with the all-gather where the run is decomposed over ranks.
void time_record(const Measurement& m, PreparedRun& run, const ImplementationInfo& info,
                 double first_seconds, ResultRecord& record) {
  const PhaseTimer timer(record.phase_seconds, "timing");
  RepetitionSettings timing = m.options.timing;
  // Where the validation evaluation alone lasted the warm-up time, it was the warm-up.
  if (first_seconds >= timing.warmup_s) timing.warmup_s = 0;
  const std::size_t n = record.n;
  const GpuObservation* observation = &m.context.gpu_observation;
  const EnergyObservation energy =
      m.context.energy ? m.context.energy->observe(info.device) : EnergyObservation{};
  // The repetitions span enough of the energy counter's updates to resolve their energy.
  timing.min_time_s = timing_min_time_s(m.options, info.device);
  if (info.device == DeviceKind::gpu) {
    const Timings timings =
        time_repetitions(run, PreparedRun::Scope::end_to_end, n, timing, observation, &energy);
    record.kernel = timings.kernel;
    record.end_to_end = timings.total;
    record.communication = timings.communication;
    if (timings.kernel.median_s < m.options.separate_kernel_timing_below_s) {
      // The end-to-end timing read the energy of these evaluations; the kernel alone keeps
      // --min-time and reads none (energy_figure takes the end-to-end's, copies included).
      RepetitionSettings kernel_alone = timing;
      kernel_alone.min_time_s = m.options.timing.min_time_s;
      record.kernel =
          time_repetitions(run, PreparedRun::Scope::kernel, n, kernel_alone, observation).kernel;
    }
    if (record.tree_work) record.tree_work->build = timings.tree_build;
  } else {
    const Timings timings =
        time_repetitions(run, PreparedRun::Scope::kernel, n, timing, nullptr, &energy);
    record.kernel = timings.kernel;
    if (timings.communication) {  // decomposed over ranks: the all-gather included
      record.end_to_end = timings.total;
      record.communication = timings.communication;
    }
    if (record.tree_work) record.tree_work->build = timings.tree_build;
  }
  // A tree is credited no interactions, and has no rates: its figure is its time (FAIRNESS 9).
  if (record.interactions_credited == 0) return;
  record.kernel_rate = rates(*record.kernel, record.interactions_credited);
  if (record.end_to_end)
    record.end_to_end_rate = rates(*record.end_to_end, record.interactions_credited);
}

// Hardware counters at the sizes chosen for them, from the first source that applies; or why none
// were read.
void count(const Measurement& m, PreparedRun& run, const ImplementationInfo& info,
           ResultRecord& record, const std::string& label) {
  const std::vector<std::size_t>& sizes = m.counter_sizes;
  const bool counter_size = std::find(sizes.begin(), sizes.end(), record.n) != sizes.end();
  if (info.algorithm != Algorithm::all_pairs) {
    // The counters' figures are per credited interaction, and a tree is credited none: its
    // walk and build are held against the bounds its formulation states (tree_work.costs), which
    // the reports divide by the ceilings. Said where an all-pairs result would have read them.
    if (m.options.counters && counter_size) {
      record.counters =
          CounterReadout{.source = "none",
                         .unavailable_reason =
                             "read for the all-pairs kernels only: a tree's figures would be "
                             "per interaction, and a tree is credited none (its walk and build "
                             "are held against their own bounds instead)",
                         .metrics = {},
                         .derived = {}};
    }
    return;
  }
  if (m.options.counters && counter_size) {
    for (const std::unique_ptr<CounterSource>& source : m.context.counter_sources) {
      if (!source->applies_to(info)) continue;
      m.progress.say(label + ": counters");
      const PhaseTimer timer(record.phase_seconds, "counters");
      record.counters = source->read(run, info, record.n, m.context.ceilings.value_or(Ceilings{}));
      break;
    }
  } else if (!m.options.counters) {
    record.counters = CounterReadout{
        .source = "none",
        .unavailable_reason = m.context.decomposition ? "not read in runs decomposed over ranks"
                                                      : "disabled by --no-counters",
        .metrics = {},
        .derived = {}};
  }
}

// One (implementation, N): skipped with its reason, or validated, then timed and counted in a
// run. Empty where an interruption stopped it midway.
std::optional<ResultRecord> measure(Measurement& m, const Implementation& impl,
                                    SizeInputs& inputs) {
  const ImplementationInfo& info = impl.info;
  ResultRecord record = new_record(impl, inputs, m.options.execution);
  const std::string label = fmt::format("{} N={}", info.name, format_size(record.n));
  if (const auto skip = why_skip(m, impl, inputs, record, label)) {
    record.status = Status::skipped;
    record.reason = *skip;
    m.progress.say(label + ": skipped");
    return record;
  }
  try {
    const Reference& reference = reference_for(m, inputs, info.precision, record);
    m.progress.say(label + ": validating");
    std::optional<PhaseTimer> validation(std::in_place, record.phase_seconds, "validation");
    std::unique_ptr<PreparedRun> run =
        impl.prepare(inputs.snapshot.bodies, m.options.softening, m.options.execution);
    const double first_seconds = validate(*run, info, reference, inputs.targets, record);
    validation.reset();
    m.last_evaluation[info.name] = {record.n, first_seconds};
    if (!record.accuracy->passed) {
      record.status = Status::failed;
      record.reason = describe_failure(*record.accuracy);
      return record;
    }
    record.status = Status::ok;
    if (m.mode == SuiteMode::validate) return record;
    m.progress.say(label + ": timing");
    time_record(m, *run, info, first_seconds, record);
    m.last_evaluation[info.name] = {record.n, record.kernel->median_s};
    count(m, *run, info, record, label);
  } catch (const std::exception& e) {
    if (interrupt_requested()) return std::nullopt;
    record.status = Status::failed;
    record.reason = e.what();
  }
  return record;
}

}  // namespace

bool selects_usable_gpu(std::span<const Implementation* const> selected) {
  return std::any_of(selected.begin(), selected.end(), [](const Implementation* i) {
    return i->info.device == DeviceKind::gpu && !i->unavailable_reason();
  });
}

double timing_min_time_s(const SuiteOptions& options, DeviceKind device) {
  const auto span = options.energy_span_s.find(device);
  if (span == options.energy_span_s.end()) return options.timing.min_time_s;
  return std::max(options.timing.min_time_s,
                  span->second / std::max(1, options.timing.repetitions));
}

const EnergyMeterRecord& EnergyMeters::run_record(DeviceKind device) const {
  if (across_processes) {
    return device == DeviceKind::gpu ? across_processes->gpu : across_processes->cpu;
  }
  return device == DeviceKind::gpu ? gpu.record : cpu.record;
}

EnergyObservation EnergyMeters::observe(DeviceKind device) const {
  const DeviceEnergy& energy = device == DeviceKind::gpu ? gpu : cpu;
  if (!run_record(device).available || !energy.record.available) return {};
  EnergyObservation observation{.meter = energy.meter.get(), .record = &energy.record};
  if (across_processes) {
    observation.sum_over_processes = across_processes->sum;
    observation.all_opened = across_processes->all_opened;
  }
  return observation;
}

std::vector<EnergyMeterRecord> EnergyMeters::records(bool with_gpu) const {
  std::vector<EnergyMeterRecord> kept{run_record(DeviceKind::cpu)};
  if (with_gpu) kept.push_back(run_record(DeviceKind::gpu));
  return kept;
}

double energy_span_s(const EnergyMeters& meters, DeviceKind device) {
  const EnergyMeterRecord& record = meters.run_record(device);
  if (!record.available) return 0;
  return kMinEnergyPeriods * record.update_period_s;
}

std::unique_ptr<ProgressSink> make_stderr_progress() {
  return std::make_unique<StderrProgress>();
}
std::unique_ptr<ProgressSink> make_silent_progress() {
  return std::make_unique<SilentProgress>();
}

std::vector<std::size_t> default_sizes(std::span<const Implementation* const> selected,
                                       const ExecutionOptions&) {
  const std::size_t largest = selects_usable_gpu(selected) ? (1u << 20) : (1u << 16);
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1024; n <= largest; n *= 4) sizes.push_back(n);
  return sizes;
}

void check_memory(std::span<const Implementation* const> selected, std::size_t n) {
  // The generated snapshot (bodies and velocities), the rounded copy the reference sees, and the
  // formulation's own buffers.
  std::size_t per_body = sizeof(Body<double>) * 2 + sizeof(Vec3<double>) * 2;
  std::size_t largest_impl = 0;
  for (const Implementation* impl : selected)
    largest_impl = std::max(largest_impl, impl->info.bytes_per_body);
  per_body += largest_impl;
  const std::uint64_t available = available_memory_bytes();
  if (available != 0 && static_cast<double>(n) * static_cast<double>(per_body) >
                            0.8 * static_cast<double>(available)) {
    throw UsageError(
        fmt::format("N = {} needs about {:.1f} GiB but only {:.1f} GiB of memory is available", n,
                    static_cast<double>(n) * static_cast<double>(per_body) / (1u << 30),
                    static_cast<double>(available) / (1u << 30)));
  }
}

ResultsDocument make_document(const SuiteContext& context, const SuiteOptions& options,
                              SuiteMode mode, std::span<const Implementation* const> selected) {
  ResultsDocument doc;
  doc.generated_at = utc_timestamp();
  doc.command_line = options.command_line;
  doc.machine = describe_machine();
  doc.build = describe_build();
  doc.ceilings = context.ceilings;
  RunSettings& s = doc.settings;
  s.command = mode == SuiteMode::run ? "run" : "validate";
  s.initial_condition = std::string(to_string(options.initial_condition));
  s.seed = options.seed;
  s.softening = options.softening;
  s.sizes = options.sizes;
  s.implementation_pattern = options.implementation_pattern;
  s.repetitions = options.timing.repetitions;
  s.min_time_s = options.timing.min_time_s;
  s.warmup_s = options.timing.warmup_s;
  s.separate_kernel_timing_below_s = options.separate_kernel_timing_below_s;
  s.max_eval_seconds = options.max_eval_seconds;
  s.validation_bodies = options.validation_bodies;
  s.counters = options.counters;
  s.threads = options.execution.threads;
  s.isa = options.execution.isa;
  s.gpu_device = options.execution.gpu_device;
  s.gpu_devices = options.execution.gpu_devices;
  s.ranks = context.decomposition ? context.decomposition->ranks : 1;
  s.decomposition = context.decomposition ? context.decomposition->scheme : "none";
  if (context.decomposition) {
    s.rank_hosts = context.decomposition->hosts;
    if (s.ranks > 1) s.gpu_exchange = context.decomposition->gpu_exchange;
  }
  doc.machine.gpus = context.gpus;
  if (context.energy) doc.energy = context.energy->records(selects_usable_gpu(selected));
  for (const Implementation* impl : selected) {
    doc.implementations.push_back(describe(*impl, options.execution));
    if (impl->info.theta &&
        std::find(s.thetas.begin(), s.thetas.end(), *impl->info.theta) == s.thetas.end()) {
      s.thetas.push_back(*impl->info.theta);
    }
  }
  return doc;
}

ResultsDocument run_suite(const SuiteContext& context, const SuiteOptions& options,
                          SuiteMode mode) {
  const auto started = std::chrono::steady_clock::now();
  const std::vector<const Implementation*> selected =
      context.registry.select(options.implementation_pattern);
  SuiteOptions effective = options;
  if (effective.sizes.empty()) effective.sizes = default_sizes(selected, options.execution);
  for (const std::size_t n : effective.sizes) check_memory(selected, n);

  const std::vector<std::size_t> counter_sizes = sizes_with_counters(effective);
  ResultsDocument doc = make_document(context, effective, mode, selected);
  doc.settings.counter_sizes = counter_sizes;
  const ReferenceCache cache(options.reference_cache ? ReferenceCache::default_directory()
                                                     : std::filesystem::path{});
  SuiteProgress progress{.sink = context.progress,
                         .total = effective.sizes.size() * selected.size()};
  const std::optional<RunPlan> plan =
      mode == SuiteMode::run
          ? plan_within_budget(context, effective, selected, counter_sizes,
                               budget_of(options, selected, context.decomposition.has_value()), doc)
          : std::nullopt;
  Measurement measurement{.context = context,
                          .options = options,
                          .mode = mode,
                          .counter_sizes = counter_sizes,
                          .plan = plan ? &*plan : nullptr,
                          .started = started,
                          .progress = progress};
  if (plan) {
    for (const auto& [name, estimate] : plan->estimates)
      measurement.last_evaluation[name] = estimate;
  }
  bool interrupted = false;
  double planned_ran = 0;  // the plan's estimate of what ran
  for (const std::size_t n : effective.sizes) {
    if (interrupted) break;
    if (plan && plan->size_costs_s.contains(n)) planned_ran += plan->size_costs_s.at(n);
    const Snapshot snapshot = make_initial_condition(options.initial_condition, n, options.seed);
    const InputRecord input{
        std::string(to_string(options.initial_condition)), n, options.seed,
        hash_to_hex(input_hash(snapshot.bodies)),
        hash_to_hex(input_hash(convert_precision<float, double>(snapshot.bodies)))};
    doc.inputs.push_back(input);
    SizeInputs inputs{.snapshot = snapshot,
                      .input = input,
                      .targets = validation_targets(n, options.validation_bodies),
                      .cache = cache};
    for (const Implementation* impl : selected) {
      if (interrupt_requested()) {
        interrupted = true;
        break;
      }
      ++progress.step;
      std::optional<ResultRecord> record = measure(measurement, *impl, inputs);
      if (!record) {  // interrupted mid-measurement: nothing of it is kept
        interrupted = true;
        break;
      }
      const PlannedMeasurement* planned = plan ? plan->find(record->implementation, n) : nullptr;
      if (planned && record->status != Status::skipped) {
        planned_ran += planned->estimated_s;
        measurement.estimated_so_far += planned->estimated_s;
        for (const auto& [phase, seconds] : record->phase_seconds) {
          if (phase != "reference" && phase != "probe") measurement.took_so_far += seconds;
        }
      }
      doc.results.push_back(std::move(*record));
      if (context.checkpoint) context.checkpoint(doc);
    }
  }
  if (plan) doc.phase_seconds["planned_ran"] = planned_ran;
  context.progress.finish();
  doc.interrupted = interrupted || interrupt_requested();
  doc.complete = !doc.interrupted;
  doc.phase_seconds["ceilings"] = context.ceilings_seconds;
  doc.phase_seconds["measurements"] = seconds_since(started);
  if (context.checkpoint) context.checkpoint(doc);
  return doc;
}

}  // namespace nbody
